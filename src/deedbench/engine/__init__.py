"""The engine: tools, the episode loop, the `Benchmark` interface, planning and resuming a
run, the run's driver, its executors and the run store.

It knows no benchmark; benchmarks build on it. The records it runs on (messages,
samples, scores, run and episode records) live in `deedbench.records` and the errors in
`deedbench.errors`; the names most used with the engine are exported here too.
"""

from deedbench.engine.agent import Agent, AgentContext, User
from deedbench.engine.benchmark import Benchmark, Check, Option, Scorer
from deedbench.engine.cache import CacheEntry, EpisodeCache
from deedbench.engine.concurrency import gather_or_abort
from deedbench.engine.episode import EpisodeSetup, EpisodeTranscript, run_episode
from deedbench.engine.executor import (
    Built,
    EpisodeJob,
    Executor,
    InProcessExecutor,
    Recipe,
)
from deedbench.engine.half_duplex import HalfDuplex
from deedbench.engine.launch import Launch, run
from deedbench.engine.planning import new_run_config, plan_run, resume_run
from deedbench.engine.store import RunStore
from deedbench.engine.tools import Tool, ToolBox, ToolKind, TurnOutcome, tool
from deedbench.engine.workers import ProcessExecutor
from deedbench.errors import (
    BenchmarkError,
    ContextExceeded,
    ExecutorError,
    InfrastructureError,
    PlanError,
    ResumeError,
    RunAborted,
    StoreError,
    StoreFormatError,
    ToolError,
)
from deedbench.records import (
    EpisodeKey,
    EpisodeRecord,
    Message,
    RunConfig,
    Sample,
    Termination,
    ToolCall,
    Usage,
    episode_seed,
)
from deedbench.secrets import redact, register_secret

__all__ = [
    "Agent",
    "AgentContext",
    "Benchmark",
    "BenchmarkError",
    "Built",
    "CacheEntry",
    "Check",
    "ContextExceeded",
    "EpisodeCache",
    "EpisodeJob",
    "EpisodeKey",
    "EpisodeRecord",
    "EpisodeSetup",
    "EpisodeTranscript",
    "Executor",
    "ExecutorError",
    "HalfDuplex",
    "InProcessExecutor",
    "InfrastructureError",
    "Launch",
    "Message",
    "Option",
    "PlanError",
    "ProcessExecutor",
    "Recipe",
    "ResumeError",
    "RunAborted",
    "RunConfig",
    "RunStore",
    "Sample",
    "Scorer",
    "StoreError",
    "StoreFormatError",
    "Termination",
    "Tool",
    "ToolBox",
    "ToolCall",
    "ToolError",
    "ToolKind",
    "TurnOutcome",
    "Usage",
    "User",
    "episode_seed",
    "gather_or_abort",
    "new_run_config",
    "plan_run",
    "redact",
    "register_secret",
    "resume_run",
    "run",
    "run_episode",
    "tool",
]
