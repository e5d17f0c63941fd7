"""The engine: records, tools, the episode loop, the run's driver, its executors and the
run store.

It knows no benchmark; benchmarks build on it.
"""

from deedbench.engine.benchmark import Benchmark, BenchmarkError, Option, Scorer
from deedbench.engine.cache import CacheEntry, EpisodeCache
from deedbench.engine.episode import (
    Agent,
    AgentContext,
    ContextExceeded,
    EpisodeSetup,
    EpisodeTranscript,
    InfrastructureError,
    RunAborted,
    Termination,
    User,
    gather_or_abort,
    run_episode,
)
from deedbench.engine.executor import (
    Built,
    EpisodeJob,
    Executor,
    ExecutorError,
    InProcessExecutor,
    Recipe,
)
from deedbench.engine.messages import Message, ToolCall, Usage
from deedbench.engine.records import EpisodeRecord, PlanError, RunConfig
from deedbench.engine.runner import execute, new_run_config, run
from deedbench.engine.sample import EpisodeKey, Sample, episode_seed
from deedbench.engine.secrets import redact, register_secret
from deedbench.engine.store import RunStore, StoreError
from deedbench.engine.tools import Tool, ToolBox, ToolError, TurnOutcome, tool
from deedbench.engine.workers import ProcessExecutor

__all__ = [
    "Agent",
    "AgentContext",
    "Benchmark",
    "BenchmarkError",
    "Built",
    "CacheEntry",
    "ContextExceeded",
    "EpisodeCache",
    "EpisodeJob",
    "EpisodeKey",
    "EpisodeRecord",
    "EpisodeSetup",
    "EpisodeTranscript",
    "Executor",
    "ExecutorError",
    "InProcessExecutor",
    "InfrastructureError",
    "Message",
    "Option",
    "PlanError",
    "ProcessExecutor",
    "Recipe",
    "RunAborted",
    "RunConfig",
    "RunStore",
    "Sample",
    "Scorer",
    "StoreError",
    "Termination",
    "Tool",
    "ToolBox",
    "ToolCall",
    "ToolError",
    "TurnOutcome",
    "Usage",
    "User",
    "episode_seed",
    "execute",
    "gather_or_abort",
    "new_run_config",
    "redact",
    "register_secret",
    "run",
    "run_episode",
    "tool",
]
