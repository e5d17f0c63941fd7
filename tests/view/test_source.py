"""The viewer reads a store read-only, beside its writer, without transcripts for figures."""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from deedbench.engine import RunStore
from deedbench.engine.read_only_store import Selection
from deedbench.errors import StoreError
from deedbench.records import EpisodeKey
from deedbench.view import StoreReader
from reports._html_support import PAYLOADS, Reports


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def containing(reader: StoreReader, run_id: str, text: str) -> set[EpisodeKey]:
    """The run's episodes with `text` in their transcripts, as the list selects them."""
    found = reader.newest(run_id, Selection(text=text), 0, 100_000)
    return {EpisodeKey(e.sample_id, e.condition, e.epoch) for e in found}


def test_reading_never_writes_the_store(reports: Reports, tmp_path: Path) -> None:
    source = reports.tac.path.parent / "runs.db"
    path = tmp_path / "copy.db"
    with sqlite3.connect(source) as db, sqlite3.connect(path) as copy:
        db.backup(copy)
    before = digest(path)
    reader = StoreReader(path, on_corrupt=pytest.fail)
    for run_id in reader.run_ids():
        list(reader.light_records(run_id))
        reader.activity()
        reader.audits(run_id)
        containing(reader, run_id, "corrida")
        reader.tally(run_id, Selection(counted=True, given="completion"))
        list(reader.kinds(run_id, 0))
    assert digest(path) == before
    with pytest.raises(StoreError, match="readonly"), reader.reading() as db:
        db.execute("DELETE FROM runs")


def test_figures_are_read_without_transcripts(reports: Reports) -> None:
    path = reports.tac.path.parent / "runs.db"
    reader = StoreReader(path, on_corrupt=pytest.fail)
    with RunStore(path) as store:
        whole = {r.key: r for r in store.episodes("gpt")}
    light = dict((r.key, r) for _, r in reader.light_records("gpt"))
    assert light.keys() == whole.keys()
    for key, record in light.items():
        full = whole[key]
        assert record.score == full.score and record.usage == full.usage
        assert record.metadata == full.metadata and record.status == full.status
        calls = [m for m in full.messages if m.usage is not None]
        assert [(m.role, m.usage) for m in record.messages] == [(m.role, m.usage) for m in calls]
        assert all(not m.content and not m.tool_calls for m in record.messages)
    assert reader.episode("gpt", next(iter(whole))) == next(iter(whole.values()))


def test_words_are_found_in_transcripts_only(reports: Reports) -> None:
    reader = StoreReader(reports.tac.path.parent / "runs.db", on_corrupt=pytest.fail)
    found = containing(reader, "relevance", "CORRIDA de toros")  # the bullfight's listing
    assert found and all(k.sample_id.startswith("seville_bullfight") for k in found)
    assert len(found) == 8  # 4 variants x 2 conditions
    assert containing(reader, "relevance", "role") == set()  # keys of the JSON are not text
    assert containing(reader, "relevance", "100%_") == set()  # LIKE's wildcards are literal
    # quotes are escaped in the raw JSON, so the sieve is skipped and the text still found
    xss = "xss" + PAYLOADS["img"]
    every = {record.key for _, record in reader.light_records(xss)}
    assert containing(reader, xss, 'onerror="window') == every  # every reply carries it


def test_a_run_is_running_while_its_executor_beats(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        store._db.execute(
            "INSERT INTO runs VALUES ('r', '2026-01-01T00:00:00+00:00', '{}')"
        )  # a configuration is not needed to see activity
        with store.lock_run("r"):
            live = StoreReader(path, on_corrupt=pytest.fail).activity()["r"]
            store._db.execute("UPDATE run_locks SET heartbeat_at = ?", (time.time() - 20,))
            quiet = StoreReader(path, on_corrupt=pytest.fail).activity()["r"]
    assert live.executor == f"pid {os.getpid()} on host {socket.gethostname()}"
    assert quiet.executor is None  # three heartbeats missed: no longer shown as running
    assert StoreReader(path, on_corrupt=pytest.fail).activity()["r"].executor is None
    assert live.version != quiet.version


def test_an_older_store_without_audits_or_locks_is_read(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.executescript(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at TEXT, config_json TEXT);"
            "CREATE TABLE episodes (run_id TEXT, sample_id TEXT, condition TEXT, epoch INTEGER,"
            " status TEXT, outcome TEXT, record_json TEXT);"
        )
    reader = StoreReader(path, on_corrupt=pytest.fail)
    assert reader.activity() == {} and reader.audits("r") == []


@pytest.mark.parametrize("content", [b"not sqlite at all" * 100, b""])
def test_what_is_no_store_is_named(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "file.db"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="is not a run store"):
        StoreReader(path, on_corrupt=pytest.fail)


def test_a_corrupt_record_is_skipped_and_named(tmp_path: Path, reports: Reports) -> None:
    path = tmp_path / "copy.db"
    with sqlite3.connect(reports.tac.path.parent / "runs.db") as db, sqlite3.connect(path) as copy:
        db.backup(copy)
        for table, column in (("episodes", "record_json"), ("episode_summaries", "summary_json")):
            copy.execute(
                f"UPDATE {table} SET {column} = '{{\"sample_id\": 1}}' "
                "WHERE run_id = 'relevance' AND sample_id = 'melbourne_cup_base' "
                "AND condition = 'base'"
            )
    said: list[str] = []
    reader = StoreReader(path, on_corrupt=said.append)
    assert len(list(reader.light_records("relevance"))) == 95
    assert reader.episode("relevance", EpisodeKey("melbourne_cup_base", "base", 1)) is None
    assert len(list(reader.light_records("relevance"))) == 95  # read again: said once
    assert len(said) == 1 and "'melbourne_cup_base', condition 'base', epoch 1" in said[0]


def test_counts_follow_new_and_rewritten_records(reports: Reports, tmp_path: Path) -> None:
    """Counts are kept between looks while nothing is written; a record written, or one
    rewritten in place (a failed episode run again), is counted at the next look."""
    with RunStore(reports.tac.path.parent / "runs.db") as source:
        config = source.require_run("mixed")
        failed = next(r for r in source.episodes("mixed") if r.status == "error")
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        store.create_run(config)
        reader = StoreReader(path, on_corrupt=pytest.fail)
        assert reader.activity()["mixed"].counts == {}
        store.add("mixed", failed)
        store.flush()
        first = reader.activity()["mixed"]
        assert first.counts == {"error": 1} and reader.activity() == {"mixed": first}
        store.add("mixed", failed.model_copy(update={"status": "scored"}))
        store.flush()
        again = reader.activity()["mixed"]
    assert again.counts == {"scored": 1} and again.last_rowid > first.last_rowid
    assert again.version != first.version
