"""Terminal tables and lines for a run summary and a comparison (rich).

The primary metric is shown with two 95% intervals, Wilson's (episodes as independent
trials) and a bootstrap over clusters ("boot": scenarios or tasks resampled whole), and
two tests against chance: the exact Poisson-binomial p and the cluster-bootstrap p. The
other metrics show as plain percentages; `--json` and `--csv` have every interval.

The tables are printed at the console's width by `reports.tables` (the columns that
fit, most important first; `--wide` for all of them).

Data (run ids, agent specs, group names, error messages) is never rich markup: it goes
through `safe` (markup) or `printable` (plain text), which show control characters as
visible escapes.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from deedbench.audit import AuditSummary
from deedbench.printable import printable, safe
from deedbench.records import ReportSpec
from deedbench.reports.compare import Comparison
from deedbench.reports.cost import agent_kind, costs_text
from deedbench.reports.format import (
    CHANCE_SIDES,
    audit_cells,
    chance_p_text,
    contrast_text,
    counts_text,
    covariate_text,
    curve_text,
    data_label,
    interval,
    p_text,
    pct,
)
from deedbench.reports.summary import ConditionSummary, GroupSummary, RunSummary
from deedbench.reports.tables import KEEP as _KEEP
from deedbench.reports.tables import TablePrinter as _TablePrinter
from deedbench.reports.tables import new_table as _new_table
from deedbench.reports.tables import say as _say
from deedbench.stats import ChanceTest, ClusterChanceTest, PassK

__all__ = [
    "CHECK_EVIDENCE",
    "TIMEOUT_ADVICE",
    "legend",
    "render_comparison",
    "render_summary",
    "split_evidence",
]

_MOVED = ("KEEP", "TablePrinter", "new_table", "print_command", "print_table", "say")


def __getattr__(name: str) -> Any:
    """The names that moved to `deedbench.reports.tables`, for a release, with a warning."""
    if name in _MOVED:
        from deedbench.reports import tables

        warnings.warn(
            f"deedbench.reports.terminal.{name} has moved: import it from deedbench.reports.tables",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(tables, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_ERROR_KINDS_SHOWN = 5
# What to change when calls time out, for the summary (docs/models-and-roles.md: "Local
# model servers").
TIMEOUT_ADVICE = (
    "a server that answers one request at a time queues the others past the timeout, and "
    "computes calls that were given up on: use --concurrency 1 and a --timeout above its "
    "slowest answer"
)
# Evidence a score cites that names the check which found it, not a rule the agent broke:
# the service desk's outcome, outputs and reward_tau (servicedesk/scorer.py) and τ²'s
# verdict (tau2/rescore.py's VERDICT_RULES). Evidence named after one of the run's metrics
# is a check's too; every other name is a procedure rule broken.
CHECK_EVIDENCE = frozenset(
    {"outcome", "outputs", "reward_tau"}
    | {"tau2", "DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION"}
    | {"needs_judge", "evaluator_error"}
)


# --- a run's summary ---------------------------------------------------------------------


class _Layout:
    """A table being built, with how important each column is (lower first) for a
    terminal that cannot show them all."""

    def __init__(self, title: str) -> None:
        self.table = _new_table(title)
        self._importance: list[float] = []

    def label(self, header: str) -> None:
        self.table.add_column(safe(header), no_wrap=True)
        self._importance.append(-1)

    def number(self, header: str, importance: float = math.inf) -> None:
        """A right-aligned column whose cells are atoms: numbers, intervals, p-values."""
        self.table.add_column(safe(header), justify="right", no_wrap=True)
        self._importance.append(importance)

    def text(self, header: str, importance: float = math.inf) -> None:
        """A column of words that may wrap at spaces."""
        self.table.add_column(safe(header))
        self._importance.append(importance)

    def row(self, cells: Iterable[str]) -> None:
        self.table.add_row(*map(safe, cells))

    def rank(self) -> list[int]:
        """The columns that are not labels, most important first."""
        others = [i for i, v in enumerate(self._importance) if v >= 0]
        return sorted(others, key=lambda i: (self._importance[i], i))


def _curve(points: list[PassK]) -> str:
    return curve_text(points, _KEEP)


def _table(
    title: str,
    label: str,
    groups: list[GroupSummary],
    summary: RunSummary,
    errors: Sequence[int] = (),
) -> _Layout:
    """One row per group: n, `errors` (the overall table's, when any), the primary rate
    with both intervals, chance and its tests, the other rates. A table whose every group
    is one cluster (by scenario, by task) has no bootstrap interval to show: no column."""
    spec = summary.run.report
    others = [m for m in spec.metrics if m.name != spec.primary]
    clustered = [g.clustered.get(spec.primary) for g in groups]
    booted = any(c is not None and c.clusters > 1 for c in clustered)
    layout = _Layout(title)
    layout.label(label)
    layout.number("n", 0)  # the primary rate's denominator
    counted = [g.metrics[spec.primary].n for g in groups]
    apart = any(n != g.episodes for n, g in zip(counted, groups, strict=True))
    if apart:  # episodes the primary rate does not count (τ²'s needing a judge): both shown
        layout.number("scored", 1.5)
    if any(errors):
        layout.number("errors", 1)
    layout.number(f"{spec.primary} [Wilson 95%]", 2)
    if booted:
        layout.number(f"[{summary.cluster_by} boot]", 3)
        layout.number("clusters", 6)
    if spec.compare_to_chance:
        layout.number("chance", 4)
        layout.number(f"p exact {CHANCE_SIDES}", 5)
        layout.number(f"p boot {CHANCE_SIDES}", 7)
    for metric in others:
        layout.number(metric.name, 8)
    for index, group in enumerate(groups):
        boot = clustered[index]
        row = [group.group, str(counted[index])]
        if apart:
            row.append(str(group.episodes))
        if any(errors):
            row.append(str(errors[index]))
        row.append(interval(group.metrics[spec.primary]))
        if booted:
            row += [
                interval(boot, point=False) if boot else "n/a",
                str(boot.clusters) if boot else "n/a",
            ]
        if spec.compare_to_chance:
            row += _chance_cells(group.chance, group.cluster_chance)
        row += [pct(group.metrics[m.name].value) for m in others]
        layout.row(row)
    return layout


def _chance_cells(exact: ChanceTest | None, boot: ClusterChanceTest | None) -> list[str]:
    """Chance, and both one-sided p-values of the exact and the bootstrap test."""
    return [
        pct(exact.chance) if exact else "n/a",
        chance_p_text(exact.p_below, exact.p_above) if exact else "n/a",
        chance_p_text(boot.p_below, boot.p_above) if boot else "n/a",
    ]


def _flips_table(condition: ConditionSummary, cluster_by: str) -> _Layout:
    layout = _Layout(f"{condition.condition}: choice changed against the base variant")
    layout.label("variant")
    for name in ("pairs", "flips", "flip rate [Wilson 95%]", f"[{cluster_by} boot]"):
        layout.number(name)
    for flip in condition.flips:
        f = flip.flips
        layout.row(
            [
                flip.variant,
                str(f.n),
                str(f.flips),
                interval(f),
                interval(flip.clustered, point=False),
            ]
        )
    return layout


def legend(summary: RunSummary) -> list[str]:
    """What the first table's columns mean, a line each, for readers new to them."""
    spec = summary.run.report
    primary = spec.metric(spec.primary)
    cluster = summary.cluster_by
    overall = [c.overall for c in summary.conditions]
    lines = []
    if any(g.metrics[primary.name].n != g.episodes for g in overall):
        lines.append(
            f"n: the episodes {primary.name} is a rate of; scored: every scored episode, "
            f"with those {primary.name} cannot count (the outcomes line names them, e.g. "
            "needs_judge)"
        )
    lines += [
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
        lines.append("; ".join(f"{m.name}: {m.description}" for m in others))
    return lines


def split_evidence(
    cited: Mapping[str, int], spec: ReportSpec
) -> tuple[dict[str, int], dict[str, int]]:
    """The evidence a group's scores cite, split into procedure rules broken and the
    evidence of the checks that scored it (`CHECK_EVIDENCE`, or named after a metric)."""
    metrics = {name.lower() for m in spec.metrics for name in (m.name, m.value)}

    def of_a_check(name: str) -> bool:
        lowered = name.lower()
        return name in CHECK_EVIDENCE or any(
            m == lowered or m.startswith(lowered + "_") for m in metrics
        )

    rules = {k: v for k, v in cited.items() if not of_a_check(k)}
    checks = {k: v for k, v in cited.items() if of_a_check(k)}
    return rules, checks


def _counts(counts: Mapping[str, int]) -> str:
    return counts_text(counts)


def render_summary(
    summary: RunSummary,
    console: Console,
    *,
    groupings: list[str] | None = None,
    quiet: bool = False,
    purpose: str | None = None,
    wide: bool = False,
    executor: str | None = None,
    command: str | None = None,
) -> None:
    """Print the overall table, then one table per condition and grouping.

    `groupings` limits which groupings are shown (default: all the run's report has);
    `purpose` is what the run's agent is for (a baseline's one line); `quiet` leaves out
    the legend under the first table; `wide` shows every column (else those that fit);
    `executor` names the live process executing the run, if any ("pid P on host H");
    `command` prints every column (default: deedbench report RUN), for the closing line.
    """
    run = summary.run
    tables = _TablePrinter(console, wide=wide)
    _say(
        console,
        Text.assemble(
            (f"run{_KEEP}{printable(run.run_id)}", "bold"),
            f"  benchmark{_KEEP}{printable(run.benchmark)}  agent{_KEEP}{printable(run.agent)}  "
            f"epochs{_KEEP}{run.epochs}  seed{_KEEP}{run.seed}  "
            f"data{_KEEP}{printable(data_label(run.data_hash))}",
        ),
    )
    if purpose:
        _say(console, f"{run.agent}: {purpose}")
    imported = run.imported_from
    episodes = (
        f"episodes: {summary.scored} scored, {summary.errors} errors (excluded from rates), "
        + (
            f"imported from {imported}"
            + (
                f" ({summary.missing} trials of its tasks it does not hold)"
                if summary.missing
                else ""
            )
            if imported is not None
            else f"{summary.missing} not run, of {summary.planned} planned"
        )
    )
    if executor is not None:
        episodes += f"; running ({executor}): the figures count the episodes stored so far"
    elif summary.missing and imported is None:
        episodes += "; stopped before the end"
    _say(console, episodes)
    for kind in summary.error_kinds[:_ERROR_KINDS_SHOWN]:
        count = f"{kind.count} episode" + ("s" if kind.count > 1 else "")
        _say(
            console,
            Text.assemble(("error", "red"), f" ({count}): {printable(kind.message)}"),
            indent=2,
        )
    hidden = summary.error_kinds[_ERROR_KINDS_SHOWN:]
    if hidden:
        more = sum(k.count for k in hidden)
        _say(console, f"... and {more} errors of {len(hidden)} other kinds", indent=2)
    if summary.timeouts:
        _say(
            console,
            Text.assemble(
                (f"{summary.timeouts} model calls timed out", "yellow"),
                f": {TIMEOUT_ADVICE} (docs/models-and-roles.md: Local model servers)",
            ),
            indent=2,
        )
    for cost in summary.costs:
        u = cost.usage
        money = (
            "unknown (no price for this model)"
            if cost.cost_usd is None
            else f"${cost.cost_usd:.4f}"
        )
        _say(
            console,
            f"{cost.role} {cost.model}: {u.calls} calls ({u.cache_hits} from cache), "
            f"{u.input_tokens:,} input tokens ({u.cached_input_tokens:,} cached), "
            f"{u.output_tokens:,} output tokens; "
            f"cost {money}" + (f" at prices of {cost.price_as_of}" if cost.price_as_of else ""),
        )
    if not summary.costs:
        _say(console, f"cost: none (no model calls were recorded: {agent_kind(run.agent)})")
    overall = [c.overall.model_copy(update={"group": c.condition}) for c in summary.conditions]
    errors = [c.errors for c in summary.conditions]
    first = _table("Overall", "condition", overall, summary, errors)
    tables.print(first.table, rank=first.rank())
    if not quiet:
        for line in legend(summary):
            _say(console, line, indent=2, style="dim")
    for group, condition in zip(overall, summary.conditions, strict=True):
        name = group.group
        _say(console, f"{name} outcomes: {_counts(dict(sorted(group.outcomes.items())))}", indent=2)
        _say(console, f"{name} ended: {_counts(condition.terminations)}", indent=2)
        if run.report.show_rules:
            rules, checks = split_evidence(group.evidence_rules, run.report)
            _say(console, f"{name} rules broken: {_counts(rules)}", indent=2)
            _say(console, f"{name} evidence cited: {_counts(checks)}", indent=2)
        if group.failures:
            failed = sum(group.failures.values())
            _say(
                console,
                f"{name} whose failure ({failed} not passing): {_counts(group.failures)}",
                indent=2,
            )
        if group.fault_kinds:
            blamed = {k: v for k, v in group.fault_kinds.items() if not k.startswith("agent.")}
            _say(console, f"{name} user and task faults (episodes): {_counts(blamed)}", indent=2)
    for condition in summary.conditions:
        for metric, points in condition.pass_hat_k.items():
            _say(console, f"{condition.condition} pass^k of {metric}: {_curve(points)}", indent=2)
        if condition.versus_first is not None:
            _say(console, "condition " + contrast_text(condition.versus_first), indent=2)
        if condition.covariate is not None:
            _say(console, covariate_text(condition), indent=2)
    if summary.audits:
        audit = _audit_table(summary.audits, with_run=False)
        tables.print(audit.table, labels=2, rank=audit.rank())
    for condition in summary.conditions:
        if condition.flips and (groupings is None or run.report.flip_by in groupings):
            flips = _flips_table(condition, summary.cluster_by)
            tables.print(flips.table, rank=flips.rank())
        for key, groups in condition.by.items():
            if groupings is not None and key not in groupings:
                continue
            layout = _table(f"{condition.condition}, by {key}", key, groups, summary)
            tables.print(layout.table, rank=layout.rank())
    tables.close(command or f"deedbench report {run.run_id}")


def _audit_table(audits: list[AuditSummary], *, with_run: bool) -> _Layout:
    """Eval awareness per audit (scanner alone, or a judge) and condition; the run, audit
    and condition label a row (the run only where several runs are shown)."""
    layout = _Layout("Eval-awareness audit")
    if with_run:
        layout.label("run")
    layout.label("audit")
    layout.label("condition")
    layout.number("n", 0)
    layout.number("scanner flagged [Wilson 95%]", 1)
    layout.number("judged aware [Wilson 95%]", 2)
    layout.number("judge errors", 3)
    layout.text("categories flagged", 4)
    for a in audits:
        layout.row([a.run_id, *audit_cells(a)] if with_run else audit_cells(a))
    return layout


# --- runs side by side ---------------------------------------------------------------------


def _comparison_table(comparison: Comparison, *, by_run: bool) -> _Layout:
    """A row per run and condition: labelled by run and condition (`by_run`), or by
    condition alone, for a layout that heads each run's rows with its id and says the
    contrasts with the first condition in lines of their own, with their intervals."""
    primary = comparison.primary
    rows = comparison.rows
    # metrics with a pass^k curve (service desk: reward_tau) sit beside the primary one
    beside = [m for m in rows[0].pass_hat_k if m != primary]
    others = [m for m in comparison.metrics if m != primary and m not in beside]
    # pass^k at the largest k every row has (rows with fewer trials cap it)
    curves = {
        name: min(max((p.k for p in r.pass_hat_k[name]), default=0) for r in rows)
        for name in rows[0].pass_hat_k
    }
    has_chance = any(row.chance is not None for row in rows)
    any_errors = any(row.errors for row in rows)
    contrasted = by_run and any(row.versus_first_condition for row in rows)
    layout = _Layout(f"{comparison.benchmark}: {primary} by run and condition")
    if by_run:
        layout.label("run")
    layout.label("condition")
    layout.number("n", 0)  # the primary rate's denominator
    apart = any(row.metrics[primary].n != row.episodes for row in rows)
    if apart:  # episodes the primary rate does not count (τ²'s needing a judge): both shown
        layout.number("scored", 1.5)
    if any_errors:
        layout.number("errors", 1)
    layout.number(f"{primary} [Wilson 95%]", 2)
    layout.number(f"[{comparison.cluster_by} boot]", 3)
    if has_chance:
        layout.number("chance", 4)
        layout.number(f"p exact {CHANCE_SIDES}", 5)
        layout.number(f"p boot {CHANCE_SIDES}", 10)
    for name in beside:
        layout.number(name, 6)
    for name, k in curves.items():
        layout.number(f"pass^{k} {name}", 7)
    if contrasted:
        layout.number("Δ first cond.", 8)
        layout.number("p McNemar", 9)
    for name in others:
        layout.number(name, 11)
    for row in rows:
        versus = row.versus_first_condition
        delta = p_mcnemar = "—"
        if versus is not None and versus.difference.value is not None:
            delta = f"{100 * versus.difference.value:+.1f} pts"
            p_mcnemar = p_text(versus.mcnemar.p_value)
        clustered = row.clustered.get(primary)
        cells = [row.run_id] if by_run else []
        cells += [row.condition, str(row.metrics[primary].n)]
        if apart:
            cells.append(str(row.episodes))
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
        layout.row(cells)
    return layout


def _run_sections(comparison: Comparison) -> list[tuple[Text, int]]:
    """Each run's heading ("rel: agent baseline/relevance") and how many rows follow it;
    a run named twice is two sections (its conditions start again)."""
    sections: list[tuple[str, Text, list[str]]] = []  # run, heading, its rows' conditions
    for row in comparison.rows:
        if not sections or sections[-1][0] != row.run_id or row.condition in sections[-1][2]:
            heading = Text.assemble(
                (printable(row.run_id), "bold"), f": agent {printable(row.agent)}"
            )
            sections.append((row.run_id, heading, []))
        sections[-1][2].append(row.condition)
    return [(heading, len(conditions)) for _, heading, conditions in sections]


def render_comparison(
    comparison: Comparison,
    console: Console,
    *,
    wide: bool = False,
    command: str | None = None,
    legend: Sequence[str] = (),
) -> None:
    """One table with a row per run and condition, then the paired contrasts between
    runs. Where run and condition do not fit side by side with every figure (and not
    `wide`), each run's rows go under a line naming it, with the columns that fit;
    `command` shows every column (default: deedbench compare RUN...); `legend`: lines
    under the table saying what its columns mean (`legend`; none with -q)."""
    tables = _TablePrinter(console, wide=wide)
    full = _comparison_table(comparison, by_run=True)
    if wide or tables.fits(full.table, labels=2):
        agents = {row.run_id: row.agent for row in comparison.rows}
        for run_id, agent in agents.items():
            _say(console, f"{run_id}: agent {agent}")
        tables.print(full.table, labels=2, rank=full.rank())
    else:
        by_condition = _comparison_table(comparison, by_run=False)
        tables.print(
            by_condition.table,
            rank=by_condition.rank(),
            sections=_run_sections(comparison),
        )
        for row in comparison.rows:
            if row.versus_first_condition is not None:
                text = f"{row.run_id}: condition {contrast_text(row.versus_first_condition)}"
                _say(console, text, indent=2)
    for line in legend:
        _say(console, line, indent=2, style="dim")
    audits = [a for row in comparison.rows for a in row.audits]
    if audits:
        audit = _audit_table(audits, with_run=True)
        tables.print(audit.table, labels=3, rank=audit.rank())
    for row in comparison.rows:
        for metric, points in row.pass_hat_k.items():
            _say(
                console,
                f"{row.run_id}/{row.condition} pass^k of {metric}: {_curve(points)}",
                indent=2,
            )
    for versus in comparison.versus_first_run:
        _say(console, contrast_text(versus), indent=2)
    for versus in comparison.versus_first_run_agent:
        line = contrast_text(versus).replace(" rate:", " rate, user and task faults set aside:", 1)
        _say(console, line, indent=2)
    for reason in comparison.unpaired:
        _say(console, f"not paired: {reason}", indent=2)
    for run_id, costs in comparison.costs.items():
        _say(console, f"{run_id} cost: {costs_text(costs)}", indent=2)
    run_ids = dict.fromkeys(row.run_id for row in comparison.rows)
    tables.close(command or "deedbench compare " + " ".join(run_ids))
