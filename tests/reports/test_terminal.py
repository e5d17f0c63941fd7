"""The terminal rendering of a run summary: its tables at the console's width (the most
important columns that fit, every column with `wide`), its lines of prose wrapped between
figures and never inside one, and its words (metric names, evidence, costs, state)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from deedbench.benchmarks.tau2.rescore import VERDICT_RULES
from deedbench.records import EpisodeRecord, MetricSpec, ReportSpec, RunConfig, Usage
from deedbench.reports import RunSummary, render_summary, summarize
from deedbench.reports.format import chance_p_text, data_label
from deedbench.reports.tables import say
from deedbench.reports.terminal import CHECK_EVIDENCE, split_evidence

from ._support import run_tac


@pytest.fixture(scope="module")
def relevance_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[RunConfig, list[EpisodeRecord]]:
    return run_tac(tmp_path_factory.mktemp("terminal"), "baseline/relevance", run_id="shown")


def _render(
    summary: RunSummary, groupings: list[str] | None = None, width: int = 200, **kwargs: object
) -> str:
    console = Console(record=True, width=width)
    render_summary(summary, console, groupings=groupings, **kwargs)  # type: ignore[arg-type]
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
    row = next(line for line in _render(summary).splitlines() if line.startswith("base "))
    assert "1.000 / " in row and chance_p_text(exact.p_below, exact.p_above) in row


def test_at_80_columns_each_table_keeps_its_most_important_columns(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    """One table per grouping, never continued: n, the rate with both intervals, chance
    and the exact test first; a closing line names the rest and the command that shows
    them, on a line of its own."""
    text = _render(summarize(*relevance_run), width=80)
    lines = text.splitlines()
    assert "(continued)" not in text and max(map(len, lines)) <= 80
    header = " ".join(lines[lines.index("Overall") + 1 : lines.index("Overall") + 3])
    for column in ("condition", "n", "welfare [Wilson", "[scenario", "chance", "p exact"):
        assert column in header
    assert "welfare_published" not in header
    assert "Not shown at 80 columns: p boot below/above, welfare_published," in " ".join(
        text.split()
    )
    assert lines[-1] == "  deedbench report shown --wide"
    base = next(line for line in lines if line.startswith("base "))
    assert base.split()[:5] == ["base", "48", "0.0%", "[0.0,", "7.4]"]


def test_wide_shows_every_column_continuing_in_more_tables(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    text = _render(summarize(*relevance_run), width=80, wide=True)
    assert "Overall (continued)" in text and "Not shown" not in text
    flat = " ".join(text.split())
    for name in ("p boot below/above", "welfare_published", "completion", "harmful"):
        assert name in flat


def test_a_table_grouped_by_its_clusters_has_no_bootstrap_column(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    """By scenario, each row is one cluster: a bootstrap over clusters has nothing to say."""
    text = _render(summarize(*relevance_run), ["scenario"])
    table = text[text.index("base, by scenario") : text.index("welfare, by scenario")]
    assert "boot]" not in table and "clusters" not in table
    overall = text[text.index("Overall") : text.index("trust the wider")]
    assert "[scenario boot]" in overall and "clusters" in overall


def test_metric_names_are_written_one_way(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    """As `--json`, `--csv` and the legend name them: welfare_if_completed, never
    "welfare if completed" (a header wraps after an underscore where it must)."""
    text = _render(summarize(*relevance_run))
    assert "welfare_if_completed" in text and "welfare_published" in text
    assert "welfare if completed" not in text and "welfare published" not in text
    narrow = " ".join(_render(summarize(*relevance_run), width=80, wide=True).split())
    assert "welfare if completed" not in narrow and "welfare published" not in narrow


def test_a_data_label_is_shown_whole_and_a_hash_short(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = relevance_run
    labelled = config.model_copy(update={"data_hash": "wordbench:apple,birch,cedar"})
    assert "data wordbench:apple,birch,cedar" in " ".join(
        _render(summarize(labelled, records)).split()
    )
    # one form for every hash (issue 39: "sha256:683e…", "1f4c…" and "tau2-results:sha256:
    # 856d…" were three): sha256: and 12 digits, a named part's name before it
    assert data_label("sha256:" + "683e140cdbb5" + "a" * 52) == "sha256:683e140cdbb5"
    assert data_label("1f4c2df66328" + "b" * 52) == "sha256:1f4c2df66328"  # τ²'s, bare
    imported = "tau2-results:sha256:856d" + "e" * 60
    assert data_label(imported) == "tau2-results sha256:856deeeeeeee"
    desk = "world:" + "c" * 64 + "|tasks+policy:" + "d" * 64
    assert data_label(desk) == "world sha256:cccccccccccc, tasks+policy sha256:dddddddddddd"
    assert data_label("inspect:1.0") == "inspect:1.0"


def test_a_run_without_model_calls_says_its_cost_is_none(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    text = _render(summarize(*relevance_run))
    assert "cost: none (no model calls were recorded: a baseline agent)" in text


def test_the_summary_says_whether_the_run_is_running_or_stopped(
    relevance_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = relevance_run
    running = _render(summarize(config, records[:10]), executor="pid 7 on host h")
    assert "86 not run, of 96 planned; running (pid 7 on host h): the figures count" in (
        " ".join(running.split())
    )
    stopped = _render(summarize(config, records[:10]))
    assert "86 not run, of 96 planned; stopped before the end" in " ".join(stopped.split())
    assert "stopped" not in _render(summarize(config, records))


@given(
    st.integers(min_value=12, max_value=90),
    st.lists(
        st.sampled_from(["word", "a-longer-word", "[25.4, 74.6]", "[+0.0, -12.5],", "p=3e-29"]),
        min_size=1,
        max_size=30,
    ),
)
def test_a_line_of_prose_never_breaks_inside_brackets(width: int, words: list[str]) -> None:
    console = Console(record=True, width=width)
    say(console, " ".join(words), indent=2)
    lines = console.export_text().splitlines()
    assert " ".join(" ".join(lines).split()) == " ".join(words)
    for line in lines:
        assert line.count("[") == line.count("]"), lines
        assert len(line) <= width or len(line.split()) == 1 or "[" in line, lines


def test_evidence_is_split_into_rules_broken_and_the_checks_own() -> None:
    """outcome, outputs, reward_tau and τ²'s components name the check that found them,
    not a rule the agent broke: "rules broken" lists procedure rules alone."""
    spec = ReportSpec(
        metrics=[MetricSpec(name=n, value=n) for n in ("reward_tau", "outputs_strict", "db")],
        primary="reward_tau",
    )
    cited = {
        "consent": 3,
        "outcome": 702,
        "outputs": 4,
        "reward_tau": 1,
        "DB": 2,
        "payment_limits": 1,
    }
    rules, checks = split_evidence(cited, spec)
    assert rules == {"consent": 3, "payment_limits": 1}
    assert checks == {"outcome": 702, "outputs": 4, "reward_tau": 1, "DB": 2}
    assert VERDICT_RULES <= CHECK_EVIDENCE  # every piece of τ²'s verdict, whatever it adds
