"""Terminal tables for a run summary (rich).

The primary metric is shown with two 95% intervals, Wilson's (episodes as independent
trials) and a bootstrap over clusters ("boot": scenarios or tasks resampled whole), and
two tests against chance: the exact Poisson-binomial p and the cluster-bootstrap p. The
other metrics show as plain percentages; `--json` and `--csv` have every interval.

Data (run ids, agent specs, group names, error messages) is never rich markup: it goes
through `safe`, which escapes markup and shows control characters as visible escapes.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from deedbench.audit import AuditSummary
from deedbench.printable import safe
from deedbench.reports.compare import Comparison
from deedbench.reports.format import (
    audit_cells,
    contrast_text,
    covariate_text,
    interval,
    p_text,
    pct,
)
from deedbench.reports.summary import ConditionSummary, GroupSummary, RunSummary
from deedbench.stats import PassK

__all__ = ["render_comparison", "render_summary"]

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


def _curve(points: list[PassK]) -> str:
    return "  ".join(f"k={p.k}: {100 * p.value:.1f}%" for p in points)


def _table(title: str, label: str, groups: list[GroupSummary], summary: RunSummary) -> Table:
    spec = summary.run.report
    others = [m for m in spec.metrics if m.name != spec.primary]
    table = _new_table(title)
    widest = max((len(g.group) for g in groups), default=len(label))
    table.add_column(safe(label), overflow="fold", min_width=min(max(widest, len(label)), 26))
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column(safe(f"{spec.primary} [Wilson 95%]"), justify="right", no_wrap=True)
    table.add_column(safe(f"[{summary.cluster_by} boot]"), justify="right", no_wrap=True)
    table.add_column("clusters", justify="right", no_wrap=True)
    if spec.compare_to_chance:
        table.add_column("chance", justify="right", no_wrap=True)
        table.add_column("p<chance", justify="right", no_wrap=True)
        table.add_column("p boot", justify="right", no_wrap=True)
    for metric in others:
        table.add_column(safe(metric.name.replace("_", " ")), justify="right", min_width=6)
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
            chance, by_cluster = group.chance, group.cluster_chance
            row += [pct(chance.chance), p_text(chance.p_below)] if chance else ["n/a", "n/a"]
            row.append(p_text(by_cluster.p_below) if by_cluster else "n/a")
        row += [pct(group.metrics[m.name].value) for m in others]
        table.add_row(*map(safe, row))
    return table


def _flips_table(condition: ConditionSummary, cluster_by: str) -> Table:
    table = _new_table(f"{condition.condition}: choice changed against the base variant")
    for name in ("variant", "pairs", "flips", "flip rate [Wilson 95%]"):
        table.add_column(name, justify="right" if name != "variant" else "left")
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


def render_summary(
    summary: RunSummary, console: Console, *, groupings: list[str] | None = None
) -> None:
    """Print the overall table, then one table per condition and grouping.

    `groupings` limits which groupings are shown (default: all the run's report has).
    """
    run = summary.run
    console.print(
        f"[bold]run {safe(run.run_id)}[/bold]  benchmark {safe(run.benchmark)}  "
        f"agent {safe(run.agent)}  epochs {run.epochs}  seed {run.seed}  "
        f"data {safe(run.data_hash[:19])}",
        highlight=False,
    )
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
    console.print(_table("Overall", "condition", overall, summary))
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
            console.print("  " + safe(contrast_text(condition.versus_first)), highlight=False)
        if condition.covariate is not None:
            console.print("  " + safe(covariate_text(condition)), highlight=False)
    if summary.audits:
        console.print(_audit_table(summary.audits))
    for condition in summary.conditions:
        if condition.flips and (groupings is None or "variant" in groupings):
            console.print(_flips_table(condition, summary.cluster_by))
        for key, groups in condition.by.items():
            if groupings is not None and key not in groupings:
                continue
            console.print(_table(f"{condition.condition}, by {key}", key, groups, summary))


def _audit_table(audits: list[AuditSummary]) -> Table:
    """Eval awareness per audit (scanner alone, or a judge) and condition."""
    table = _new_table("Eval-awareness audit")
    table.add_column("run")
    table.add_column("audit")
    table.add_column("condition")
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column("scanner flagged [Wilson 95%]", justify="right", no_wrap=True)
    table.add_column("judged aware [Wilson 95%]", justify="right", no_wrap=True)
    table.add_column("judge errors", justify="right", no_wrap=True)
    table.add_column("categories flagged")
    for a in audits:
        table.add_row(*map(safe, [a.run_id, *audit_cells(a)]))
    return table


def render_comparison(comparison: Comparison, console: Console) -> None:
    """One table, a row per run and condition, then the paired contrasts between runs."""
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
    table = _new_table(f"{comparison.benchmark}: {primary} by agent and condition")
    any_errors = any(row.errors for row in comparison.rows)
    table.add_column("run / agent", overflow="fold", ratio=1)
    table.add_column("condition", overflow="fold")
    table.add_column("n", justify="right", no_wrap=True)
    if any_errors:
        table.add_column("errors", justify="right", no_wrap=True)
    table.add_column(safe(f"{primary} [Wilson 95%]"), justify="right", no_wrap=True)
    table.add_column(safe(f"[{comparison.cluster_by} boot]"), justify="right", no_wrap=True)
    if has_chance:
        table.add_column("chance", justify="right", min_width=6)
        table.add_column("p<chance", justify="right", min_width=5)
        table.add_column("p boot", justify="right", min_width=5)
    for name in beside:
        table.add_column(safe(name.replace("_", " ")), justify="right", min_width=6)
    for name, k in curves.items():
        table.add_column(safe(f"pass^{k} {name}"), justify="right", min_width=6)
    contrasted = any(row.versus_first_condition for row in comparison.rows)
    if contrasted:
        table.add_column("Δ first cond.", justify="right", no_wrap=True)
        table.add_column("p McNemar", justify="right", no_wrap=True)
    for row in comparison.rows:
        versus = row.versus_first_condition
        delta = p_mcnemar = "—"
        if versus is not None and versus.difference.value is not None:
            delta = f"{100 * versus.difference.value:+.1f} pts"
            p_mcnemar = p_text(versus.mcnemar.p_value)
        clustered = row.clustered.get(primary)
        cells = [f"{row.run_id}\n{row.agent}", row.condition, str(row.episodes)]
        if any_errors:
            cells.append(str(row.errors))
        cells += [
            interval(row.metrics[primary]),
            interval(clustered, point=False) if clustered else "n/a",
        ]
        if has_chance:
            cells += [
                pct(row.chance.chance) if row.chance else "n/a",
                p_text(row.chance.p_below) if row.chance else "n/a",
                p_text(row.cluster_chance.p_below) if row.cluster_chance else "n/a",
            ]
        cells += [pct(row.metrics[name].value) for name in beside]
        for name, k in curves.items():
            cells.append(pct(next((p.value for p in row.pass_hat_k[name] if p.k == k), None)))
        if contrasted:
            cells += [delta, p_mcnemar]
        table.add_row(*map(safe, cells))
    console.print(table)
    audits = [a for row in comparison.rows for a in row.audits]
    if audits:
        console.print(_audit_table(audits))
    if others:
        more = _new_table("other metrics")
        for name in ("run", "agent", "condition"):
            widest = max(
                len(getattr(r, name if name != "run" else "run_id")) for r in comparison.rows
            )
            more.add_column(name, overflow="fold", min_width=min(widest, 24))
        for name in others:
            more.add_column(safe(name.replace("_", " ")), justify="right", min_width=6)
        for row in comparison.rows:
            cells = [row.run_id, row.agent, row.condition]
            more.add_row(*map(safe, cells + [pct(row.metrics[n].value) for n in others]))
        console.print(more)
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
