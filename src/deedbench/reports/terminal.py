"""Terminal tables for a run summary (rich).

The primary metric is shown with its 95% interval and the test against chance;
the other metrics as plain percentages. `--json` has every interval.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from deedbench.reports.summary import GroupSummary, RunSummary
from deedbench.stats import Rate

__all__ = ["render_summary"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _with_interval(r: Rate) -> str:
    if r.value is None:
        return "n/a"
    return f"{100 * r.value:.1f}% [{100 * (r.ci_low or 0):.1f}, {100 * (r.ci_high or 0):.1f}]"


def _p(value: float) -> str:
    return f"{value:.3f}" if value >= 1e-3 else f"{value:.0e}"


def _table(title: str, label: str, groups: list[GroupSummary], summary: RunSummary) -> Table:
    spec = summary.run.report
    others = [m for m in spec.metrics if m.name != spec.primary]
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(label, no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column(f"{spec.primary} [95% CI]", justify="right", no_wrap=True)
    if spec.compare_to_chance:
        table.add_column("chance", justify="right")
        table.add_column("p<chance", justify="right")
    for metric in others:
        table.add_column(metric.name.replace("_", " "), justify="right")
    for group in groups:
        row = [group.group, str(group.episodes), _with_interval(group.metrics[spec.primary])]
        if spec.compare_to_chance:
            chance = group.chance
            row += [_pct(chance.chance), _p(chance.p_below)] if chance else ["n/a", "n/a"]
        row += [_pct(group.metrics[m.name].value) for m in others]
        table.add_row(*row)
    return table


def render_summary(
    summary: RunSummary, console: Console, *, groupings: list[str] | None = None
) -> None:
    """Print the overall table, then one table per condition and grouping.

    `groupings` limits which groupings are shown (default: all the run's report has).
    """
    run = summary.run
    console.print(
        f"[bold]run {run.run_id}[/bold]  benchmark {run.benchmark}  agent {run.agent}  "
        f"epochs {run.epochs}  seed {run.seed}  data {run.data_hash[:19]}",
        highlight=False,
    )
    console.print(
        f"episodes: {summary.scored} scored, {summary.errors} errors (excluded from rates), "
        f"{summary.missing} not run, of {summary.planned} planned",
        highlight=False,
    )
    for text in summary.error_examples:
        console.print(f"  [red]error:[/red] {text}", highlight=False)
    for cost in summary.costs:
        u = cost.usage
        money = (
            "unknown (no price for this model)"
            if cost.cost_usd is None
            else f"${cost.cost_usd:.4f}"
        )
        console.print(
            f"{cost.role} {cost.model}: {u.calls} calls ({u.cache_hits} from cache), "
            f"{u.input_tokens:,} input tokens ({u.cached_input_tokens:,} cached), "
            f"{u.output_tokens:,} output tokens; "
            f"cost {money}" + (f" at prices of {cost.price_as_of}" if cost.price_as_of else ""),
            highlight=False,
        )
    overall = [c.overall.model_copy(update={"group": c.condition}) for c in summary.conditions]
    console.print(_table("Overall", "condition", overall, summary))
    for group in overall:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(group.outcomes.items()))
        console.print(f"  {group.group} outcomes: {counts or 'none'}", highlight=False)
        if summary.run.report.show_rules:
            cited = ", ".join(f"{k} {v}" for k, v in group.evidence_rules.items()) or "none"
            console.print(f"  {group.group} rules cited: {cited}", highlight=False)
    for condition in summary.conditions:
        for metric, points in condition.pass_hat_k.items():
            curve = "  ".join(f"k={p.k}: {100 * p.value:.1f}%" for p in points)
            console.print(f"  {condition.condition} pass^k of {metric}: {curve}", highlight=False)
    for condition in summary.conditions:
        for key, groups in condition.by.items():
            if groupings is not None and key not in groupings:
                continue
            console.print(_table(f"{condition.condition}, by {key}", key, groups, summary))
