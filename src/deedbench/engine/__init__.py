"""The engine: tools, the episode loop, the `Benchmark` interface, planning and resuming a
run, the run's driver, its executors and the run store.

It knows no benchmark; benchmarks build on it. The records it runs on (messages,
samples, scores, run and episode records) live in `deedbench.records`, the errors in
`deedbench.errors`, and each is imported from there: every name has one home. What only
deedbench's own layers use (the executor's jobs and built recipes, cached entries) is
imported from its module, not listed here.
"""

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
