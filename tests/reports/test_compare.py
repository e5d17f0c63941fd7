"""Runs side by side: rows per run and condition, contrasts between runs on shared keys."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from deedbench.records import EpisodeRecord, RunConfig
from deedbench.reports import summarize
from deedbench.reports.compare import compare_runs
from deedbench.reports.summary import EpisodeFigures, RunTally

from ._support import run_tac

Run = tuple[RunConfig, list[EpisodeRecord]]


def figures(config: RunConfig, records: Iterable[EpisodeRecord]) -> list[EpisodeFigures]:
    return RunTally.of(config, records).episodes


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Run]:
    folder = tmp_path_factory.mktemp("compare")
    relevance = run_tac(folder, "baseline/relevance", run_id="rel")
    welfare = run_tac(folder, "baseline/welfare", run_id="wel")
    return relevance, welfare


def test_one_row_per_run_and_condition_with_both_intervals(runs: tuple[Run, Run]) -> None:
    summaries = [summarize(*run) for run in runs]
    comparison = compare_runs(summaries, {c.run_id: figures(c, r) for c, r in runs})
    assert [(r.run_id, r.condition) for r in comparison.rows] == [
        ("rel", "base"),
        ("rel", "welfare"),
        ("wel", "base"),
        ("wel", "welfare"),
    ]
    assert comparison.primary == "welfare" and comparison.cluster_by == "scenario"
    doubled = [s for s in summaries for _ in range(2)]
    for row, summary in zip(comparison.rows, doubled, strict=True):
        condition = next(c for c in summary.conditions if c.condition == row.condition)
        assert row.metrics == condition.overall.metrics
        assert row.clustered == condition.overall.clustered
        assert row.chance == condition.overall.chance
    assert {r.metrics["welfare"].value for r in comparison.rows[:2]} == {0.0}
    assert {r.metrics["welfare"].value for r in comparison.rows[2:]} == {1.0}
    assert comparison.rows[1].versus_first_condition is not None
    assert comparison.rows[0].versus_first_condition is None


def test_runs_are_paired_with_the_first_per_condition(runs: tuple[Run, Run]) -> None:
    summaries = [summarize(*run) for run in runs]
    comparison = compare_runs(summaries, {c.run_id: figures(c, r) for c, r in runs})
    assert [(c.a, c.b) for c in comparison.versus_first_run] == [
        ("rel/base", "wel/base"),
        ("rel/welfare", "wel/welfare"),
    ]
    for contrast in comparison.versus_first_run:
        assert contrast.difference.value == 1.0
        assert contrast.difference.n_shared == 48
        assert contrast.difference.clusters == 12
        assert (contrast.mcnemar.b01, contrast.mcnemar.b10) == (48, 0)
    assert comparison.unpaired == []


def test_runs_on_other_data_are_listed_not_paired(runs: tuple[Run, Run]) -> None:
    (config, records), other = runs
    moved = config.model_copy(update={"run_id": "moved", "data_hash": "sha256:other"})
    summaries = [summarize(*other), summarize(moved, records)]
    comparison = compare_runs(summaries, {"wel": figures(*other), "moved": figures(moved, records)})
    assert comparison.versus_first_run == []
    assert len(comparison.unpaired) == 1 and comparison.unpaired[0].startswith("moved: data")


def test_runs_of_different_benchmarks_are_refused(runs: tuple[Run, Run]) -> None:
    (config, records), _ = runs
    retail = config.model_copy(update={"run_id": "r2", "benchmark": "retail"})
    with pytest.raises(ValueError, match="different benchmarks"):
        compare_runs(
            [summarize(config, records), summarize(retail, records)],
            {"rel": figures(config, records), "r2": figures(retail, records)},
        )
