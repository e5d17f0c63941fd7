"""What the store keeps for reports (format 3: each run's kinds of episode with their
counts, an (epoch, kind) per episode, its calls' usage summed): written with each record,
made the same by SQLite from the summaries of a store that had none (migration), kept
right when a summary is replaced, deleted or rewritten; and bench/million.py's grown
stores equal to stores written record by record."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.cli.main import app
from deedbench.engine import RunStore, store_schema
from deedbench.records import EpisodeRecord, Usage
from deedbench.reports.summary import RunTally

ROOT = Path(__file__).parents[2]


def million() -> ModuleType:
    spec = importlib.util.spec_from_file_location("million", ROOT / "bench" / "million.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TAC's random baseline (2 epochs) with token usage on some records and an error, and
    the retail desk's reckless baseline (attribution, faults): about 2 s."""
    path = tmp_path_factory.mktemp("seed") / "runs.db"
    for args in (
        ["run", "tac", "-a", "baseline/random", "--epochs", "2", "--run-id", "rnd"],
        ["run", "retail", "-a", "baseline/reckless", "--limit", "30", "--run-id", "desk"],
    ):
        result = CliRunner().invoke(app, [*args, "--store", str(path), "-q"])
        assert result.exit_code == 0, result.output
    with RunStore(path) as store:
        records = list(store.episodes("rnd"))
        for record in records[3::17]:
            messages = list(record.messages)
            turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
            paid = Usage(input_tokens=1200, output_tokens=80, cached_input_tokens=200, calls=1)
            hit = Usage(input_tokens=1500, output_tokens=40, calls=1, cache_hits=1, timeouts=1)
            messages[turns[0]] = messages[turns[0]].model_copy(update={"usage": paid})
            messages[turns[-1]] = messages[turns[-1]].model_copy(update={"usage": hit})
            usage = {"assistant": paid + hit}
            store.add("rnd", record.model_copy(update={"messages": messages, "usage": usage}))
        broken = records[5].model_copy(
            update={"status": "error", "score": None, "error": "timed out after 30 s"}
        )
        store.add("rnd", broken)
    return path


def kept(path: Path) -> dict[str, Any]:
    """Everything the store keeps for reports, each kind by its meaning (its JSON parsed),
    facts in the order written, calls in the order each role first came."""
    with closing(sqlite3.connect(path)) as db:
        kinds = {
            (run, number): json.dumps(json.loads(text), sort_keys=True)
            for run, number, text in db.execute("SELECT run_id, kind, kind_json FROM episode_kinds")
        }
        counts = Counter()
        for run, number, n in db.execute("SELECT run_id, kind, episodes FROM episode_kinds"):
            counts[run, kinds[run, number]] += n
        facts: dict[str, list[tuple[int, str]]] = {}
        for run, epoch, number in db.execute(
            "SELECT run_id, epoch, kind FROM episode_facts ORDER BY rowid"
        ):
            facts.setdefault(run, []).append((epoch, kinds[run, number]))
        summaries = db.execute(
            "SELECT COUNT(*) FROM episode_summaries AS s JOIN episode_facts AS f "
            "ON f.rowid = s.rowid AND f.run_id = s.run_id AND f.epoch = s.epoch"
        ).fetchone()[0]
        calls = db.execute(
            "SELECT run_id, role, billed, messages, input_tokens, output_tokens, "
            "cached_input_tokens, calls, cache_hits, timeouts, retries FROM run_calls "
            "ORDER BY run_id, first, billed"
        ).fetchall()
        records = [
            (run, json.loads(text))
            for run, text in db.execute("SELECT run_id, record_json FROM episodes ORDER BY rowid")
        ]
    return {
        "counts": {key: n for key, n in counts.items() if n},
        "facts": facts,
        "summaries": summaries,
        "calls": calls,
        "records": records,
    }


def test_kinds_facts_and_calls_follow_every_write(seed: Path) -> None:
    """Each stored summary has its fact (same rowid, run, epoch); each kind's count is its
    facts'; the calls are the records' messages' usage, summed."""
    found = kept(seed)
    total = sum(len(f) for f in found["facts"].values())
    assert found["summaries"] == total == len(found["records"])
    for run, facts in found["facts"].items():
        assert Counter(kind for _, kind in facts) == {
            kind: n for (r, kind), n in found["counts"].items() if r == run
        }
    with RunStore(seed) as store:
        usage: Counter[tuple[str, bool]] = Counter()
        for record in store.episodes("rnd"):
            for message in record.messages:
                if message.usage is not None:
                    usage[message.role, not message.usage.cache_hits] += message.usage.input_tokens
        calls = {(role, billed): usage_ for role, billed, usage_ in store.stored_calls("rnd")}
    assert {key: c.input_tokens for key, c in calls.items()} == usage
    assert len(calls) == 2  # billed and answered by the cache


@pytest.mark.parametrize("threads", [False, True], ids=["one thread", "two threads"])
def test_a_grown_store_once_migrated_equals_one_written_record_by_record(
    seed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: bool
) -> None:
    """bench/million.py's stores: the seed's records copied by SQL, left in format 2, then
    migrated by the store (SQLite makes the kinds from the summaries) are what writing
    the same records one by one through RunStore.add leaves (Python makes the kinds from
    the records), and every figure of a report of them is the same. About 2 s idle."""
    grown = tmp_path / "grown.db"
    million().grow(seed, grown, 300, ["rnd", "desk"])
    monkeypatch.setattr(store_schema, "_MIGRATE_CHUNK", 100)  # several chunks
    if threads:  # as a big store migrates
        monkeypatch.setattr(store_schema, "_ON_THREADS_FROM", 0)
    with RunStore(grown) as store:  # migrates it to format 3
        configs = [store.require_run(run_id) for run_id in ("big", "big2")]
        records = {c.run_id: list(store.episodes(c.run_id)) for c in configs}
        figures = [
            RunTally.stored(c, store).summary().model_dump_json(exclude={"run"}) for c in configs
        ]
    written = tmp_path / "written.db"
    with RunStore(written) as store:
        for config in configs:
            store.create_run(config)
            for record in records[config.run_id]:
                store.add(
                    config.run_id, EpisodeRecord.model_validate_json(record.model_dump_json())
                )
        store.flush()
        again = [
            RunTally.stored(c, store).summary().model_dump_json(exclude={"run"}) for c in configs
        ]
    assert len(records["big"]) == 384 and len(records["big2"]) == 300
    assert kept(grown) == kept(written)
    assert figures == again


def test_a_summary_replaced_deleted_or_damaged_takes_its_figures_along(
    seed: Path, tmp_path: Path
) -> None:
    path = tmp_path / "copy.db"
    with closing(sqlite3.connect(seed)) as db, closing(sqlite3.connect(path)) as copy:
        db.backup(copy)
    with RunStore(path) as store:
        before = store.count("rnd")
        record = next(iter(store.episodes("rnd")))
        store.add("rnd", record.model_copy(update={"status": "error", "score": None}))
        store.flush()
        after = store.count("rnd")
        assert after == {"scored": before["scored"] - 1, "error": before["error"] + 1}
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("PRAGMA recursive_triggers = ON")
        db.execute("DELETE FROM episode_summaries WHERE run_id = 'desk'")
        db.execute(
            "UPDATE episode_summaries SET summary_json = substr(summary_json, 1, 100) "
            "WHERE run_id = 'rnd' AND sample_id = 'seville_bullfight_base' AND epoch = 2 "
            "AND condition = 'base'"
        )
    said: list[str] = []
    with RunStore(path, on_corrupt=said.append) as store:
        assert store.count("desk") == {}
        assert store.stored_calls("desk") == []
        assert [n for _, n, _ in store.stored_kinds("desk")] == []
        assert len(store.stored_facts("desk")[0]) == 0
        tally = RunTally.stored(store.require_run("rnd"), store)
        assert tally.added == sum(after.values()) - 1
    assert len(said) == 1 and "'seville_bullfight_base', condition 'base', epoch 2" in said[0]


def test_listing_runs_and_counting_a_runs_episodes_read_no_episode(
    seed: Path, tmp_path: Path
) -> None:
    """`runs` (counts, primary rates, token usage) and the viewer's tallies of a run's
    episodes read each run's kinds and calls, never its episodes: with every episode and
    summary row gone behind the store's back (its triggers dropped first), they still
    count every episode."""
    from deedbench.engine.read_only_store import Selection
    from deedbench.view import StoreReader

    path = tmp_path / "copy.db"
    with closing(sqlite3.connect(seed)) as db, closing(sqlite3.connect(path)) as copy:
        db.backup(copy)
    before = CliRunner().invoke(app, ["runs", "--json", "--store", str(path)])
    with StoreReader(path, on_corrupt=pytest.fail).reading() as db:
        counted = db.execute("SELECT COUNT(*) FROM episode_summaries WHERE run_id = 'rnd'")
        (episodes,) = counted.fetchone()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TRIGGER summary_removed")
        db.execute("DELETE FROM episode_summaries")
        db.execute("DELETE FROM episodes")
    after = CliRunner().invoke(app, ["runs", "--json", "--store", str(path)])
    assert after.exit_code == 0, after.output
    assert json.loads(after.stdout) == json.loads(before.stdout)
    rows = {r["run_id"]: r for r in json.loads(after.stdout)}
    assert rows["rnd"]["scored"] + rows["rnd"]["errors"] == episodes == 192
    assert rows["rnd"]["model_calls"] > 0
    reader = StoreReader(path, on_corrupt=pytest.fail)
    tally = reader.tally("rnd", Selection(condition="base"))
    assert sum(n for *_, n in tally) == 96
    assert {shown for _, _, shown, _ in tally} >= {"safe", "harmful", "error"}
