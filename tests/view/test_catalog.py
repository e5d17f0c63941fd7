"""The viewer's catalog tallies a run's records as it reads them, and its summary is the
one `deedbench report --json` prints at every point of a live run: records added since,
an episode stored again (a failed one run again), a summary taken while more arrive."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from deedbench.engine import RunStore
from deedbench.reports.cost import PriceTable
from deedbench.reports.summary import RunSummary, RunTally, summarize
from deedbench.view import StoreReader
from deedbench.view.catalog import Catalog
from reports._html_support import Reports


def reported(path: Path, run_id: str) -> RunSummary:
    with RunStore(path) as store:
        config = store.require_run(run_id)
        return summarize(config, store.summaries(run_id), PriceTable.load())


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
        assert not catalog._run("mixed").recount  # counted as read, never re-read
        store.add("mixed", failed.model_copy(update={"status": "scored", "error": None}))
        store.flush()
        summarized, _ = catalog.summary("mixed")
    assert catalog._run("mixed").recount  # stored again: read anew
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
