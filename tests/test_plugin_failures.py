"""An installed plugin that breaks at import (tests/fixtures/brokenplugin: a benchmark, a
model provider and an executor whose modules raise RuntimeError or call sys.exit(3) while
they are imported) is "cannot be loaded: ..." where it is used, one line and exit 2, and
takes down nothing else: `deedbench list` lists the rest, a run of deedbench's own
benchmark runs (issue 39)."""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import deedbench.agents.providers as providers
from deedbench.cli.main import app

PACKAGE = Path(__file__).parent / "fixtures" / "brokenplugin"


def install(package: Path, target: Path) -> Path:
    """`package` installed in the site folder `target` as pip leaves it: its modules, and
    a dist-info whose entry_points.txt holds its pyproject's (as tests/test_registry.py)."""
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    for module in package.glob("*.py"):
        shutil.copy(module, target)
    info = target / f"{project['name']}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n"
            for group, points in project["entry-points"].items()
        )
    )
    return target


@pytest.fixture
def broken(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """brokenplugin installed in a site folder on the path (entry points are read from
    the path when asked for)."""
    site = install(PACKAGE, tmp_path_factory.mktemp("broken-site"))
    monkeypatch.syspath_prepend(str(site))
    providers._installed.cache_clear()  # the providers' entry points are read once a process
    yield
    providers._installed.cache_clear()


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_list_says_which_plugin_cannot_be_loaded_and_lists_the_rest(broken: None) -> None:
    # about 1.5 s of CPU: `list` loads every benchmark's class, the τ² ones with their schemas
    listed = invoke("list", "--wide")
    assert listed.exit_code == 0, listed.output
    # the table wraps a long cell over rows at the console's width: read it without borders
    text = " ".join(listed.output.replace("│", " ").split())
    assert "tac" in text and "tau2-banking" in text and "baseline/random" in text
    assert "cannot be loaded: RuntimeError: this plugin is broken" in text
    assert "cannot be loaded: SystemExit: 3" in text


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["run", "broken_runtime"], "cannot be loaded: RuntimeError: this plugin is broken"),
        (["run", "broken_exit"], "cannot be loaded: SystemExit: 3"),
        (["run", "tac", "--agent", "brokenprov/m1"], "cannot be loaded: RuntimeError"),
        (["run", "tac", "--executor", "brokenexec"], "cannot be loaded: SystemExit: 3"),
    ],
    ids=["benchmark-raises", "benchmark-exits", "provider-raises", "executor-exits"],
)
def test_a_command_that_uses_a_broken_plugin_says_so_in_one_line(
    broken: None, tmp_path: Path, args: list[str], said: str
) -> None:
    done = invoke(*args, "--limit", "1", "--epochs", "1", "--store", str(tmp_path / "s.db"))
    assert done.exit_code == 2, done.output
    assert said in " ".join(done.output.split())
    assert "Traceback" not in done.output


def test_commands_that_do_not_use_it_work(broken: None, tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    done = invoke(
        "run", "tac", "--agent", "baseline/refuse", "--limit", "1", "--epochs", "1",
        "--executor", "local", "--store", store, "-q",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert invoke("runs", "--store", store).exit_code == 0
