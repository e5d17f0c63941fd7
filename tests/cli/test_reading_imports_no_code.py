"""Reading a store never imports code (issue 39). A store is data anyone may send: its run
may name ``python/evilmod:Bench``, and evilmod.py may lie beside it. No reading command
(runs, report in every form, compare, show, export, audit) imports it; what they need of
a benchmark the run recorded when it ran. A run recorded before that, whose Inspect export
needs its benchmark's conditions, is refused, naming the module it would import, unless
--allow-import is given.

Here evilmod.py writes a marker file when it is imported; `python/this:X` would print the
Zen of Python."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from deedbench.cli.main import app

EVIL = """
from pathlib import Path

Path(__file__).with_name("IMPORTED").write_text("evilmod was imported")

from deedbench.benchmarks.tac.benchmark import TacBenchmark


class Bench(TacBenchmark):
    pass
"""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def _rename(store: Path, run_id: str, benchmark: str, *, old: bool) -> None:
    """Make the stored run one of `benchmark`; `old`: as recorded before runs kept what
    readers need of their benchmark (its conditions and baselines' purposes)."""
    with closing(sqlite3.connect(store)) as db, db:
        (text,) = db.execute("SELECT config_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        config = json.loads(text)
        config["benchmark"] = benchmark
        if old:
            config["report"].pop("conditions", None)
            config["report"].pop("baseline_purposes", None)
        db.execute("UPDATE runs SET config_json = ? WHERE run_id = ?", (json.dumps(config), run_id))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder holding a store with three runs ('evil' and 'old' name python/evilmod:Bench,
    the second as an older deedbench recorded it; 'zen' names python/this:X) and evilmod.py;
    the working folder, as for someone who received it."""
    store = tmp_path / "runs.db"
    for run_id in ("evil", "old", "zen"):
        done = invoke(
            "run", "tac", "--agent", "baseline/relevance", "--limit", "1", "--epochs", "1",
            "--run-id", run_id, "--store", str(store), "-q",
        )  # fmt: skip
        assert done.exit_code == 0, done.output
    _rename(store, "evil", "python/evilmod:Bench", old=False)
    _rename(store, "old", "python/evilmod:Bench", old=True)
    _rename(store, "zen", "python/this:X", old=True)
    (tmp_path / "evilmod.py").write_text(EVIL)
    monkeypatch.chdir(tmp_path)
    path = list(sys.path)
    yield tmp_path
    sys.path[:] = path  # as the command found it (a python/ spec puts the folder first)
    for name in ("evilmod", "this"):
        sys.modules.pop(name, None)


def test_no_reading_command_imports_the_code_a_run_names(folder: Path) -> None:
    # every reading command once; the Inspect export imports inspect_ai (seconds, the first
    # time in a process), which is what export --format inspect does
    store = ["--store", str(folder / "runs.db")]
    sample = "budapest_animal_circus_base"
    commands = [
        ["runs"],
        ["runs", "--json"],
        ["report", "evil"],
        ["report", "old"],
        ["report", "zen"],
        ["report", "evil", "--json"],
        ["report", "evil", "--csv"],
        ["report", "evil", "old", "--html", str(folder / "r.html")],
        ["compare", "evil", "old"],
        ["show", "evil", sample],
        ["export", "old", "--format", "jsonl", "-o", str(folder / "e.jsonl")],
        ["export", "old", "--format", "csv", "-o", str(folder / "e.csv")],
        ["export", "evil", "--format", "inspect", "-o", str(folder / "logs")],
        ["audit", "old"],
    ]
    for args in commands:
        done = invoke(*args, *store)
        assert done.exit_code == 0, f"{args}: {done.output}"
        assert not (folder / "IMPORTED").exists(), f"{args} imported evilmod"
        assert "Beautiful is better than ugly" not in done.output, f"{args} imported this"
    assert "evilmod" not in sys.modules and "this" not in sys.modules
    report = invoke("report", "evil", *store)  # what it needed was recorded with the run
    assert "baseline/relevance: books the best word match" in " ".join(report.output.split())


def test_what_would_import_code_says_what_and_asks_for_the_option(folder: Path) -> None:
    store = ["--store", str(folder / "runs.db")]
    logs = str(folder / "old-logs")
    refused = invoke("export", "old", "--format", "inspect", "-o", logs, *store)
    assert refused.exit_code == 2
    said = " ".join(refused.output.split())
    assert "would import module 'evilmod'" in said and "--allow-import" in said
    assert not (folder / "IMPORTED").exists()
    allowed = invoke("export", "old", "--format", "inspect", "-o", logs, "--allow-import", *store)
    assert allowed.exit_code == 0, allowed.output
    assert (folder / "IMPORTED").exists()  # what it said it would import, it did
