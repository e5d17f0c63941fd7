"""The viewer's catalog: its summary is the one `deedbench report --json` prints at every
point of a live run (records added since, an episode stored again), computed in a child
process for a big run, kept on disk so a finished run's figures show at once on the
next start; and what it keeps does not grow with a run's episodes."""

from __future__ import annotations

import gc
import sqlite3
import time
import tracemalloc
from pathlib import Path

import pytest

from deedbench.audit import load_audits
from deedbench.engine import RunStore
from deedbench.records import EpisodeKey
from deedbench.reports.cost import PriceTable
from deedbench.reports.summary import RunSummary, RunTally, summarize
from deedbench.view import StoreReader
from deedbench.view.catalog import Catalog, EpisodeFilter
from deedbench.view.summaries import Summarizer, SummaryCache
from reports._html_support import Reports


def reported(path: Path, run_id: str) -> RunSummary:
    with RunStore(path) as store:
        config = store.require_run(run_id)
        audits = load_audits(store, run_id)
        return summarize(config, store.summaries(run_id), PriceTable.load(), audits=audits)


def test_a_live_runs_summary_is_the_reports_at_every_point(
    reports: Reports, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("deedbench.view.catalog.RECOMPUTE_FACTOR", 0.0)  # always due
    with RunStore(reports.tac.path.parent / "runs.db") as source:
        config = source.require_run("mixed")
        records = list(source.episodes("mixed"))
    failed = next(r for r in records if r.status == "error")
    scored = [r for r in records if r.status == "scored"]
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        store.create_run(config)
        catalog = Catalog(StoreReader(path, on_corrupt=pytest.fail), PriceTable.load())
        for batch in (scored[:5], [failed, *scored[5:40]], scored[40:]):
            for record in batch:
                store.add("mixed", record)
            store.flush()
            time.sleep(0.01)  # a new version of the run to see
            summarized, _ = catalog.summary("mixed")
            assert summarized.summary == reported(path, "mixed")
            assert summarized.episodes == len(list(store.summaries("mixed")))
        store.add("mixed", failed.model_copy(update={"status": "scored", "error": None}))
        store.flush()
        summarized, _ = catalog.summary("mixed")
        catalog.close()
    assert summarized.summary == reported(path, "mixed")
    assert summarized.summary.errors == 0


def test_a_snapshot_is_not_changed_by_later_records(reports: Reports) -> None:
    with RunStore(reports.tac.path.parent / "runs.db") as source:
        config = source.require_run("mixed")
        records = list(source.summaries("mixed"))
    tally = RunTally.of(config, records[:10])
    taken = tally.snapshot()
    before = taken.summary(PriceTable.load())
    for record in records[10:]:
        tally.add(record)
    assert taken.summary(PriceTable.load()) == before
    assert tally.summary(PriceTable.load()) != before


def test_a_big_runs_summary_is_computed_in_a_child_process(
    reports: Reports, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above `IN_PROCESS` stored episodes of a store that keeps no kinds (an earlier
    format, read from its summaries), the server only receives the summary's JSON: a
    summary computed here would fail."""
    path = reports.tac.path.parent / "runs.db"
    monkeypatch.setattr("deedbench.view.summaries.IN_PROCESS", 0)
    monkeypatch.setattr(StoreReader, "counted", property(lambda self: False))

    def here(*args: object) -> None:
        raise AssertionError("summarized in the server")

    monkeypatch.setattr("deedbench.view.summaries.summarize", here)
    catalog = Catalog(StoreReader(path, on_corrupt=pytest.fail), PriceTable.load())
    try:
        summarized, _ = catalog.summary("mixed")
    finally:
        catalog.close()
    assert summarized.summary == reported(path, "mixed")
    assert summarized.episodes == 192


def test_a_big_runs_summary_from_its_kinds_is_computed_in_the_server(
    reports: Reports, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that keeps its runs' kinds (format 3) is summarized from them on a thread
    of the server, however big the run: no child process, no summary read."""
    path = reports.tac.path.parent / "runs.db"
    monkeypatch.setattr("deedbench.view.summaries.IN_PROCESS", 0)

    def child(*args: object) -> None:
        raise AssertionError("summarized in a child process")

    def summaries(*args: object, **kwargs: object) -> None:
        raise AssertionError("read every summary")

    monkeypatch.setattr("deedbench.view.summaries.Summarizer._in_child", child)
    monkeypatch.setattr(StoreReader, "light_records", summaries)
    catalog = Catalog(StoreReader(path, on_corrupt=pytest.fail), PriceTable.load())
    try:
        summarized, _ = catalog.summary("mixed")
    finally:
        catalog.close()
    assert summarized.summary == reported(path, "mixed")
    assert summarized.episodes == 192


def test_figures_computed_once_are_there_at_once_on_the_next_start(
    reports: Reports, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second viewer of the same store (a restart) lists every finished run with its
    figures in its first answer, computing none; a run written since is computed anew."""
    path = tmp_path / "runs.db"
    with (
        sqlite3.connect(reports.tac.path.parent / "runs.db") as source,
        sqlite3.connect(path) as copy,
    ):
        source.backup(copy)
    cache = SummaryCache(tmp_path / "cache" / "view.db", on_problem=pytest.fail)
    first = Catalog(StoreReader(path, on_corrupt=pytest.fail), PriceTable.load(), cache)
    run_ids = first.reader.run_ids()
    for run_id in run_ids:
        first.summary(run_id)
    first.close()

    def computing(*args: object) -> None:
        raise AssertionError("computed again")

    monkeypatch.setattr(Summarizer, "submit", computing)
    again = Catalog(StoreReader(path, on_corrupt=pytest.fail), PriceTable.load(), cache)
    listed = {config.run_id: summarized for config, _, summarized in again.overview()}
    assert listed.keys() == set(run_ids)
    for run_id, summarized in listed.items():
        assert summarized is not None and summarized.summary == reported(path, run_id)
    monkeypatch.undo()
    with RunStore(path) as store:  # the mixed run gets one more epoch's record
        record = next(iter(store.episodes("mixed"))).model_copy(update={"epoch": 3})
        store.add("mixed", record)
    changed = Catalog(StoreReader(path, on_corrupt=pytest.fail), PriceTable.load(), cache)
    summarized, _ = changed.summary("mixed")
    changed.close()
    assert summarized.episodes == 193 and summarized.summary == reported(path, "mixed")


def _retained(path: Path, run_id: str) -> int:
    """Bytes a catalog still holds once it has listed a run's episodes (both orders, a
    filter, the last page), its facets and one episode, and summarized it."""
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    catalog = Catalog(StoreReader(path, on_corrupt=pytest.fail), PriceTable.load())
    for newest in (False, True):
        listing = catalog.episodes(
            run_id, EpisodeFilter(), newest_first=newest, offset=0, limit=100
        )
        catalog.episodes(
            run_id, EpisodeFilter(), newest_first=newest, offset=listing.total - 5, limit=100
        )
    catalog.episodes(
        run_id,
        EpisodeFilter(groups={"scenario": "seville_bullfight"}, counted="welfare"),
        newest_first=False,
        offset=0,
        limit=100,
    )
    catalog.facets(run_id)
    first = listing.rows[0]
    catalog.episode(run_id, EpisodeKey(first["sample"], first["condition"], first["epoch"]))
    catalog.summary(run_id)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    catalog.close()
    return held


def test_what_the_catalog_keeps_does_not_grow_with_the_run(
    reports: Reports, tmp_path: Path
) -> None:
    """A run ten times as big (1,920 episodes against 192: more epochs) leaves the
    catalog holding about as much; a record per episode kept would be megabytes more."""
    path = tmp_path / "runs.db"
    with RunStore(reports.tac.path.parent / "runs.db") as source:
        config = source.require_run("mixed")
        records = list(source.episodes("mixed"))
    with RunStore(path) as store:
        for run_id, copies in (("small", 1), ("big", 10)):
            store.create_run(config.model_copy(update={"run_id": run_id, "epochs": 2 * copies}))
            for copy in range(copies):
                for record in records:
                    store.add(run_id, record.model_copy(update={"epoch": record.epoch + 2 * copy}))
    tracemalloc.start()
    try:
        _retained(path, "small")  # what every catalog loads once (imports, caches)
        small, big = _retained(path, "small"), _retained(path, "big")
    finally:
        tracemalloc.stop()
    assert big - small < 150_000, (small, big)
