"""Terminal tables for a run summary (rich).

The primary metric is shown with two 95% intervals, Wilson's (episodes as independent
trials) and a bootstrap over clusters ("boot": scenarios or tasks resampled whole), and
two tests against chance: the exact Poisson-binomial p and the cluster-bootstrap p. The
other metrics show as plain percentages; `--json` and `--csv` have every interval.

Data (run ids, agent specs, group names, error messages) is never rich markup: it goes
through `safe`, which escapes markup and shows control characters as visible escapes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from deedbench.audit import AuditSummary
from deedbench.printable import safe
from deedbench.reports.compare import Comparison
from deedbench.reports.format import (
    CHANCE_SIDES,
    audit_cells,
    chance_p_text,
    contrast_text,
    covariate_text,
    interval,
    p_text,
    pct,
)
from deedbench.reports.summary import ConditionSummary, GroupSummary, RunSummary
from deedbench.stats import ChanceTest, ClusterChanceTest, PassK

__all__ = ["legend", "print_table", "render_comparison", "render_summary"]

_ERROR_KINDS_SHOWN = 5
# What to change when calls time out, for the summary (README: "Local model servers").
TIMEOUT_ADVICE = (
    "a server that answers one request at a time queues the others past the timeout, and "
    "computes calls that were given up on: use --concurrency 1 and a --timeout above its "
    "slowest answer"
)


def _new_table(title: str) -> Table:
    """A table titled `title`, which is shown as it is (never read as markup)."""
    return Table(title=safe(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)


@dataclass
class _Fit:
    """What a column needs: `least` (its cells whole; a text column's longest word),
    `most` (every cell and the header on one line each) and `whole` (its widest cell)."""

    least: int
    most: int
    whole: int


# a text column (descriptions, excerpts) narrower than this folds its longest words
_WIDEST_WORD = 24


def print_table(console: Console, table: Table, *, labels: int = 1) -> None:
    """Print `table` at the console's width with no cell cut, wrapped inside a number or
    shortened to "…": columns that do not fit move to a second table (and a third...),
    each repeating the first `labels` columns (the row labels), and headers wrap at spaces.

    Columns made with `no_wrap` are atomic (numbers, intervals); the others wrap at spaces,
    and fold words longer than _WIDEST_WORD only where even those do not fit.
    """
    width = console.width
    fits = [_fit(console, column) for column in table.columns]
    count = len(fits)
    labels = min(labels, count)
    widest = max((fits[i].least for i in range(labels, count)), default=0)
    room = width - _extra(table, labels + 1) - widest
    label_widths = [fits[i].most for i in range(labels)]
    while sum(label_widths) > room and max(label_widths, default=0) > 8:  # absurdly long labels
        longest = label_widths.index(max(label_widths))
        label_widths[longest] -= 1
    for i, least in enumerate(label_widths):
        fits[i].least = least
    parts: list[list[int]] = []
    part = list(range(labels))
    for i in range(labels, count):
        if len(part) > labels and _width(table, [fits[j].least for j in [*part, i]]) > width:
            parts.append(part)
            part = [*range(labels), i]
        else:
            part.append(i)
    parts.append(part)
    for number, columns in enumerate(parts):
        console.print(_part(console, table, columns, fits, continued=number > 0))


def _fit(console: Console, column: Column) -> _Fit:
    cells = [Measurement.get(console, console.options, c) for c in column.cells]
    header = Measurement.get(console, console.options, column.header)
    whole = max((c.maximum for c in cells), default=0)
    most = max(header.maximum, whole)
    if column.no_wrap:
        return _Fit(max(header.minimum, whole), most, whole)
    least = min(max([header.minimum, *(c.minimum for c in cells)]), _WIDEST_WORD)
    return _Fit(least, most, whole)


def _extra(table: Table, columns: int) -> int:
    """What `columns` columns of `table` add to their cells' widths: padding, rules, edges."""
    _, right, _, left = table.padding
    edges = (2 if table.show_edge else 0) + columns - 1 if table.box else 0
    return (left + right) * columns - (0 if table.pad_edge else left + right) + edges


def _width(table: Table, widths: list[int]) -> int:
    return sum(widths) + _extra(table, len(widths))


def _part(
    console: Console, table: Table, columns: list[int], fits: list[_Fit], *, continued: bool
) -> Table:
    """The table of `columns`: each as narrow as it may be, widened toward one line per
    cell while the console has room."""
    widths = [fits[i].least for i in columns]
    slack = console.width - _width(table, widths)
    for k, i in enumerate(columns):
        grow = min(slack, fits[i].most - widths[k])
        if grow > 0:
            widths[k] += grow
            slack -= grow
    part = copy.copy(table)
    part.columns = []
    for k, (i, w) in enumerate(zip(columns, widths, strict=True)):
        column = copy.copy(table.columns[i])
        column._index, column.width, column.min_width, column.max_width = k, w, None, None
        column.ratio = None
        header = column.header
        text = console.render_str(header) if isinstance(header, str) else header
        if isinstance(text, Text):
            column.header = Text("\n").join(text.wrap(console, w, overflow="fold"))
        if not column.no_wrap or fits[i].whole > w:
            column.no_wrap, column.overflow = False, "fold"
        part.columns.append(column)
    if continued and part.title is not None:
        title = part.title
        part.title = title + " (continued)" if isinstance(title, str | Text) else title
    return part


def _curve(points: list[PassK]) -> str:
    return "  ".join(f"k={p.k}: {100 * p.value:.1f}%" for p in points)


def _table(title: str, label: str, groups: list[GroupSummary], summary: RunSummary) -> Table:
    spec = summary.run.report
    others = [m for m in spec.metrics if m.name != spec.primary]
    table = _new_table(title)
    table.add_column(safe(label), no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column(safe(f"{spec.primary} [Wilson 95%]"), justify="right", no_wrap=True)
    table.add_column(safe(f"[{summary.cluster_by} boot]"), justify="right", no_wrap=True)
    table.add_column("clusters", justify="right", no_wrap=True)
    if spec.compare_to_chance:
        table.add_column("chance", justify="right", no_wrap=True)
        table.add_column(f"p exact {CHANCE_SIDES}", justify="right", no_wrap=True)
        table.add_column(f"p boot {CHANCE_SIDES}", justify="right", no_wrap=True)
    for metric in others:
        table.add_column(safe(metric.name.replace("_", " ")), justify="right", no_wrap=True)
    for group in groups:
        clustered = group.clustered.get(spec.primary)
        row = [
            group.group,
            str(group.episodes),
            interval(group.metrics[spec.primary]),
            interval(clustered, point=False) if clustered else "n/a",
            str(clustered.clusters) if clustered else "n/a",
        ]
        if spec.compare_to_chance:
            row += _chance_cells(group.chance, group.cluster_chance)
        row += [pct(group.metrics[m.name].value) for m in others]
        table.add_row(*map(safe, row))
    return table


def _chance_cells(exact: ChanceTest | None, boot: ClusterChanceTest | None) -> list[str]:
    """Chance, and both one-sided p-values of the exact and the bootstrap test."""
    return [
        pct(exact.chance) if exact else "n/a",
        chance_p_text(exact.p_below, exact.p_above) if exact else "n/a",
        chance_p_text(boot.p_below, boot.p_above) if boot else "n/a",
    ]


def _flips_table(condition: ConditionSummary, cluster_by: str) -> Table:
    table = _new_table(f"{condition.condition}: choice changed against the base variant")
    table.add_column("variant", no_wrap=True)
    for name in ("pairs", "flips", "flip rate [Wilson 95%]"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column(safe(f"[{cluster_by} boot]"), justify="right", no_wrap=True)
    for flip in condition.flips:
        f = flip.flips
        cells = [
            flip.variant,
            str(f.n),
            str(f.flips),
            interval(f),
            interval(flip.clustered, point=False),
        ]
        table.add_row(*map(safe, cells))
    return table


def legend(summary: RunSummary) -> list[str]:
    """What the first table's columns mean, a line each, for readers new to them."""
    spec = summary.run.report
    primary = spec.metric(spec.primary)
    cluster = summary.cluster_by
    lines = [
        f"{primary.name}: {primary.description or 'the primary rate'}. [Wilson 95%]: episodes "
        f"as independent trials; [{cluster} boot]: whole {cluster}s resampled (clusters: how "
        "many). When the intervals disagree, trust the wider."
    ]
    if spec.compare_to_chance:
        lines.append(
            f"chance: a uniformly random choice's rate; p exact, p boot: one-sided p that "
            f"{primary.name} is below / above chance, exactly and by the bootstrap."
        )
    others = [m for m in spec.metrics if m.name != spec.primary and m.description]
    if others:
        lines.append("; ".join(f"{m.name.replace('_', ' ')}: {m.description}" for m in others))
    return lines


def render_summary(
    summary: RunSummary,
    console: Console,
    *,
    groupings: list[str] | None = None,
    quiet: bool = False,
    purpose: str | None = None,
) -> None:
    """Print the overall table, then one table per condition and grouping.

    `groupings` limits which groupings are shown (default: all the run's report has);
    `purpose` is what the run's agent is for (a baseline's one line); `quiet` leaves out
    the legend under the first table.
    """
    run = summary.run
    console.print(
        f"[bold]run {safe(run.run_id)}[/bold]  benchmark {safe(run.benchmark)}  "
        f"agent {safe(run.agent)}  epochs {run.epochs}  seed {run.seed}  "
        f"data {safe(run.data_hash[:19])}",
        highlight=False,
    )
    if purpose:
        console.print(f"{safe(run.agent)}: {safe(purpose)}", highlight=False)
    console.print(
        f"episodes: {summary.scored} scored, {summary.errors} errors (excluded from rates), "
        f"{summary.missing} not run, of {summary.planned} planned",
        highlight=False,
    )
    for kind in summary.error_kinds[:_ERROR_KINDS_SHOWN]:
        episodes = f"{kind.count} episode" + ("s" if kind.count > 1 else "")
        console.print(f"  [red]error[/red] ({episodes}): {safe(kind.message)}", highlight=False)
    hidden = summary.error_kinds[_ERROR_KINDS_SHOWN:]
    if hidden:
        more = sum(k.count for k in hidden)
        console.print(f"  ... and {more} errors of {len(hidden)} other kinds", highlight=False)
    if summary.timeouts:
        console.print(
            f"  [yellow]{summary.timeouts} model calls timed out[/yellow]: {TIMEOUT_ADVICE} "
            "(README: Local model servers)",
            highlight=False,
        )
    for cost in summary.costs:
        u = cost.usage
        money = (
            "unknown (no price for this model)"
            if cost.cost_usd is None
            else f"${cost.cost_usd:.4f}"
        )
        console.print(
            f"{safe(cost.role)} {safe(cost.model)}: {u.calls} calls ({u.cache_hits} from cache), "
            f"{u.input_tokens:,} input tokens ({u.cached_input_tokens:,} cached), "
            f"{u.output_tokens:,} output tokens; "
            f"cost {money}" + (f" at prices of {cost.price_as_of}" if cost.price_as_of else ""),
            highlight=False,
        )
    overall = [c.overall.model_copy(update={"group": c.condition}) for c in summary.conditions]
    print_table(console, _table("Overall", "condition", overall, summary))
    if not quiet:
        for line in legend(summary):
            console.print(f"[dim]  {safe(line)}[/dim]", highlight=False)
    for group, condition in zip(overall, summary.conditions, strict=True):
        counts = ", ".join(f"{k} {v}" for k, v in sorted(group.outcomes.items()))
        console.print(f"  {safe(group.group)} outcomes: {safe(counts or 'none')}", highlight=False)
        ended = ", ".join(f"{k} {v}" for k, v in condition.terminations.items())
        console.print(f"  {safe(group.group)} ended: {safe(ended or 'none')}", highlight=False)
        if summary.run.report.show_rules:
            cited = ", ".join(f"{k} {v}" for k, v in group.evidence_rules.items()) or "none"
            console.print(f"  {safe(group.group)} rules cited: {safe(cited)}", highlight=False)
    for condition in summary.conditions:
        for metric, points in condition.pass_hat_k.items():
            console.print(
                f"  {safe(condition.condition)} pass^k of {safe(metric)}: {_curve(points)}",
                highlight=False,
            )
        if condition.versus_first is not None:
            text = "condition " + contrast_text(condition.versus_first)
            console.print("  " + safe(text), highlight=False)
        if condition.covariate is not None:
            console.print("  " + safe(covariate_text(condition)), highlight=False)
    if summary.audits:
        print_table(console, _audit_table(summary.audits), labels=3)
    for condition in summary.conditions:
        if condition.flips and (groupings is None or summary.run.report.flip_by in groupings):
            print_table(console, _flips_table(condition, summary.cluster_by))
        for key, groups in condition.by.items():
            if groupings is not None and key not in groupings:
                continue
            table = _table(f"{condition.condition}, by {key}", key, groups, summary)
            print_table(console, table)


def _audit_table(audits: list[AuditSummary]) -> Table:
    """Eval awareness per audit (scanner alone, or a judge) and condition."""
    table = _new_table("Eval-awareness audit")
    table.add_column("run", no_wrap=True)  # run, audit and condition label a row
    table.add_column("audit", no_wrap=True)
    table.add_column("condition", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("scanner flagged [Wilson 95%]", justify="right", no_wrap=True)
    table.add_column("judged aware [Wilson 95%]", justify="right", no_wrap=True)
    table.add_column("judge errors", justify="right", no_wrap=True)
    table.add_column("categories flagged")
    for a in audits:
        table.add_row(*map(safe, [a.run_id, *audit_cells(a)]))
    return table


def render_comparison(comparison: Comparison, console: Console) -> None:
    """The runs' agents, then one table with a row per run and condition (reflowed into
    more at narrow widths), then the paired contrasts between runs."""
    primary = comparison.primary
    # metrics with a pass^k curve (service desk: reward_tau) sit beside the primary one
    beside = [m for m in comparison.rows[0].pass_hat_k if m != primary]
    others = [m for m in comparison.metrics if m != primary and m not in beside]
    # pass^k at the largest k every row has (rows with fewer trials cap it)
    curves = {
        name: min(max((p.k for p in r.pass_hat_k[name]), default=0) for r in comparison.rows)
        for name in comparison.rows[0].pass_hat_k
    }
    has_chance = any(row.chance is not None for row in comparison.rows)
    agents = {row.run_id: row.agent for row in comparison.rows}
    for run_id, agent in agents.items():
        console.print(f"{safe(run_id)}: agent {safe(agent)}", highlight=False)
    table = _new_table(f"{comparison.benchmark}: {primary} by run and condition")
    any_errors = any(row.errors for row in comparison.rows)
    table.add_column("run", no_wrap=True)
    table.add_column("condition", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True)
    if any_errors:
        table.add_column("errors", justify="right", no_wrap=True)
    table.add_column(safe(f"{primary} [Wilson 95%]"), justify="right", no_wrap=True)
    table.add_column(safe(f"[{comparison.cluster_by} boot]"), justify="right", no_wrap=True)
    if has_chance:
        table.add_column("chance", justify="right", no_wrap=True)
        table.add_column(f"p exact {CHANCE_SIDES}", justify="right", no_wrap=True)
        table.add_column(f"p boot {CHANCE_SIDES}", justify="right", no_wrap=True)
    for name in beside:
        table.add_column(safe(name.replace("_", " ")), justify="right", no_wrap=True)
    for name, k in curves.items():
        table.add_column(safe(f"pass^{k} {name}"), justify="right", no_wrap=True)
    contrasted = any(row.versus_first_condition for row in comparison.rows)
    if contrasted:
        table.add_column("Δ first cond.", justify="right", no_wrap=True)
        table.add_column("p McNemar", justify="right", no_wrap=True)
    for name in others:
        table.add_column(safe(name.replace("_", " ")), justify="right", no_wrap=True)
    for row in comparison.rows:
        versus = row.versus_first_condition
        delta = p_mcnemar = "—"
        if versus is not None and versus.difference.value is not None:
            delta = f"{100 * versus.difference.value:+.1f} pts"
            p_mcnemar = p_text(versus.mcnemar.p_value)
        clustered = row.clustered.get(primary)
        cells = [row.run_id, row.condition, str(row.episodes)]
        if any_errors:
            cells.append(str(row.errors))
        cells += [
            interval(row.metrics[primary]),
            interval(clustered, point=False) if clustered else "n/a",
        ]
        if has_chance:
            cells += _chance_cells(row.chance, row.cluster_chance)
        cells += [pct(row.metrics[name].value) for name in beside]
        for name, k in curves.items():
            cells.append(pct(next((p.value for p in row.pass_hat_k[name] if p.k == k), None)))
        if contrasted:
            cells += [delta, p_mcnemar]
        cells += [pct(row.metrics[name].value) for name in others]
        table.add_row(*map(safe, cells))
    print_table(console, table, labels=2)
    audits = [a for row in comparison.rows for a in row.audits]
    if audits:
        print_table(console, _audit_table(audits), labels=3)
    for row in comparison.rows:
        for metric, points in row.pass_hat_k.items():
            console.print(
                f"  {safe(row.run_id)}/{safe(row.condition)} pass^k of {safe(metric)}: "
                f"{_curve(points)}",
                highlight=False,
            )
    for versus in comparison.versus_first_run:
        console.print("  " + safe(contrast_text(versus)), highlight=False)
    for reason in comparison.unpaired:
        console.print(f"  not paired: {safe(reason)}", highlight=False)
