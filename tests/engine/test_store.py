"""The run store: runs, episode records, cached answers and run locks in one SQLite file
(WAL), one record per episode; older stores migrate, bad files are clear errors."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Literal

import pytest

from deedbench.engine import RunStore
from deedbench.engine.cache import CacheEntry
from deedbench.engine.run_locks import STALE_SECONDS
from deedbench.errors import StoreError
from deedbench.records import (
    EpisodeKey,
    EpisodeRecord,
    Evidence,
    Message,
    MetricSpec,
    ReportSpec,
    RunConfig,
    Score,
    ToolCall,
    Usage,
)


def make_config(run_id: str = "run-1", created_at: str = "2026-01-01T00:00:00+00:00") -> RunConfig:
    return RunConfig(
        run_id=run_id,
        benchmark="tiny",
        benchmark_options={"level": "2"},
        data_hash="abc123",
        agent="python/tests:agent",
        agent_params={"temperature": 0.5, "tags": ["a", "b"]},
        conditions=["plain", "spicy"],
        epochs=2,
        seed=7,
        sample_ids=["s1", "s2"],
        report=ReportSpec(
            metrics=[MetricSpec(name="ok", value="ok", description="it worked")],
            primary="ok",
            group_by=["kind"],
            compare_to_chance=True,
        ),
        deedbench_version="0.1.0",
        python_version="3.11.0",
        created_at=created_at,
    )


def make_record(
    sample_id: str = "s1",
    condition: str = "plain",
    epoch: int = 1,
    status: Literal["scored", "error"] = "scored",
) -> EpisodeRecord:
    scored = status == "scored"
    return EpisodeRecord(
        sample_id=sample_id,
        condition=condition,
        epoch=epoch,
        seed=99,
        status=status,
        termination="agent_finished" if scored else "infrastructure_error",
        steps=2,
        messages=[
            Message(role="user", content="hello"),
            Message(
                role="assistant",
                tool_calls=[ToolCall(id="c1", name="bump", arguments='{"by": 2}')],
                usage=Usage(input_tokens=10, output_tokens=3),
            ),
            Message(role="tool", content="2", tool_call_id="c1", tool_name="bump"),
        ],
        score=(
            Score(outcome="ok", values={"ok": 1.0}, evidence=[Evidence(message_index=1)])
            if scored
            else None
        ),
        metadata={"kind": "x"},
        chance=0.25,
        error=None if scored else "boom",
        started_at=1000.0,
        duration_s=0.5,
    )


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "runs.db"


@pytest.fixture
def store(path: Path) -> Iterator[RunStore]:
    """A store that only writes on an explicit flush (or close)."""
    with RunStore(path, batch_size=10_000, batch_seconds=3600) as opened:
        yield opened


def rows(path: Path) -> list[tuple[str, str, str, int, str, str | None]]:
    """The episode rows as a separate connection sees them."""
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT run_id, sample_id, condition, epoch, status, outcome FROM episodes "
            "ORDER BY sample_id, condition, epoch"
        ).fetchall()


def test_creates_parent_folder_and_uses_wal(store: RunStore, path: Path) -> None:
    assert path.exists()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_run_config_round_trip(store: RunStore) -> None:
    config = make_config()
    store.create_run(config)
    assert store.get_run("run-1") == config
    assert store.require_run("run-1") == config
    assert store.get_run("other") is None


def test_creating_an_existing_run_raises(store: RunStore) -> None:
    store.create_run(make_config())
    with pytest.raises(StoreError, match="'run-1' already exists"):
        store.create_run(make_config(created_at="2026-02-02T00:00:00+00:00"))
    # The first configuration is kept.
    config = store.get_run("run-1")
    assert config is not None
    assert config.created_at == "2026-01-01T00:00:00+00:00"


def test_require_missing_run_names_known_runs(store: RunStore) -> None:
    store.create_run(make_config("alpha", "2026-01-01T00:00:00+00:00"))
    store.create_run(make_config("beta", "2026-01-02T00:00:00+00:00"))
    assert store.run_ids() == ["alpha", "beta"]
    with pytest.raises(StoreError, match=r"no run 'gamma'.*alpha, beta"):
        store.require_run("gamma")


def test_add_then_flush_writes(store: RunStore, path: Path) -> None:
    store.create_run(make_config())
    store.add("run-1", make_record("s1"))
    store.add("run-1", make_record("s2", epoch=2))
    assert rows(path) == []  # queued, not yet written
    store.flush()
    assert rows(path) == [
        ("run-1", "s1", "plain", 1, "scored", "ok"),
        ("run-1", "s2", "plain", 2, "scored", "ok"),
    ]


def test_unflushed_records_are_invisible_to_other_connections(store: RunStore, path: Path) -> None:
    store.add("run-1", make_record())
    assert rows(path) == []
    other = RunStore(path)
    try:
        assert list(other.episodes("run-1")) == []
        store.flush()
        assert [r.key for r in other.episodes("run-1")] == [EpisodeKey("s1", "plain", 1)]
    finally:
        other.close()


def test_batch_size_triggers_flush(path: Path) -> None:
    with RunStore(path, batch_size=3, batch_seconds=3600) as store:
        store.add("run-1", make_record("s1"))
        store.add("run-1", make_record("s2"))
        assert rows(path) == []
        store.add("run-1", make_record("s3"))
        assert len(rows(path)) == 3


def test_close_flushes(path: Path) -> None:
    store = RunStore(path, batch_size=10_000, batch_seconds=3600)
    store.add("run-1", make_record())
    store.close()
    assert len(rows(path)) == 1


def test_records_survive_reopen(path: Path) -> None:
    config = make_config()
    record = make_record()
    with RunStore(path) as store:
        store.create_run(config)
        store.add("run-1", record)
    with RunStore(path) as reopened:
        assert reopened.get_run("run-1") == config
        assert list(reopened.episodes("run-1")) == [record]
        assert reopened.episode("run-1", "s1", "plain", 1) == record
        assert reopened.episode("run-1", "s1", "plain", 2) is None
        assert reopened.count("run-1") == {"scored": 1}


def test_error_record_replaced_by_scored_one(store: RunStore, path: Path) -> None:
    store.add("run-1", make_record("s1", status="error"))
    store.add("run-1", make_record("s2", status="scored"))
    store.flush()
    assert store.count("run-1") == {"error": 1, "scored": 1}
    store.add("run-1", make_record("s1", status="scored"))
    store.flush()
    assert rows(path) == [
        ("run-1", "s1", "plain", 1, "scored", "ok"),
        ("run-1", "s2", "plain", 1, "scored", "ok"),
    ]
    records = list(store.episodes("run-1"))
    assert sorted(r.sample_id for r in records) == ["s1", "s2"]
    assert all(r.status == "scored" and r.error is None for r in records)


def test_same_key_twice_in_one_batch_keeps_the_last(store: RunStore, path: Path) -> None:
    store.add("run-1", make_record("s1", status="error"))
    store.add("run-1", make_record("s1", status="scored"))
    store.flush()
    assert rows(path) == [("run-1", "s1", "plain", 1, "scored", "ok")]


def test_scored_samples_are_per_condition_and_epoch_and_exclude_errors(store: RunStore) -> None:
    store.add("run-1", make_record("s1", "plain", 1, status="scored"))
    store.add("run-1", make_record("s2", "plain", 1, status="scored"))
    store.add("run-1", make_record("s1", "spicy", 1, status="error"))
    store.add("run-1", make_record("s2", "plain", 2, status="scored"))
    store.add("run-2", make_record("s9", "plain", 1, status="scored"))
    store.flush()
    assert store.scored_samples("run-1", "plain", 1) == {"s1", "s2"}
    assert store.scored_samples("run-1", "spicy", 1) == set()
    assert store.scored_samples("run-1", "plain", 2) == {"s2"}
    assert store.count("run-1") == {"scored": 3, "error": 1}
    assert store.scored_samples("run-3", "plain", 1) == set()


def test_episodes_are_per_run_and_round_trip(store: RunStore) -> None:
    record = make_record()
    store.add("run-1", record)
    store.add("run-2", make_record("other"))
    store.flush()
    [stored] = store.episodes("run-1")
    assert stored == record
    assert stored.messages[1].tool_calls[0].arguments == '{"by": 2}'
    assert stored.score is not None and stored.score.evidence[0].message_index == 1


# --- corrupt records --------------------------------------------------------------------------


def test_a_corrupt_record_is_skipped_and_named(path: Path) -> None:
    warnings: list[str] = []
    with RunStore(path, on_corrupt=warnings.append) as store:
        store.add("run-1", make_record("s1"))
        store.add("run-1", make_record("s2"))
        store.add("run-1", make_record("s3"))
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE episodes SET record_json = '{\"steps\": 1' WHERE sample_id = 's2'")
        db.execute("UPDATE episodes SET record_json = '{}' WHERE sample_id = 's3'")
    with RunStore(path, on_corrupt=warnings.append) as store:
        assert [r.sample_id for r in store.episodes("run-1")] == ["s1"]
        assert len(warnings) == 2
        assert "run 'run-1', sample 's2', condition 'plain', epoch 1" in warnings[0]
        assert "sample 's3'" in warnings[1] and "Field required" in warnings[1]
        with pytest.raises(StoreError, match="sample 's2', condition 'plain', epoch 1 is corrupt"):
            store.episode("run-1", "s2", "plain", 1)
        assert store.episode("run-1", "s1", "plain", 1) is not None


def test_corrupt_records_warn_by_default(path: Path) -> None:
    with RunStore(path) as store:
        store.add("run-1", make_record("s1"))
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE episodes SET record_json = 'garbage'")
    with RunStore(path) as store, pytest.warns(UserWarning, match="sample 's1'"):
        assert list(store.episodes("run-1")) == []


# --- cached answers ---------------------------------------------------------------------------


def entry(key: str, sample: str = "s1", epoch: int = 1, seed: int = 5) -> CacheEntry:
    return CacheEntry(key, "openai", "gpt-4o", f'{{"answer": "{key}"}}', sample, epoch, seed)


def test_answers_are_selected_by_their_episode_seed(store: RunStore, path: Path) -> None:
    user = entry("b", sample="s1:user", epoch=0)  # the episode's model-played user
    store.add_responses([entry("a"), user, entry("c", seed=6), entry("d", seed=7)])
    store.add_responses([entry("e", sample="s2", seed=8)])
    assert sorted(store.responses_for(5), key=lambda e: e.key) == [entry("a"), user]
    assert store.responses_for(6) == [entry("c", seed=6)]
    assert store.responses_for(9) == []
    assert store.response("d") == entry("d", seed=7)
    assert store.response("zz") is None
    with closing(sqlite3.connect(path)) as db:  # committed at once, no batching
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone() == (5,)


# The tables as deedbench 0.1 created them before this change: no episode columns on the
# cached answers, no locks, no index by epoch.
OLD_SCHEMA = """
CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, config_json TEXT NOT NULL);
CREATE TABLE episodes (
    run_id TEXT NOT NULL REFERENCES runs(run_id), sample_id TEXT NOT NULL,
    condition TEXT NOT NULL, epoch INTEGER NOT NULL, status TEXT NOT NULL, outcome TEXT,
    record_json TEXT NOT NULL, PRIMARY KEY (run_id, sample_id, condition, epoch));
CREATE TABLE audits (
    run_id TEXT NOT NULL REFERENCES runs(run_id), sample_id TEXT NOT NULL,
    condition TEXT NOT NULL, epoch INTEGER NOT NULL, judge TEXT NOT NULL,
    record_json TEXT NOT NULL, PRIMARY KEY (run_id, sample_id, condition, epoch, judge));
CREATE TABLE responses (
    key TEXT PRIMARY KEY, protocol TEXT NOT NULL, model TEXT NOT NULL,
    response_json TEXT NOT NULL);
"""


def test_a_store_of_the_previous_release_opens_and_migrates(path: Path) -> None:
    path.parent.mkdir(parents=True)
    config, record = make_config(), make_record()
    with closing(sqlite3.connect(path)) as db, db:
        db.executescript(OLD_SCHEMA)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "INSERT INTO runs VALUES (?, ?, ?)",
            (config.run_id, config.created_at, config.model_dump_json()),
        )
        db.execute(
            "INSERT INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?)",
            ("run-1", "s1", "plain", 1, "scored", "ok", record.model_dump_json()),
        )
        db.execute("INSERT INTO responses VALUES ('old', 'openai', 'gpt-4o', '{\"x\": 1}')")
    with RunStore(path) as store:
        assert store.get_run("run-1") == config
        assert list(store.episodes("run-1")) == [record]
        assert store.scored_samples("run-1", "plain", 1) == {"s1"}
        old = store.response("old")  # found by key; it has no episode to be shipped with
        assert old is not None and old.response == '{"x": 1}'
        assert store.responses_for(5) == []
        store.add_responses([entry("new")])
        assert store.responses_for(5) == [entry("new")]
        with store.lock_run("run-1"):
            pass
    with closing(sqlite3.connect(path)) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(responses)")]
        assert columns[-3:] == ["sample_id", "epoch", "seed"]
    with RunStore(path) as again:  # migrating twice changes nothing
        assert again.response("new") == entry("new")


# --- files that are not (healthy) stores ------------------------------------------------------


def test_a_folder_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"is a folder, not a run store"):
        RunStore(tmp_path)


def test_a_file_that_is_not_sqlite_is_not_a_store(tmp_path: Path) -> None:
    garbage = tmp_path / "notes.db"
    garbage.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match=r"notes.db is not a run store: .*not an SQLite database"):
        RunStore(garbage)


def test_a_truncated_store_is_damaged(path: Path) -> None:
    with RunStore(path) as store:
        for n in range(200):
            store.add("run-1", make_record(f"s{n}"))
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size // 2)
    with pytest.raises(StoreError, match=r"runs.db is damaged \(database disk image is malformed"):
        RunStore(path)


# --- locks of runs being executed -------------------------------------------------------------


def lock_row(path: Path, run_id: str = "run-1") -> tuple[int, str, str, float] | None:
    with closing(sqlite3.connect(path)) as db:
        return db.execute(
            "SELECT pid, host, acquired_at, heartbeat_at FROM run_locks WHERE run_id = ?",
            (run_id,),
        ).fetchone()


def test_a_locked_run_is_refused_with_its_holder(path: Path) -> None:
    with RunStore(path) as first, RunStore(path) as second:
        with first.lock_run("run-1"):
            pid, host, since, _ = lock_row(path) or (0, "", "", 0.0)
            assert (pid, host) == (os.getpid(), socket.gethostname())
            message = f"run 'run-1' is being executed by pid {pid} on host {host} since {since}"
            with pytest.raises(StoreError, match=re.escape(message)), second.lock_run("run-1"):
                pass
            with second.lock_run("run-2"):  # other runs of the store are free
                with first.lock_run("run-1"):  # and a store may lock its own run again
                    pass
                assert lock_row(path) is not None  # the inner release kept the outer lock
        assert lock_row(path) is None
        with second.lock_run("run-1"):
            pass


def test_a_lock_is_released_when_the_block_fails(path: Path) -> None:
    with RunStore(path) as store:
        with pytest.raises(RuntimeError), store.lock_run("run-1"):
            raise RuntimeError("the run crashed")
        assert lock_row(path) is None


def test_the_lock_of_a_dead_process_is_taken_over(path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # reaped: its pid names no process now
    with RunStore(path) as store:
        store._write(
            "INSERT INTO run_locks VALUES (?, ?, ?, ?, ?)",
            [("run-1", dead.pid, socket.gethostname(), "earlier", time.time())],
        )
        with store.lock_run("run-1"):
            assert (lock_row(path) or (0,))[0] == os.getpid()


def test_a_lock_whose_heartbeat_stopped_is_taken_over(path: Path) -> None:
    """A live pid on another host cannot be checked: only its heartbeat tells."""
    with RunStore(path) as store:
        quiet = time.time() - STALE_SECONDS - 1
        store._write(
            "INSERT INTO run_locks VALUES (?, ?, ?, ?, ?)",
            [
                ("run-1", 1, "elsewhere", "earlier", quiet),
                ("run-2", 1, "elsewhere", "now", time.time()),
            ],
        )
        with store.lock_run("run-1"):
            assert (lock_row(path) or ())[:2] == (os.getpid(), socket.gethostname())
        with (
            pytest.raises(StoreError, match="by pid 1 on host elsewhere since now"),
            store.lock_run("run-2"),
        ):
            pass


def test_a_heartbeat_notices_a_lock_taken_over(path: Path) -> None:
    with RunStore(path) as store, store.lock_run("run-1"):
        before = (lock_row(path) or (0, "", "", 0.0))[3]
        store.heartbeat("run-1")
        assert (lock_row(path) or (0, "", "", 0.0))[3] >= before
        store._write("UPDATE run_locks SET pid = 1, host = 'elsewhere'", [()])
        with pytest.raises(StoreError, match="'run-1' was taken over by another process"):
            store.heartbeat("run-1")


def test_each_record_is_written_with_its_summary(path: Path) -> None:
    """Reports read the summary: the record with its messages cut to the role and usage of
    each model call, written in the record's transaction, replaced with it."""
    with RunStore(path, batch_size=100, batch_seconds=3600) as store:
        store.create_run(make_config())
        store.add("run-1", make_record("s1"))
        store.add("run-1", make_record("s2", status="error"))
        assert list(store.summaries("run-1")) == []  # queued: neither is written yet
        store.flush()
        again = make_record("s1").model_copy(update={"score": Score(outcome="no", values={})})
        store.add("run-1", again)
    with RunStore(path) as store:
        summaries = list(store.summaries("run-1"))
        assert [s.key for s in summaries] == [r.key for r in store.episodes("run-1")]
        assert [(s.sample_id, s.status) for s in summaries] == [("s2", "error"), ("s1", "scored")]
        assert summaries[1].score == again.score
        assert [m.model_dump(exclude_defaults=True) for m in summaries[1].messages] == [
            {"role": "assistant", "usage": {"input_tokens": 10, "output_tokens": 3}}
        ]
        assert sorted(store.keys("run-1")) == [
            EpisodeKey("s1", "plain", 1),
            EpisodeKey("s2", "plain", 1),
        ]


def test_a_run_is_read_in_order_by_rowid_ranges_not_through_its_index(store: RunStore) -> None:
    """Exporting or summarizing a run reads ranges of rowids. With `run_id = ?` SQLite
    took the records' index by (run, epoch) for each range, walking the whole run's
    entries every time and sorting (a 1M export: 80% of its time): each query's plan
    must search the table by rowid, with no sort."""
    store.create_run(make_config())
    for epoch in (1, 2):
        for sample in ("s2", "s1"):
            store.add("run-1", make_record(sample, epoch=epoch))
    store.flush()
    issued: list[str] = []
    store._db.set_trace_callback(issued.append)
    try:
        texts = list(store.record_texts("run-1"))
        summaries = list(store.summaries("run-1"))
    finally:
        store._db.set_trace_callback(None)
    assert [json.loads(t)["sample_id"] for t in texts] == ["s2", "s1", "s2", "s1"]
    assert [(s.sample_id, s.epoch) for s in summaries] == [
        ("s2", 1),
        ("s1", 1),
        ("s2", 2),
        ("s1", 2),
    ]
    ranged = [sql for sql in issued if "rowid BETWEEN" in sql]
    assert {sql.split(" FROM ")[1].split()[0] for sql in ranged} == {
        "episodes",
        "episode_summaries",
    }
    for sql in ranged:
        plan = " | ".join(row[3] for row in store._db.execute("EXPLAIN QUERY PLAN " + sql))
        assert "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)" in plan, (sql, plan)
        assert "TEMP B-TREE" not in plan, (sql, plan)
