"""deedbench: judge AI agents by what they do, not what they say.

The Python face: the names a user of the library needs, each from its one home, loaded on
first use so that ``import deedbench`` (and every CLI command) stays light:

- a benchmark: `load_benchmark`, and the contract for writing one (`Benchmark`, `Option`,
  `Scorer`, `tool`, `ToolError`);
- agents: `FunctionAgent` (any ``next_turn`` function or object is one); a model in any
  role (agent, simulated user, judge): `ModelChoice`, made into a run's settings by
  `role_settings`;
- a run: `plan_run`, `resume_run`, then `run` in this process, or a `Launch` of a
  `RunRecipe` on an executor made by `executor_kind(name).for_run(Placement(...), ...)`;
- a study: `plan_study`, `run_study`;
- what is kept: `RunStore`, and the records it holds (`RunConfig`, `EpisodeRecord`,
  `Sample`, `Score`, `Message`, `ToolCall`); every deliberate error is a `DeedbenchError`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from deedbench.version import __version__

if TYPE_CHECKING:
    from deedbench.agents import FunctionAgent, ModelChoice, role_settings
    from deedbench.benchmarks import load_benchmark
    from deedbench.engine import (
        Benchmark,
        Launch,
        Option,
        RunStore,
        Scorer,
        plan_run,
        resume_run,
        run,
        tool,
    )
    from deedbench.errors import DeedbenchError, ToolError
    from deedbench.executors.kinds import Placement, executor_kind
    from deedbench.recipes import RunRecipe
    from deedbench.records import EpisodeRecord, Message, RunConfig, Sample, Score, ToolCall
    from deedbench.study import plan_study, run_study

# Each name of the face and the module it comes from (the same as the imports above,
# which type checkers read; tests/test_public_api.py checks that the two agree).
_HOMES = {
    "FunctionAgent": "deedbench.agents",
    "ModelChoice": "deedbench.agents",
    "role_settings": "deedbench.agents",
    "load_benchmark": "deedbench.benchmarks",
    "Benchmark": "deedbench.engine",
    "Launch": "deedbench.engine",
    "Option": "deedbench.engine",
    "RunStore": "deedbench.engine",
    "Scorer": "deedbench.engine",
    "ToolError": "deedbench.errors",
    "plan_run": "deedbench.engine",
    "resume_run": "deedbench.engine",
    "run": "deedbench.engine",
    "tool": "deedbench.engine",
    "DeedbenchError": "deedbench.errors",
    "Placement": "deedbench.executors.kinds",
    "executor_kind": "deedbench.executors.kinds",
    "RunRecipe": "deedbench.recipes",
    "EpisodeRecord": "deedbench.records",
    "Message": "deedbench.records",
    "RunConfig": "deedbench.records",
    "Sample": "deedbench.records",
    "Score": "deedbench.records",
    "ToolCall": "deedbench.records",
    "plan_study": "deedbench.study",
    "run_study": "deedbench.study",
}

__all__ = [
    "Benchmark",
    "DeedbenchError",
    "EpisodeRecord",
    "FunctionAgent",
    "Launch",
    "Message",
    "ModelChoice",
    "Option",
    "Placement",
    "RunConfig",
    "RunRecipe",
    "RunStore",
    "Sample",
    "Score",
    "Scorer",
    "ToolCall",
    "ToolError",
    "__version__",
    "executor_kind",
    "load_benchmark",
    "plan_run",
    "plan_study",
    "resume_run",
    "role_settings",
    "run",
    "run_study",
    "tool",
]


def __getattr__(name: str) -> Any:
    """A name of the face, imported from its home the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'deedbench' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
