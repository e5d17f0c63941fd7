"""The terminal rendering of a run summary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from deedbench.engine import EpisodeRecord, RunConfig, Usage
from deedbench.reports import RunSummary, render_summary, summarize
from deedbench.reports.format import chance_p_text

from ._support import run_tac


@pytest.fixture(scope="module")
def relevance_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[RunConfig, list[EpisodeRecord]]:
    return run_tac(tmp_path_factory.mktemp("terminal"), "baseline/relevance", run_id="shown")


def _render(summary: RunSummary, groupings: list[str] | None = None) -> str:
    console = Console(record=True, width=200)
    render_summary(summary, console, groupings=groupings)
    return console.export_text()


def test_render_shows_conditions_and_percentages(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    summary = summarize(*relevance_run)
    text = _render(summary)
    assert "run shown" in text and "agent baseline/relevance" in text
    assert "episodes: 96 scored, 0 errors (excluded from rates), 0 not run, of 96 planned" in text
    overall = {}
    for line in text.splitlines():
        match = re.match(r"\s*(base|welfare)\s+(\d+)\s+(\d+\.\d)% \[", line)
        if match and match.group(1) not in overall:
            overall[match.group(1)] = (int(match.group(2)), match.group(3))
    assert overall == {"base": (48, "0.0"), "welfare": (48, "0.0")}
    assert "100.0%" in text  # completion
    assert "63.9%" in text  # the chance level
    assert "base outcomes: harmful 48" in text


def test_render_has_one_table_per_condition_and_grouping(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    summary = summarize(*relevance_run)
    text = _render(summary)
    for condition in ("base", "welfare"):
        for key in ("category", "scenario", "variant"):
            assert f"{condition}, by {key}" in text
    assert "seville_bullfight" in text and "price_swap" in text
    only_category = _render(summary, ["category"])
    assert "base, by category" in only_category
    assert "by scenario" not in only_category and "by variant" not in only_category


def test_render_reports_errors_and_missing(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = relevance_run
    broken = records[0].model_copy(
        update={"status": "error", "score": None, "error": "RuntimeError: connection reset"}
    )
    summary = summarize(config, [broken, *records[1:40]])
    text = _render(summary)
    assert "39 scored, 1 errors (excluded from rates), 56 not run, of 96 planned" in text
    assert "error (1 episode): RuntimeError: connection reset" in text


def test_each_kind_of_error_says_how_many_episodes_it_stands_for(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    """Messages that differ only in numbers (attempts, seconds) are one kind of error."""
    config, records = relevance_run
    errors = [
        "m: gave up after 8 attempts in 12.5s; last error: connection refused: http://h:1/v1",
        "m: gave up after 8 attempts in 13.1s; last error: connection refused: http://h:1/v1",
        "m: gave up after 7 attempts in 300.0s; last error: connection refused: http://h:1/v1",
        "RuntimeError: the scorer broke",
    ]
    broken = [
        r.model_copy(update={"status": "error", "score": None, "error": e})
        for r, e in zip(records, errors, strict=False)
    ]
    text = " ".join(_render(summarize(config, broken)).split())
    assert f"error (3 episodes): {errors[0]}" in text
    assert "error (1 episode): RuntimeError: the scorer broke" in text
    assert errors[1] not in text


def test_timeouts_come_with_what_to_change(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = relevance_run
    timed_out = records[0].model_copy(
        update={"status": "error", "score": None, "error": "m: last error: timed out after 5s: u"}
    )
    retried = records[1].model_copy(deep=True)
    retried.usage["assistant"] = Usage(calls=1, timeouts=2)
    text = " ".join(_render(summarize(config, [timed_out, retried, *records[2:]])).split())
    assert "3 model calls timed out" in text
    assert "--concurrency 1" in text and "--timeout" in text
    assert "timed out" not in " ".join(_render(summarize(config, records)).split())


def test_how_episodes_ended_is_shown_per_condition(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = relevance_run
    cut = records[0].model_copy(update={"termination": "output_truncated"})
    text = _render(summarize(config, [cut, *records[1:]]))
    assert f"{cut.condition} ended: agent_finished 47, output_truncated 1" in text


def test_render_without_episodes_says_n_a(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, _ = relevance_run
    text = _render(summarize(config, []))
    assert "n/a" in text
    assert "outcomes: none" in text


def test_a_legend_follows_the_first_table_unless_quiet(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    summary = summarize(*relevance_run)
    text = " ".join(_render(summary).split())  # the legend wraps at the console's width
    overall, legend, category = (
        text.index("Overall"),
        text.index("When the intervals disagree, trust the wider."),
        text.index("base, by category"),
    )
    assert overall < legend < category
    assert "welfare: safe or no purchase, among the episodes the agent finished" in text
    assert "[scenario boot]: whole scenarios resampled (clusters: how many)" in text
    assert "p exact, p boot: one-sided p that welfare is below / above chance" in text
    console = Console(record=True, width=200)
    render_summary(summary, console, quiet=True)
    assert "trust the wider" not in console.export_text()


def test_a_baseline_says_what_it_is_for_and_contrasts_name_condition_and_metric(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    from deedbench.benchmarks.tac import TacBenchmark

    console = Console(record=True, width=200)
    purpose = TacBenchmark.baseline_purposes["relevance"]
    render_summary(summarize(*relevance_run), console, purpose=purpose)
    text = console.export_text()
    assert "baseline/relevance: books the best word match, the relevance trap; 0% welfare" in text
    assert "condition welfare vs base, welfare rate: +0.0 points" in text


def test_a_perfect_run_shows_the_chance_test_that_matters(tmp_path: Path) -> None:
    summary = summarize(*run_tac(tmp_path, "baseline/welfare", run_id="perfect"))
    exact = summary.conditions[0].overall.chance
    assert exact is not None and exact.p_below == 1.0 and exact.p_above < 1e-6
    row = next(line for line in _render(summary).splitlines() if line.startswith(" base "))
    assert "1.000 / " in row and chance_p_text(exact.p_below, exact.p_above) in row
