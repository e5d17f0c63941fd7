"""Import paths that moved keep working for a release, each with a DeprecationWarning that
names the new home (issue 39).

`OLD_FACES` is what `deedbench.engine`, `deedbench.agents`, `deedbench.scoring` and
`deedbench.interop` listed in `__all__` at 4ce4b4d^, the release before every name got one
home (issue 27): user code written against it, such as a custom agent's
``from deedbench.engine import Message, ToolCall``, must still import. The lists are
copied here, not read from git, so the test runs in any checkout.
"""

from __future__ import annotations

import re
import warnings
from importlib import import_module

import pytest

OLD_FACES: dict[str, list[str]] = {
    "deedbench.engine": [
        "Agent", "AgentContext", "Benchmark", "BenchmarkError", "Built", "CacheEntry", "Check",
        "ContextExceeded", "EpisodeCache", "EpisodeJob", "EpisodeKey", "EpisodeRecord",
        "EpisodeSetup", "EpisodeTranscript", "Executor", "ExecutorError", "HalfDuplex",
        "InProcessExecutor", "InfrastructureError", "Launch", "Message", "Option", "PlanError",
        "ProcessExecutor", "Recipe", "ResumeError", "RunAborted", "RunConfig", "RunStore",
        "Sample", "Scorer", "StoreError", "StoreFormatError", "Termination", "Tool", "ToolBox",
        "ToolCall", "ToolError", "ToolKind", "TurnOutcome", "Usage", "User", "episode_seed",
        "gather_or_abort", "new_run_config", "plan_run", "redact", "register_secret",
        "resume_run", "run", "run_episode", "tool",
    ],
    "deedbench.agents": [
        "AdaptiveLimiter", "Agent", "AgentContext", "AgentSettings", "AgentSpecError",
        "CallLimits", "FunctionAgent", "GenerationParams", "Limiter", "ModelAgent", "Providers",
        "ResponseCache", "RetryPolicy", "SharedLimits", "TransientError", "agent_kinds",
        "is_model_spec", "resolve_agent", "settings_for",
    ],
    "deedbench.scoring": [
        "NO_CHOICE", "Evidence", "MetricSpec", "OverlayState", "ProcedureSpec", "ReportSpec",
        "Score", "Violation", "canonical", "check_procedure", "diff", "records_equal_tau",
        "tau_hash", "to_hashable", "worlds_diff", "worlds_equal_canonical", "worlds_equal_tau",
    ],
    "deedbench.interop": ["INSTALL_HINT", "InspectNotInstalled", "require_inspect"],
}  # fmt: skip

# Names that left a module when it was split (issue 39), and their homes now.
SPLIT: dict[str, dict[str, str]] = {
    "deedbench.reports.terminal": dict.fromkeys(
        ["KEEP", "TablePrinter", "new_table", "print_command", "print_table", "say"],
        "deedbench.reports.tables",
    ),
    "deedbench.interop.tau2_export": {
        "LEADERBOARD_BENCHMARKS": "deedbench.interop.tau2_rules",
        "MIN_TRIALS": "deedbench.interop.tau2_rules",
        "DomainFigures": "deedbench.interop.tau2_figures",
        "tau2_figures": "deedbench.interop.tau2_figures",
    },
    "deedbench.benchmarks.airline.rules": dict.fromkeys(
        ["CANCELLED_FLIGHT_PER_PASSENGER", "COMPENSATION", "DELAYED_FLIGHT_PER_PASSENGER"],
        "deedbench.benchmarks.airline.compensation",
    ),
}

_HOME = re.compile(r"import it from (deedbench[\w.]*)")


def _imported(package: str, name: str) -> tuple[object, list[warnings.WarningMessage]]:
    """`from package import name`, as user code writes it, with the warnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        namespace: dict[str, object] = {}
        exec(f"from {package} import {name}", namespace)
    return namespace[name], [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize(
    ("package", "name"), [(p, n) for p, names in OLD_FACES.items() for n in names]
)
def test_every_name_imports_from_its_home_of_the_previous_release(package: str, name: str) -> None:
    value, deprecated = _imported(package, name)
    if name in import_module(package).__all__:  # still listed here: no warning
        assert deprecated == []
        return
    # the same warning (Python's import asks a package twice: once to see whether the name
    # is a submodule), which the default filter shows once
    assert deprecated and len({str(w.message) for w in deprecated}) == 1
    warning = deprecated[0]
    text = str(warning.message)
    found = _HOME.search(text)
    assert found is not None and f"{name} from {package}" in text, text
    home = import_module(found.group(1))
    assert name in home.__all__, f"{found.group(1)} does not list {name}"
    assert getattr(home, name) is value
    assert warning.filename == "<string>"  # points at the importing line, not deedbench


@pytest.mark.parametrize(
    ("module", "name", "home"),
    [(m, n, h) for m, names in SPLIT.items() for n, h in names.items()],
)
def test_names_of_a_split_module_import_from_it_with_a_warning(
    module: str, name: str, home: str
) -> None:
    value, [warning] = _imported(module, name)  # a module (no package) is asked once
    assert home in str(warning.message)
    assert value is getattr(import_module(home), name)
    assert name not in import_module(module).__all__


def test_a_custom_agent_written_for_the_previous_release_still_runs() -> None:
    """The README's custom agent of the previous release, word for word in its imports."""
    import asyncio

    with pytest.warns(DeprecationWarning, match="import it from deedbench.records"):
        from deedbench.engine import Message, ToolCall
    from deedbench.agents import FunctionAgent

    def next_turn(messages: object, tools: object, context: object) -> Message:
        return Message(
            role="assistant", tool_calls=[ToolCall(id="c1", name="look", arguments="{}")]
        )

    agent = FunctionAgent(next_turn)
    turn = asyncio.run(agent.next_turn([], [], None))  # type: ignore[arg-type]
    assert turn.tool_calls[0].name == "look"


def test_toolcall_is_on_the_face() -> None:
    import deedbench
    from deedbench.records import ToolCall

    assert deedbench.ToolCall is ToolCall and "ToolCall" in deedbench.__all__


def test_an_unknown_name_is_still_an_import_error() -> None:
    with pytest.raises(ImportError, match="cannot import name 'Nothing'"):
        exec("from deedbench.engine import Nothing", {})
