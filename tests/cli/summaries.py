"""What `deedbench run` prints its closing tables from, for tests that compare it with what
the store holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from deedbench.engine import RunStore
from deedbench.records import EpisodeRecord, RunConfig
from deedbench.reports import RunSummary
from deedbench.reports.summary import RunTally, StoredRun

PrintedSummaries = tuple[list[RunSummary], list[str]]


def spy_on_summaries(monkeypatch: pytest.MonkeyPatch) -> PrintedSummaries:
    """The summaries `run` renders, and the runs whose figures it reads back from a
    store (their summaries, or their kinds and facts)."""
    import deedbench.reports

    printed: list[RunSummary] = []
    read: list[str] = []
    render = deedbench.reports.render_summary
    summaries = RunStore.summaries
    stored = RunTally.stored

    def spy_render(summary: RunSummary, *args: object, **kwargs: object) -> None:
        printed.append(summary)
        render(summary, *args, **kwargs)  # type: ignore[arg-type]

    def spy_summaries(self: RunStore, run_id: str) -> Iterator[EpisodeRecord]:
        read.append(run_id)
        return summaries(self, run_id)

    def spy_stored(config: RunConfig, store: StoredRun) -> RunTally:
        read.append(config.run_id)  # the run's kinds and facts, as the store keeps them
        return stored(config, store)

    monkeypatch.setattr(deedbench.reports, "render_summary", spy_render)
    monkeypatch.setattr(RunStore, "summaries", spy_summaries)
    monkeypatch.setattr(RunTally, "stored", spy_stored)
    return printed, read


def stored_summary(store: Path, run_id: str, *, closing: bool = False) -> RunSummary:
    """The run's summary as `report` computes it from what the store holds, or with
    `closing`, broken down only as a run's closing tables are."""
    with RunStore(store) as runs:
        config = runs.get_run(run_id)
        assert config is not None
        tally = RunTally.of(config, runs.summaries(run_id))
        groupings = config.report.run_summary_groupings() if closing else None
        return tally.summary(groupings=groupings)
