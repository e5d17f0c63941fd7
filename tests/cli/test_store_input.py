"""A store that is not a healthy SQLite file is one clear line and exit 2, for every
command that opens a store: a folder, a file of something else, a truncated database;
and a read-only file or folder for every command that writes. The commands that only read
(report, compare, show, export) read a read-only store, as the viewer does (issue 39)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A healthy store with run 'good', and an Inspect log of it (for `import`)."""
    folder = tmp_path_factory.mktemp("good")
    store = folder / "runs.db"
    common = ["--limit", "1", "--epochs", "1", "--store", str(store)]
    result = invoke("run", "tac", "--agent", "baseline/random", "--run-id", "good", *common)
    assert result.exit_code == 0, result.output
    logs = folder / "logs"
    result = invoke("export", "good", "--format", "inspect", "-o", str(logs), "--store", str(store))
    assert result.exit_code == 0, result.output
    [log, *_] = sorted(logs.iterdir())
    return store, log


def commands(store: Path, log: Path) -> dict[str, list[str]]:
    where = ["--store", str(store)]
    return {
        "run": [
            "run",
            "tac",
            "--agent",
            "baseline/random",
            "--limit",
            "1",
            "--epochs",
            "1",
            *where,
        ],
        "resume": ["run", "tac", "--run-id", "good", *where],
        "report": ["report", "good", *where],
        "compare": ["compare", "good", "good", *where],
        "show": ["show", "good", "budapest_animal_circus_base", *where],
        "export": ["export", "good", "--format", "csv", *where],
        "audit": ["audit", "good", *where],
        "import": ["import", "inspect", str(log), "--run-id", "again", *where],
    }


READING = ("report", "compare", "show", "export")


def read_only(path: Path) -> Callable[[], None]:
    """Make `path` read-only for this process, even for root (whom permissions do not stop:
    the immutable attribute does); returns what undoes it."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        return lambda: path.chmod(mode)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
        pytest.skip("root here cannot make a file read-only (no immutable attribute)")
    return lambda: subprocess.run([chattr, "-i", str(path)], check=True)


def copy_of(store: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    shutil.copy(store, folder / "runs.db")  # the good store is closed: no WAL beside it
    return folder / "runs.db"


@pytest.fixture(params=["folder", "garbage", "truncated", "read-only file", "read-only folder"])
def bad(
    request: pytest.FixtureRequest, good: tuple[Path, Path], tmp_path: Path
) -> Iterator[tuple[str, Path, str]]:
    """(case, bad store path, what the message must say)."""
    case = request.param
    undo = None
    if case == "folder":
        path = tmp_path / "runs.db"
        path.mkdir()
        expected = "is a folder, not a run store"
    elif case == "garbage":
        path = tmp_path / "runs.db"
        path.write_text("my shopping list\n" * 200)
        expected = "is not a run store: the file is not an SQLite database"
    elif case == "truncated":
        path = copy_of(good[0], tmp_path / "copy")
        with open(path, "r+b") as handle:
            handle.truncate(path.stat().st_size // 2)
        expected = "is damaged (database disk image is malformed)"
    elif case == "read-only file":
        path = copy_of(good[0], tmp_path / "copy")
        undo = read_only(path)
        expected = "is read-only: deedbench needs to write to it"
    else:
        path = copy_of(good[0], tmp_path / "copy")
        undo = read_only(path.parent)
        expected = f"the folder of the run store {path} is read-only"
    try:
        yield case, path, expected
    finally:
        if undo is not None:
            undo()


def test_every_command_names_a_bad_store_in_one_line(
    bad: tuple[str, Path, str], good: tuple[Path, Path]
) -> None:
    case, path, expected = bad
    for name, args in commands(path, good[1]).items():
        result = invoke(*args)
        if case.startswith("read-only") and name in READING:
            assert result.exit_code == 0, f"{case}, {name}: {result.output}"
            continue
        where = f"{case}, {name}: {result.output}"
        assert result.exit_code == 2, where
        assert isinstance(result.exception, SystemExit), where  # no traceback
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), where
        assert expected in lines[0] and str(path.name) in lines[0], where


@pytest.fixture(params=["/proc", "read-only folder"])
def unmakeable(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A store path where no new file can be made: in /proc, or in a read-only folder."""
    if request.param == "/proc":
        if not Path("/proc/self").is_dir():
            pytest.skip("no /proc here")
        yield Path("/proc/s.db")
        return
    folder = tmp_path / "locked"
    folder.mkdir()
    undo = read_only(folder)
    try:
        yield folder / "runs.db"
    finally:
        undo()


def test_a_new_store_where_no_file_can_be_made_is_one_line(
    unmakeable: Path, good: tuple[Path, Path], tmp_path: Path
) -> None:
    """The commands that make a store (run, import, study) name it; none ends in a
    traceback from SQLite's "unable to open database file"."""
    study = tmp_path / "s.toml"
    study.write_text('name = "s"\n[[benchmarks]]\nname = "tac"\nlimit = 1\nepochs = 1\n'
                     '[[agents]]\nspec = "baseline/random"\n')  # fmt: skip
    where = ["--store", str(unmakeable)]
    for args in (
        ["run", "tac", "--agent", "baseline/random", "--limit", "1", "--epochs", "1", *where],
        ["import", "inspect", str(good[1]), *where],
        ["study", str(study), *where],
    ):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert isinstance(result.exception, SystemExit), (args, result.output)
        assert result.stderr.strip().splitlines() == [
            f"error: cannot open the run store {unmakeable}: unable to open database file (a "
            "new store is made in a folder deedbench can write to)"
        ], args
