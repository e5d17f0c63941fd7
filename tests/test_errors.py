"""The errors module: one base, the hierarchy its docstring draws, and the CLI catching it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import deedbench.agents
import deedbench.engine
import deedbench.errors as errors
from deedbench.cli.main import app


def drawn_parents() -> dict[str, str]:
    """Each class the docstring draws, with the class it is drawn under."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        match = re.match(r"^( *)\* (\w+)", line)
        if match is None:
            continue
        depth, name = len(match.group(1)), match.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((depth, name))
    return parents


def test_the_docstring_draws_every_class_under_its_real_base() -> None:
    drawn = drawn_parents()
    assert sorted([*drawn, "DeedbenchError"]) == sorted(errors.__all__)
    for name, parent in drawn.items():
        cls = getattr(errors, name)
        ours = [b.__name__ for b in cls.__bases__ if issubclass(b, errors.DeedbenchError)]
        assert ours == [parent], name


@pytest.mark.parametrize("name", errors.__all__)
def test_every_error_is_a_deedbench_error(name: str) -> None:
    assert issubclass(getattr(errors, name), errors.DeedbenchError)


def test_refinements_stay_catchable_as_the_builtins_they_refine() -> None:
    assert issubclass(errors.PlanError, ValueError)
    assert issubclass(errors.InspectNotInstalled, ImportError)
    assert issubclass(errors.ExecutorError, RuntimeError)
    assert issubclass(errors.JudgeReplyError, ValueError)


def test_an_error_has_one_home() -> None:
    """The engine and the agents raise errors of `deedbench.errors` but do not list them:
    an old path (`from deedbench.engine import StoreError`) still reaches the one class,
    for a release, warning that its home is `deedbench.errors` (tests/test_deprecated_paths)."""
    for package, names in (
        (
            deedbench.engine,
            ("BenchmarkError", "PlanError", "StoreError", "RunAborted", "ToolError"),
        ),
        (deedbench.agents, ("TransientError", "AgentSpecError")),
    ):
        for name in names:
            assert name not in package.__all__ and name not in vars(package), name
            with pytest.warns(DeprecationWarning, match="import it from deedbench.errors"):
                assert getattr(package, name) is getattr(errors, name)


def test_the_cli_turns_an_unhandled_deedbench_error_into_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    """`report` leaves the store's StoreError to the command group."""
    store = tmp_path / "runs.db"
    deedbench.engine.RunStore(store).close()
    result = CliRunner().invoke(app, ["report", "nosuch", "--store", str(store)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: no run 'nosuch' in {store} (latest runs: none)"
    ]
    assert "Traceback" not in result.output
