"""Several runs side by side, in the shape of the TAC paper's table: model x condition.

Each row is one condition of one run: the primary rate with both intervals, chance
and the tests against it, the other metrics, pass^k, and the paired contrast against
the run's first condition. Runs of the same benchmark and data are also contrasted
with the first run given, condition by condition, on their shared (sample, epoch) keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from deedbench.audit import AuditSummary
from deedbench.records import AGENT_SCOPE
from deedbench.reports.columns import Codes
from deedbench.reports.contrast import Contrast, contrast, contrast_sides
from deedbench.reports.cost import RoleCost
from deedbench.reports.format import data_label
from deedbench.reports.summary import EpisodeFigures, RunSummary, RunTally
from deedbench.stats import ChanceTest, ClusterChanceTest, ClusterRate, PassK, Rate

__all__ = ["CompareRow", "Comparison", "compare_runs"]


class CompareRow(BaseModel):
    run_id: str
    agent: str
    condition: str
    episodes: int
    errors: int
    metrics: dict[str, Rate]
    clustered: dict[str, ClusterRate]
    chance: ChanceTest | None
    cluster_chance: ClusterChanceTest | None
    pass_hat_k: dict[str, list[PassK]]
    versus_first_condition: Contrast | None
    audits: list[AuditSummary] = []  # eval-awareness audits of this run and condition


class Comparison(BaseModel):
    benchmark: str
    primary: str
    metrics: list[str]
    cluster_by: str
    rows: list[CompareRow]
    versus_first_run: list[Contrast]  # later runs against the first, per shared condition
    # the same, on the episodes with no user or task fault on either side (`AGENT_SCOPE`):
    # whether a difference survives once the failures no agent could help are set aside
    versus_first_run_agent: list[Contrast] = Field(default_factory=list, exclude_if=lambda v: not v)
    unpaired: list[str]  # why some runs were not contrasted with the first
    # each run's model calls by role (agent, user, judge, audit judge), tokens and cost
    costs: dict[str, list[RoleCost]] = Field(default_factory=dict)


def compare_runs(
    summaries: Sequence[RunSummary],
    episodes: Mapping[str, RunTally | Sequence[EpisodeFigures]],
) -> Comparison:
    """Rows for every run and condition; runs must share a benchmark (its metrics differ).
    `episodes` holds each run's tally by run id (or its scored episodes' figures,
    `RunTally.episodes`), which the contrasts between runs pair."""
    if not summaries:
        raise ValueError("compare needs at least one run")
    first = summaries[0]
    mixed = sorted({s.run.benchmark for s in summaries} - {first.run.benchmark})
    if mixed:
        raise ValueError(
            f"runs of different benchmarks cannot share a table: {first.run.benchmark} and "
            + ", ".join(mixed)
        )
    spec = first.run.report
    primary = spec.metric(spec.primary)
    rows = []
    for summary in summaries:
        for c in summary.conditions:
            rows.append(
                CompareRow(
                    run_id=summary.run.run_id,
                    agent=summary.run.agent,
                    condition=c.condition,
                    episodes=c.overall.episodes,
                    errors=c.errors,
                    metrics=c.overall.metrics,
                    clustered=c.overall.clustered,
                    chance=c.overall.chance,
                    cluster_chance=c.overall.cluster_chance,
                    pass_hat_k=c.pass_hat_k,
                    versus_first_condition=c.versus_first,
                    audits=[a for a in summary.audits if a.condition == c.condition],
                )
            )
    contrasts: list[Contrast] = []
    agents: list[Contrast] = []
    attributed = any(m.given == AGENT_SCOPE for m in spec.metrics)
    unpaired: list[str] = []
    for summary in summaries[1:]:
        if summary.run.data_hash != first.run.data_hash:
            unpaired.append(
                f"{summary.run.run_id}: data {data_label(summary.run.data_hash)} differs "
                f"from {first.run.run_id}'s {data_label(first.run.data_hash)}, so no shared "
                "samples"
            )
            continue
        for condition in summary.run.conditions:
            if condition not in first.run.conditions:
                continue
            ours, theirs = episodes[first.run.run_id], episodes[summary.run.run_id]
            if isinstance(ours, RunTally) and isinstance(theirs, RunTally):
                labels = (f"{first.run.run_id}/{condition}", f"{summary.run.run_id}/{condition}")
                args = (primary.value, primary.name, condition, labels, ours, theirs)
                contrasts.append(_contrast(*args))
                if attributed:
                    agents.append(_contrast(*args, given=AGENT_SCOPE))
                continue
            pair = (
                (
                    f"{first.run.run_id}/{condition}",
                    [e for e in _figures(ours) if e.condition == condition],
                ),
                (
                    f"{summary.run.run_id}/{condition}",
                    [e for e in _figures(theirs) if e.condition == condition],
                ),
            )
            contrasts.append(contrast(primary.name, primary.value, *pair))
            if attributed:
                agents.append(contrast(primary.name, primary.value, *pair, given=AGENT_SCOPE))
    return Comparison(
        benchmark=first.run.benchmark,
        primary=spec.primary,
        metrics=[m.name for m in spec.metrics],
        cluster_by=first.cluster_by,
        rows=rows,
        versus_first_run=contrasts,
        versus_first_run_agent=agents,
        unpaired=unpaired,
        costs={summary.run.run_id: summary.costs for summary in summaries},
    )


def _figures(episodes: RunTally | Sequence[EpisodeFigures]) -> Sequence[EpisodeFigures]:
    return episodes.episodes if isinstance(episodes, RunTally) else episodes


def _contrast(
    value: str,
    metric: str,
    condition: str,
    labels: tuple[str, str],
    a: RunTally,
    b: RunTally,
    given: str | None = None,
) -> Contrast:
    """Run b's `condition` against run a's, from their columns."""
    codes = (Codes(), Codes())  # samples and clusters, numbered alike on both sides
    stride = max(a.columns().largest_epoch, b.columns().largest_epoch) + 1
    sides = []
    for tally in (a, b):
        columns = tally.columns()
        where = columns.of_condition(condition)
        sides.append(columns.side(where, value, given, *codes, stride))
    return contrast_sides(metric, (labels[0], sides[0]), (labels[1], sides[1]))
