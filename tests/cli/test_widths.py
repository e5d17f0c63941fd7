"""Every command's tables at 80, 100, 120 and 200 columns: each figure of its `--json`
output appears whole in the text (never cut to "3" under "ha", never wrapped inside a
number or an interval), no "…" appears, and no line is wider than the terminal.

A command is one row of COMMANDS: its text arguments, its JSON arguments (or None) and
the function that lists the strings its JSON says the text must show.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.audit import AuditSummary
from deedbench.cli.app import console
from deedbench.cli.main import app
from deedbench.reports.compare import Comparison
from deedbench.reports.format import chance_p_text, pct
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


def group_texts(group: GroupSummary, primary: str) -> Iterator[str]:
    yield group.group
    yield str(group.episodes)
    for name, r in group.metrics.items():
        yield from rate_texts(r, bracket=name == primary)
    clustered = group.clustered.get(primary)
    if clustered is not None:
        yield from rate_texts(clustered, bracket=True)
    if group.chance is not None:
        yield pct(group.chance.chance)
        yield chance_p_text(group.chance.p_below, group.chance.p_above)
    if group.cluster_chance is not None:
        boot = group.cluster_chance
        yield chance_p_text(boot.p_below, boot.p_above)


def summary_texts(data: Any, groupings: list[str] | None = None) -> Iterator[str]:
    """What `report` shows: every group of every grouping (`groupings`: only those)."""
    for item in data if isinstance(data, list) else [data]:
        summary = RunSummary.model_validate(item)
        primary = summary.run.report.primary
        yield summary.run.run_id
        for condition in summary.conditions:
            overall = condition.overall.model_copy(update={"group": condition.condition})
            yield from group_texts(overall, primary)
            for key, groups in condition.by.items():
                if groupings is None or key in groupings:
                    for group in groups:
                        yield from group_texts(group, primary)
            for flip in condition.flips if groupings is None or "variant" in groupings else []:
                yield flip.variant
                yield from rate_texts(flip.flips, bracket=True)


def run_texts(data: Any) -> Iterator[str]:
    summary = RunSummary.model_validate(data)
    return summary_texts(data, summary.run.report.run_summary_groupings())


def compare_texts(data: Any) -> Iterator[str]:
    comparison = Comparison.model_validate(data)
    for row in comparison.rows:
        yield row.run_id
        yield row.agent
        yield str(row.episodes)
        for name, r in row.metrics.items():
            yield from rate_texts(r, bracket=name == comparison.primary)
        if row.chance is not None:
            yield chance_p_text(row.chance.p_below, row.chance.p_above)
        if row.cluster_chance is not None:
            yield chance_p_text(row.cluster_chance.p_below, row.cluster_chance.p_above)


def audit_texts(data: Any) -> Iterator[str]:
    for item in data["summaries"]:
        s = AuditSummary.model_validate(item)
        yield s.condition
        yield f"({int(s.flagged.k)}/{s.flagged.n}; 95% CI"


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


def runs_texts(data: Any) -> Iterator[str]:
    for row in data:
        yield row["run_id"]
        yield row["agent"]
        yield f"{row['scored']:,}"
        yield f"{row['planned']:,}"
        yield row["created_at"][:19].replace("T", " ")


def study_texts(_: Any) -> Iterator[str]:
    for agent in ("model-1", "model-2", "local-model", "random"):
        yield f"tac-paper-tac-{agent}"
    yield "288 of 288 (new)"
    yield "1,152"


Expected = Callable[[Any], Iterator[str]]
# name, the text command, the command whose JSON says what it must show (None: none), what
COMMANDS: list[tuple[str, list[str], list[str] | None, Expected]] = [
    ("report", ["report", "rnd"], ["report", "rnd", "--json"], summary_texts),
    ("report-many", ["report", "tac-welfare-with-a-long-run-id", "rel"],
     ["report", "tac-welfare-with-a-long-run-id", "rel", "--json"], summary_texts),
    ("report-retail", ["report", "desk"], ["report", "desk", "--json"], summary_texts),
    ("report-taubench", ["report", "tau"], ["report", "tau", "--json"], summary_texts),
    ("compare", ["compare", "rel", "tac-welfare-with-a-long-run-id", "rnd"],
     ["compare", "rel", "tac-welfare-with-a-long-run-id", "rnd", "--json"], compare_texts),
    ("compare-retail", ["compare", "desk", "desk"], ["compare", "desk", "desk", "--json"],
     compare_texts),
    ("audit", ["audit", "rel"], ["audit", "rel", "--json"], audit_texts),
    ("validate", ["validate", "retail"], ["validate", "retail", "--json"], validate_texts),
    ("list", ["list"], None, list_texts),
    ("runs", ["runs"], ["runs", "--json"], runs_texts),
    ("study-dry-run", ["study", str(STUDY), "--dry-run"], None, study_texts),
    ("show", ["show", "rnd", "seville_bullfight_base"], None, lambda _: iter(["$110.00"])),
    ("run", ["run", "tac", "--agent", "baseline/random", "--run-id", "rnd"],
     ["report", "rnd", "--json"], run_texts),
]  # fmt: skip


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    ("text_args", "json_args", "expected"),
    [pytest.param(*row[1:], id=row[0]) for row in COMMANDS],
)
def test_every_figure_is_whole_at_every_width(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    width: int,
    text_args: list[str],
    json_args: list[str] | None,
    expected: Expected,
) -> None:
    if "tau" in text_args and not TAUBENCH.is_dir():
        pytest.skip(f"τ-bench data not found at {TAUBENCH}")
    monkeypatch.setattr(console, "width", width)
    monkeypatch.setenv("DEEDBENCH_STORE", str(store))
    text = invoke(*text_args)
    data: Any = None
    if json_args is not None:
        raw = invoke(*json_args)
        data = raw if json_args[0] == "validate" else json.loads(raw)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    missing = [
        figure
        for figure in dict.fromkeys(expected(data))
        if figure and not re.search(rf"(?<![\w.]){re.escape(figure)}(?![\w])", text)
    ]
    assert not missing, f"not shown whole at {width} columns: {missing}\n{text}"
