"""The store's format version: an older store migrates (tested on a store the previous
release made), a newer one is refused by name."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from tests.cli.test_store_input import read_only
from tests.engine.test_store import make_config
from typer.testing import CliRunner

from deedbench.cli.main import app
from deedbench.engine import RunStore, store_schema
from deedbench.errors import StoreFormatError
from deedbench.records import FORMAT
from deedbench.version import __version__
from deedbench.view import StoreReader


def made_by_this_version(path: Path) -> None:
    with RunStore(path) as store:
        store.create_run(make_config())


def user_version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def test_a_new_store_records_its_format_and_writer(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    made_by_this_version(path)
    assert user_version(path) == FORMAT
    with closing(sqlite3.connect(path)) as db:
        [(writer,)] = db.execute("SELECT value FROM meta WHERE key = 'deedbench_version'")
    assert writer == __version__


def test_a_store_from_before_formats_migrates_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    made_by_this_version(path)
    with closing(sqlite3.connect(path)) as db:  # as 0.1.0 left it: no format, no meta
        db.execute("PRAGMA user_version = 0")
        db.execute("DROP TABLE meta")
        db.commit()
    with RunStore(path) as store:
        assert store.require_run("run-1").run_id == "run-1"
    assert user_version(path) == FORMAT


def test_a_newer_store_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    made_by_this_version(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {FORMAT + 1}")
        db.execute("UPDATE meta SET value = '9.9.9' WHERE key = 'deedbench_version'")
        db.commit()
    with pytest.raises(StoreFormatError) as raised:
        RunStore(path)
    assert str(raised.value) == (
        f"{path}: this store was written by deedbench 9.9.9 (format {FORMAT + 1}); "
        f"this is {__version__} (format {FORMAT}): upgrade deedbench"
    )
    assert user_version(path) == FORMAT + 1  # refused before anything was touched


# A store made by the current release (main bf97f7b, format 1) with tests/engine/data/
# make_format1.py: runs of TAC (random, 2 epochs, one error record, model calls with token
# usage and a response-cache hit, a scanner audit; relevance) and retail (reckless); beside
# it, what that release's `report --json`, `report --csv` and `compare --json` printed.
DATA = Path(__file__).parent / "data"
RELEASED_RUNS = ("tac-rnd", "tac-rel", "retail-reckless")


def released_store(folder: Path) -> Path:
    path = folder / "format1.db"
    shutil.copy(DATA / "format1.db", path)
    assert user_version(path) == 1
    return path


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


# What reports have gained since that release, with the values its runs read as: the run's
# scenario files, model calls sent again, and the chance test's other direction in the CSV;
# compare's calls and costs by run (the release's runs: their agents' calls, as `report` has).
ADDED_FIELDS = {"data_files": {}, "retries": 0}
ADDED_ANY = {"costs"}  # compare's: figures of each run, as its `report` shows them
ADDED_COLUMNS = {"p_above_chance", "p_above_chance_clustered"}


def same_but_added(released: object, now: object) -> None:
    """`now` is `released` with nothing changed, only `ADDED_FIELDS` added at their defaults."""
    if isinstance(released, dict):
        assert isinstance(now, dict)
        for key, value in now.items():
            if key not in released and key not in ADDED_ANY:
                assert ADDED_FIELDS.get(key, ...) == value, key
        for key, value in released.items():
            same_but_added(value, now[key])
    elif isinstance(released, list):
        assert isinstance(now, list) and len(now) == len(released)
        for old, new in zip(released, now, strict=True):
            same_but_added(old, new)
    elif isinstance(released, float):
        assert now == same_number(released)
    else:
        assert now == released


def same_number(released: float) -> object:
    """A float of that release to 9 significant digits: since then the exact chance test
    sums each tail from its own side (its upper tail was 1 - cdf, 0 below about 1e-16)
    and Wilson intervals take their z from the standard library (last-bit changes)."""
    return pytest.approx(released, rel=1e-9, abs=1e-15)


def same_csv_but_added(released: str, now: str) -> None:
    old_rows = list(csv.DictReader(io.StringIO(released)))
    new_rows = list(csv.DictReader(io.StringIO(now)))
    assert len(new_rows) == len(old_rows) > 0
    assert set(new_rows[0]) - set(old_rows[0]) == ADDED_COLUMNS
    for old, new in zip(old_rows, new_rows, strict=True):
        for key, value in old.items():
            try:
                number = float(value)
            except ValueError:
                assert new[key] == value, key
            else:
                assert float(new[key]) == same_number(number), key


def test_a_released_store_migrates_and_every_report_of_it_is_unchanged(tmp_path: Path) -> None:
    path = released_store(tmp_path)
    for run_id in RELEASED_RUNS:
        as_json = invoke("report", run_id, "--json", "--store", str(path))
        released = (DATA / f"format1-report-{run_id}.json").read_text()
        same_but_added(json.loads(released), json.loads(as_json))
        as_csv = invoke("report", run_id, "--csv", "--store", str(path))
        same_csv_but_added((DATA / f"format1-report-{run_id}.csv").read_text(), as_csv)
    compared = invoke("compare", "tac-rel", "tac-rnd", "--json", "--store", str(path))
    same_but_added(json.loads((DATA / "format1-compare.json").read_text()), json.loads(compared))
    assert user_version(path) == FORMAT
    with RunStore(path) as store:  # every record has its summary, in the records' order
        for run_id in RELEASED_RUNS:
            records = list(store.episodes(run_id))
            summaries = list(store.summaries(run_id))
            assert [s.key for s in summaries] == [r.key for r in records]
            for record, summary in zip(records, summaries, strict=True):
                calls = [(m.role, m.usage) for m in record.messages if m.usage is not None]
                assert [(m.role, m.usage) for m in summary.messages] == calls
                assert summary.model_copy(update={"messages": record.messages}) == record
        assert any(s.status == "error" for s in store.summaries("tac-rnd"))


def test_migrating_a_big_store_says_how_far_it_got(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = released_store(tmp_path)
    monkeypatch.setattr(store_schema, "_MIGRATE_CHUNK", 5)
    said: list[str] = []
    with RunStore(path, on_progress=said.append) as store:
        assert len(list(store.summaries("tac-rnd"))) == 12
    assert said[0] == (
        f"{path}: migrating the store to format {FORMAT}: summarizing 21 stored episodes "
        "once (reports read the summaries)"
    )
    assert said[-1] == "  21 of 21"
    with RunStore(path, on_progress=said.append):  # once
        pass
    assert said[-1] == "  21 of 21"


def test_a_read_only_store_that_needs_migrating_is_refused_saying_how(tmp_path: Path) -> None:
    path = released_store(tmp_path)
    undo = read_only(path)
    try:
        with pytest.raises(StoreFormatError) as raised:
            RunStore(path)
    finally:
        undo()
    message = str(raised.value)
    assert message.startswith(f"{path} is in format 1 of an earlier deedbench")
    assert "read-only" in message and f"deedbench runs --store {path}" in message
    assert user_version(path) == 1


def test_the_viewer_reads_an_unmigrated_store_as_it_will_be_and_leaves_it(
    tmp_path: Path,
) -> None:
    path = released_store(tmp_path)
    before = [r for _, r in StoreReader(path, on_corrupt=pytest.fail).light_records("tac-rnd")]
    assert user_version(path) == 1
    RunStore(path).close()
    after = [r for _, r in StoreReader(path, on_corrupt=pytest.fail).light_records("tac-rnd")]
    assert before == after and len(after) == 12
