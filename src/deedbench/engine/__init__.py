"""The engine: tools, the episode loop, the `Benchmark` interface, planning and resuming a
run, the run's driver, its executors and the run store.

It knows no benchmark; benchmarks build on it. The records it runs on (messages,
samples, scores, run and episode records) live in `deedbench.records`, the errors in
`deedbench.errors`, and each is imported from there: every name has one home. What only
deedbench's own layers use (the executor's jobs and built recipes, cached entries) is
imported from its module, not listed here.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

from deedbench.engine.agent import Agent, AgentContext, User
from deedbench.engine.benchmark import Benchmark, Check, Option, Scorer
from deedbench.engine.cache import EpisodeCache
from deedbench.engine.episode import EpisodeSetup, EpisodeTranscript, run_episode
from deedbench.engine.executor import Executor, InProcessExecutor, Recipe
from deedbench.engine.half_duplex import HalfDuplex
from deedbench.engine.launch import Launch, run
from deedbench.engine.planning import new_run_config, plan_run, resume_run
from deedbench.engine.store import RunStore
from deedbench.engine.tools import Tool, ToolBox, ToolKind, TurnOutcome, tool
from deedbench.engine.workers import ProcessExecutor

__all__ = [
    "Agent",
    "AgentContext",
    "Benchmark",
    "Check",
    "EpisodeCache",
    "EpisodeSetup",
    "EpisodeTranscript",
    "Executor",
    "HalfDuplex",
    "InProcessExecutor",
    "Launch",
    "Option",
    "ProcessExecutor",
    "Recipe",
    "RunStore",
    "Scorer",
    "Tool",
    "ToolBox",
    "ToolKind",
    "TurnOutcome",
    "User",
    "new_run_config",
    "plan_run",
    "resume_run",
    "run",
    "run_episode",
    "tool",
]


# Names this package listed before each name got one home (issue 27, commit 4ce4b4d),
# kept importable from here for a release: each warns, naming its home. Not in __all__.
_MOVED = {
    "BenchmarkError": "deedbench.errors",
    "Built": "deedbench.engine.executor",
    "CacheEntry": "deedbench.engine.cache",
    "ContextExceeded": "deedbench.errors",
    "EpisodeJob": "deedbench.engine.executor",
    "EpisodeKey": "deedbench.records",
    "EpisodeRecord": "deedbench.records",
    "ExecutorError": "deedbench.errors",
    "InfrastructureError": "deedbench.errors",
    "Message": "deedbench.records",
    "PlanError": "deedbench.errors",
    "ResumeError": "deedbench.errors",
    "RunAborted": "deedbench.errors",
    "RunConfig": "deedbench.records",
    "Sample": "deedbench.records",
    "StoreError": "deedbench.errors",
    "StoreFormatError": "deedbench.errors",
    "Termination": "deedbench.records",
    "ToolCall": "deedbench.records",
    "ToolError": "deedbench.errors",
    "Usage": "deedbench.records",
    "episode_seed": "deedbench.records",
    "gather_or_abort": "deedbench.engine.concurrency",
    "redact": "deedbench.secrets",
    "register_secret": "deedbench.secrets",
}


def __getattr__(name: str) -> Any:
    """A name that moved, from its home, with a DeprecationWarning naming that home."""
    home = _MOVED.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"importing {name} from {__name__} is deprecated: import it from {home}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(import_module(home), name)
