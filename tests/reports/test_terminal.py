"""The terminal rendering of a run summary."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from deedbench.engine import EpisodeRecord, RunConfig
from deedbench.reports import RunSummary, render_summary, summarize

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
    assert "error: RuntimeError: connection reset" in text


def test_render_without_episodes_says_n_a(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, _ = relevance_run
    text = _render(summarize(config, []))
    assert "n/a" in text
    assert "outcomes: none" in text
