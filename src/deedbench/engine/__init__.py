"""The engine: records, tools, the episode loop, the runner and the run store.

It knows no benchmark; benchmarks build on it.
"""

from deedbench.engine.benchmark import Benchmark, BenchmarkError
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
from deedbench.engine.messages import Message, ToolCall, Usage
from deedbench.engine.records import EpisodeRecord, RunConfig
from deedbench.engine.runner import new_run_config, run
from deedbench.engine.sample import EpisodeKey, Sample, episode_seed
from deedbench.engine.secrets import redact, register_secret
from deedbench.engine.store import RunStore, StoreError
from deedbench.engine.tools import Tool, ToolBox, ToolError, TurnOutcome, tool
from deedbench.engine.workers import WorkerBuild, run_in_processes

__all__ = [
    "Agent",
    "AgentContext",
    "Benchmark",
    "BenchmarkError",
    "ContextExceeded",
    "EpisodeKey",
    "EpisodeRecord",
    "EpisodeSetup",
    "EpisodeTranscript",
    "InfrastructureError",
    "Message",
    "RunAborted",
    "RunConfig",
    "RunStore",
    "Sample",
    "StoreError",
    "Termination",
    "Tool",
    "ToolBox",
    "ToolCall",
    "ToolError",
    "TurnOutcome",
    "Usage",
    "User",
    "WorkerBuild",
    "episode_seed",
    "gather_or_abort",
    "new_run_config",
    "redact",
    "register_secret",
    "run",
    "run_episode",
    "run_in_processes",
    "tool",
]
