"""The public API, name by name: the face (`import deedbench`), the engine and the agents.
Changing it should be a deliberate act (tests/test_exported_names.py checks every
package's __all__)."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import import_module
from pathlib import Path
from types import FunctionType

import pytest

FACE = [
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

ENGINE_API = [
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

AGENTS_API = [
    "A2AAgent",
    "AdaptiveLimiter",
    "CallLimits",
    "FunctionAgent",
    "Limiter",
    "ModelAgent",
    "ModelChoice",
    "Providers",
    "ROLES",
    "ResponseCache",
    "Role",
    "SharedLimits",
    "agent_kinds",
    "is_model_spec",
    "resolve_agent",
    "role_settings",
    "settings_for",
]


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from deedbench.engine import *", namespace)
    namespace.pop("__builtins__")
    assert sorted(namespace) == ENGINE_API


def test_engine_api() -> None:
    import deedbench.engine

    assert sorted(deedbench.engine.__all__) == ENGINE_API


def test_agents_api() -> None:
    import deedbench.agents

    assert sorted(deedbench.agents.__all__) == AGENTS_API


def test_every_name_has_one_home() -> None:
    """No package lists a class or function of another package: a name is imported from
    where it is defined (the face, `deedbench`, is the one place that gathers them)."""
    import pkgutil

    import deedbench

    packages = [m.name for m in pkgutil.walk_packages(deedbench.__path__, "deedbench.") if m.ispkg]
    assert "deedbench.engine" in packages and "deedbench.benchmarks.tau2" in packages
    elsewhere = []
    for name in packages:
        package = import_module(name)
        for item in package.__all__:
            value = getattr(package, item)
            home = str(getattr(value, "__module__", ""))
            inside = home == name or home.startswith(f"{name}.")
            if isinstance(value, type | FunctionType) and not inside:
                elsewhere.append(f"{name}.{item} (from {home})")
    assert elsewhere == []


def test_names_kept_for_a_release_are_no_part_of_a_package() -> None:
    """The old paths a package keeps importable (its `_MOVED`, each with a warning) are
    not its names: none is in its `__all__` or its namespace, and each is listed by the
    home it names, so the one-home rule above still holds for everything listed."""
    import pkgutil

    import deedbench

    packages = [m.name for m in pkgutil.walk_packages(deedbench.__path__, "deedbench.") if m.ispkg]
    kept = {
        name: import_module(name)._MOVED
        for name in packages
        if hasattr(import_module(name), "_MOVED")
    }
    assert sorted(kept) == [
        "deedbench.agents",
        "deedbench.engine",
        "deedbench.interop",
        "deedbench.scoring",
    ]
    for name, moved in kept.items():
        package = import_module(name)
        for item, home in moved.items():
            assert item not in package.__all__ and item not in vars(package), f"{name}.{item}"
            assert item in import_module(home).__all__, f"{home} does not list {item}"


def test_version_matches_installed_metadata() -> None:
    """`deedbench.__version__` and pyproject's version must not drift apart."""
    from importlib.metadata import version

    import deedbench

    assert deedbench.__version__ == version("deedbench")


def test_the_face_is_its_names_each_the_object_of_its_home() -> None:
    import deedbench

    assert sorted(deedbench.__all__) == FACE
    homes = deedbench._HOMES
    assert sorted([*homes, "__version__"]) == FACE
    for name, home in homes.items():
        assert getattr(deedbench, name) is getattr(import_module(home), name), name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        deedbench.nothing  # noqa: B018


def test_the_face_tells_type_checkers_what_it_loads() -> None:
    """The imports under TYPE_CHECKING (what mypy and editors read) name the same homes as
    the table the face loads from at run time."""
    import deedbench

    source = Path(deedbench.__file__).read_text(encoding="utf-8")
    [block] = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    declared = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert declared == deedbench._HOMES


def test_importing_deedbench_loads_no_layer() -> None:
    """`import deedbench` (which every CLI command does first) loads only the version;
    a name of the face loads its home when first asked for."""
    code = (
        "import sys, deedbench\n"
        "before = sorted(m for m in sys.modules if m.startswith('deedbench'))\n"
        "deedbench.RunStore\n"
        "print(before, 'deedbench.engine' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['deedbench', 'deedbench.version'] True"
