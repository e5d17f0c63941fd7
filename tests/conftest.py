"""Shared test settings: property tests are derandomized so CI runs are repeatable;
tests marked `realmodel` (a real model server, minutes per run) run only when asked;
tests marked `reference(GROUP)` need ../shared (`_shared.py`: skipped with one summary
line where it is absent, failed where it is present but cannot run); the tests under
tests/browser/ are marked `browser`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.testing
from hypothesis import settings

import _shared

settings.register_profile("deedbench", derandomize=True, deadline=None)
settings.load_profile("deedbench")


def _command_once(build: Callable[[typer.Typer], Any]) -> Callable[[typer.Typer], Any]:
    """typer's test runner builds the whole click command tree again on every invoke
    (signatures read, string annotations evaluated: about a fifth of
    tests/cli/test_widths.py's time). The `deedbench` process builds it once; so do the
    tests, once per app (and again if commands are added to it)."""
    built: dict[tuple[int, int, int], tuple[typer.Typer, Any]] = {}

    def once(app: typer.Typer) -> Any:
        key = (id(app), len(app.registered_commands), len(app.registered_groups))
        found = built.get(key)
        if found is None or found[0] is not app:  # the app is kept: its id stays its own
            found = built[key] = (app, build(app))
        return found[1]

    return once


typer.testing._get_command = _command_once(typer.testing._get_command)  # type: ignore[attr-defined]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--differential",
        type=int,
        default=None,
        metavar="N",
        help="τ-bench differential tests: N generated call sequences and conversations per "
        "domain instead of the default few hundred",
    )
    parser.addoption(
        "--realmodel",
        action="store_true",
        help="run the tests against a real model server (tests/cli/test_realmodel.py)",
    )


BROWSER = Path(__file__).parent / "browser"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if BROWSER in item.path.parents:
            item.add_marker(pytest.mark.browser)
    if config.getoption("--realmodel") or os.environ.get("DEEDBENCH_REALMODEL_URL"):
        return
    skip = pytest.mark.skip(reason="a real model server: pass --realmodel (see the README)")
    for item in items:
        if "realmodel" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working folder that is not on `sys.path`, as under the `deedbench` console
    script (whose bin folder comes first instead): `sys.path` is restored afterwards."""
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(folder))])
    return folder


def pytest_runtest_setup(item: pytest.Item) -> None:
    _shared.check(item)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in _shared.summary_lines(terminalreporter.stats.get("skipped", [])):
        terminalreporter.write_line(line)
