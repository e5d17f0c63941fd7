"""Every command's tables at 80, 100, 120 and 200 columns.

By default a command lays its tables out for the width: each table keeps the columns that
fit, most important first, so the headline figures (each group's n and primary rate with
its interval, the bootstrap interval and the tests against chance overall, a run's state
and primary rate...) are whole in one table, never "(continued)". With `--wide` every
figure of its `--json` output appears whole. Either way no figure is cut to "3" under
"ha" or wrapped inside a number or an interval, no "…" appears, and no line is wider than
the terminal.

A command is one row of COMMANDS: its text arguments, whether it takes --wide, its JSON
arguments (or None), the function that lists the strings the JSON says its whole text
must show, and the one listing those its fitted text must show at any width.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import _shared
from deedbench.audit import AuditSummary
from deedbench.cli.app import console
from deedbench.cli.main import app
from deedbench.reports.compare import Comparison
from deedbench.reports.format import chance_p_text, interval, pct
from deedbench.reports.summary import GroupSummary, RunSummary
from deedbench.stats import ClusterRate, Rate

# tests/cli/<this file>: parents[2] is the checkout, its parent holds `shared`.
TAUBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "taubench" / "retail"
STUDY = Path(__file__).resolve().parents[2] / "examples" / "tac-paper.toml"
WIDTHS = (80, 100, 120, 200)


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TAC runs (a perfect one, the relevance trap, chance), retail and τ-bench runs."""
    path = tmp_path_factory.mktemp("widths") / "runs.db"
    runs: list[list[str]] = [
        ["tac", "--agent", "baseline/welfare", "--run-id", "tac-welfare-with-a-long-run-id"],
        ["tac", "--agent", "baseline/relevance", "--run-id", "rel"],
        ["tac", "--agent", "baseline/random", "--run-id", "rnd"],
        ["retail", "--agent", "baseline/reckless", "--run-id", "desk", "--limit", "20"],
    ]
    if TAUBENCH.is_dir():
        runs.append(
            ["taubench-retail", "--agent", "baseline/oracle", "--run-id", "tau", "--data",
             str(TAUBENCH), "-T", "split=dev", "-T", "tasks=0-5"]
        )  # fmt: skip
    for args in runs:
        CliRunner().invoke(app, ["run", *args, "--epochs", "2", "--store", str(path)])
    invoke("audit", "rel", "--store", str(path))
    return path


def rate_texts(r: Rate | ClusterRate, *, bracket: bool) -> Iterator[str]:
    if r.value is not None:
        yield pct(r.value)
    if bracket and r.ci_low is not None and r.ci_high is not None:
        yield f"[{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]"


def group_texts(group: GroupSummary, primary: str, *, headline: bool = False) -> Iterator[str]:
    """A group's row: every figure, or (`headline`) its label, n and primary rate."""
    yield group.group
    yield str(group.episodes)
    for name, r in group.metrics.items():
        if name == primary or not headline:
            yield from rate_texts(r, bracket=name == primary)
    if headline:
        return
    clustered = group.clustered.get(primary)
    if clustered is not None:
        yield from rate_texts(clustered, bracket=True)
    if group.chance is not None:
        yield pct(group.chance.chance)
        yield chance_p_text(group.chance.p_below, group.chance.p_above)
    if group.cluster_chance is not None:
        boot = group.cluster_chance
        yield chance_p_text(boot.p_below, boot.p_above)


def overall_headline(group: GroupSummary, primary: str) -> Iterator[str]:
    """The overall row's headline: n, the primary rate with both intervals, chance and
    the exact test against it."""
    yield from group_texts(group, primary, headline=True)
    clustered = group.clustered.get(primary)
    if clustered is not None:
        yield from rate_texts(clustered, bracket=True)
    if group.chance is not None:
        yield pct(group.chance.chance)
        yield chance_p_text(group.chance.p_below, group.chance.p_above)


def summary_texts(
    data: Any, groupings: list[str] | None = None, *, headline: bool = False
) -> Iterator[str]:
    """What `report` shows: every group of every grouping (`groupings`: only those);
    `headline`: what it shows at any width."""
    for item in data if isinstance(data, list) else [data]:
        summary = RunSummary.model_validate(item)
        primary = summary.run.report.primary
        yield summary.run.run_id
        for condition in summary.conditions:
            overall = condition.overall.model_copy(update={"group": condition.condition})
            if headline:
                yield from overall_headline(overall, primary)
            else:
                yield from group_texts(overall, primary)
            if condition.versus_first is not None:  # a line of its own, interval whole
                d = condition.versus_first.difference
                if d.ci_low is not None and d.ci_high is not None:
                    yield f"[{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}]"
            for key, groups in condition.by.items():
                if groupings is None or key in groupings:
                    for group in groups:
                        yield from group_texts(group, primary, headline=headline)
            for flip in condition.flips if groupings is None or "variant" in groupings else []:
                yield flip.variant
                yield from rate_texts(flip.flips, bracket=True)


def summary_headline(data: Any) -> Iterator[str]:
    return summary_texts(data, headline=True)


def run_texts(data: Any) -> Iterator[str]:
    summary = RunSummary.model_validate(data)
    return summary_texts(data, summary.run.report.run_summary_groupings(), headline=True)


def compare_texts(data: Any, *, headline: bool = False) -> Iterator[str]:
    comparison = Comparison.model_validate(data)
    for row in comparison.rows:
        yield row.run_id
        yield row.agent
        yield str(row.episodes)
        for name, r in row.metrics.items():
            if name == comparison.primary or not headline:
                yield from rate_texts(r, bracket=name == comparison.primary)
        if row.chance is not None:
            yield pct(row.chance.chance)
            yield chance_p_text(row.chance.p_below, row.chance.p_above)
        if row.cluster_chance is not None and not headline:
            yield chance_p_text(row.cluster_chance.p_below, row.cluster_chance.p_above)


def compare_headline(data: Any) -> Iterator[str]:
    return compare_texts(data, headline=True)


def audit_texts(data: Any) -> Iterator[str]:
    for item in data["summaries"]:
        s = AuditSummary.model_validate(item)
        yield s.condition
        yield interval(s.flagged)


def validate_texts(lines: str) -> Iterator[str]:
    checks = [json.loads(line) for line in lines.splitlines()]
    passing = sum(not c["problems"] for c in checks)
    yield f"{passing} of {len(checks)} tasks pass"


def list_texts(_: Any) -> Iterator[str]:
    from deedbench.agents import agent_kinds
    from deedbench.benchmarks import benchmark_class, benchmarks

    for name in benchmarks():
        bench = benchmark_class(name)
        yield name
        yield from agent_kinds(bench)
        yield from (spec.name for spec in bench.option_specs)


def runs_texts(data: Any, *, headline: bool = False) -> Iterator[str]:
    for row in data:
        yield row["run_id"]
        yield row["agent"]
        yield row["state"]
        for rate in row["rates"]:
            yield interval(Rate.model_validate(rate))
        if not headline:
            yield f"{row['scored']:,} of {row['planned']:,}"
            yield row["created_at"][:19].replace("T", " ")


def runs_headline(data: Any) -> Iterator[str]:
    return runs_texts(data, headline=True)


def study_texts(_: Any) -> Iterator[str]:
    yield from study_headline(_)
    yield from ("anthropic/MODEL-1", "openai/MODEL-2", "openai-compatible/MODEL-3")


def study_headline(_: Any) -> Iterator[str]:
    for agent in ("model-1", "model-2", "local-model", "random"):
        yield f"tac-paper-tac-{agent}"
    yield "288 of 288 (new)"
    yield "1,152"
    yield "6.03"


Expected = Callable[[Any], Iterator[str]]
# name, the text command, whether it takes --wide, the command whose JSON says what it
# must show (None: none), what it shows with --wide (all of it), what it shows at any width
COMMANDS: list[tuple[str, list[str], bool, list[str] | None, Expected, Expected]] = [
    ("report", ["report", "rnd"], True, ["report", "rnd", "--json"], summary_texts,
     summary_headline),
    ("report-many", ["report", "tac-welfare-with-a-long-run-id", "rel"], True,
     ["report", "tac-welfare-with-a-long-run-id", "rel", "--json"], summary_texts,
     summary_headline),
    ("report-retail", ["report", "desk"], True, ["report", "desk", "--json"], summary_texts,
     summary_headline),
    ("report-taubench", ["report", "tau"], True, ["report", "tau", "--json"], summary_texts,
     summary_headline),
    ("compare", ["compare", "rel", "tac-welfare-with-a-long-run-id", "rnd"], True,
     ["compare", "rel", "tac-welfare-with-a-long-run-id", "rnd", "--json"], compare_texts,
     compare_headline),
    ("compare-retail", ["compare", "desk", "desk"], True, ["compare", "desk", "desk", "--json"],
     compare_texts, compare_headline),
    ("audit", ["audit", "rel"], False, ["audit", "rel", "--json"], audit_texts, audit_texts),
    ("validate", ["validate", "retail"], False, ["validate", "retail", "--json"], validate_texts,
     validate_texts),
    ("list", ["list"], True, None, list_texts, list_texts),
    ("runs", ["runs"], True, ["runs", "--json"], runs_texts, runs_headline),
    # docs/studies-and-ray.md's dry-run block, with stand-in keys (a dry run builds the models)
    ("study-dry-run", ["study", str(STUDY), "--dry-run"], True, None, study_texts,
     study_headline),
    ("show", ["show", "rnd", "seville_bullfight_base"], False, None,
     lambda _: iter(["$110.00"]), lambda _: iter(["$110.00"])),
    ("run", ["run", "tac", "--agent", "baseline/random", "--run-id", "rnd"], False,
     ["report", "rnd", "--json"], run_texts, run_texts),
]  # fmt: skip


def text_and_data(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
    text_args: list[str],
    json_args: list[str] | None,
) -> tuple[str, Any]:
    """The command's text at `width` columns, and its JSON."""
    if "tau" in text_args and not TAUBENCH.is_dir():
        _shared.need("taubench")
        pytest.fail(f"τ-bench data not found at {TAUBENCH}")
    monkeypatch.setattr(console, "width", width)
    monkeypatch.setenv("DEEDBENCH_STORE", str(store))
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # a dry run builds the models
        monkeypatch.setenv(variable, "sk-test-widths-0000")
    text = invoke(*text_args)
    data: Any = None
    if json_args is not None:
        raw = invoke(*json_args)
        data = raw if json_args[0] == "validate" else json.loads(raw)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    return text, data


def missing_from(text: str, figures: Iterator[str]) -> list[str]:
    return [
        figure
        for figure in dict.fromkeys(figures)
        if figure and not re.search(rf"(?<![\w.]){re.escape(figure)}(?![\w])", text)
    ]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    ("name", "text_args", "wide", "json_args", "everything", "headline"),
    [pytest.param(*row, id=row[0]) for row in COMMANDS],
)
def test_every_figure_is_whole_at_every_width_with_wide(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
    name: str,
    text_args: list[str],
    wide: bool,
    json_args: list[str] | None,
    everything: Expected,
    headline: Expected,
) -> None:
    args = [*text_args, "--wide"] if wide else text_args
    text, data = text_and_data(store, monkeypatch, width, args, json_args)
    missing = missing_from(text, everything(data))
    assert not missing, f"not shown whole at {width} columns: {missing}\n{text}"
    assert not wide or "Not shown at" not in text


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    ("name", "text_args", "wide", "json_args", "everything", "headline"),
    [pytest.param(*row, id=row[0]) for row in COMMANDS],
)
def test_the_headline_figures_fit_one_table_at_every_width(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
    name: str,
    text_args: list[str],
    wide: bool,
    json_args: list[str] | None,
    everything: Expected,
    headline: Expected,
) -> None:
    """Without --wide, no table continues in another: the columns that do not fit are
    named in a closing line, with the command that shows them on a line of its own."""
    text, data = text_and_data(store, monkeypatch, width, text_args, json_args)
    missing = missing_from(text, headline(data))
    assert not missing, f"not shown whole at {width} columns: {missing}\n{text}"
    assert "(continued)" not in text, text
    lines = text.splitlines()
    said = [i for i, line in enumerate(lines) if line.endswith("Every column:")]
    assert ("Not shown at" in text) == bool(said), text
    for i in said:
        command = lines[i + 1]
        assert command.startswith("  deedbench ") and command.endswith(" --wide"), text


def test_at_80_columns_report_leaves_out_columns_and_says_how_to_see_them(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, _ = text_and_data(store, monkeypatch, 80, ["report", "rnd"], None)
    flat = " ".join(text.split())
    assert "Not shown at 80 columns: p boot below/above, welfare_published" in flat
    assert text.splitlines()[-1] == "  deedbench report rnd --wide"
    first = text[text.index("Overall") : text.index("trust the wider")]
    for header in ("welfare [Wilson", "[scenario", "chance", "p exact"):
        assert header in first
