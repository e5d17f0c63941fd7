"""A run's figures, computed from its stored episodes only.

The summary is the single source for every output: the terminal tables render
it and ``--json`` prints it as it is.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from pydantic import BaseModel

from deedbench.engine import EpisodeRecord, RunConfig
from deedbench.reports.cost import PriceTable, RoleCost, run_costs
from deedbench.scoring import MetricSpec, ReportSpec
from deedbench.stats import ChanceTest, PassK, Rate, chance_test, pass_hat_k, rate

__all__ = ["GroupSummary", "RunSummary", "summarize"]


class GroupSummary(BaseModel):
    """The rates of one group of scored episodes (all of a condition, or one category...)."""

    group: str
    episodes: int
    metrics: dict[str, Rate]
    outcomes: dict[str, int]
    chance: ChanceTest | None = None
    evidence_rules: dict[str, int] = {}  # how often each rule is cited (procedure violations...)


class ConditionSummary(BaseModel):
    condition: str
    overall: GroupSummary
    by: dict[str, list[GroupSummary]]
    pass_hat_k: dict[str, list[PassK]] = {}


class RunSummary(BaseModel):
    run: RunConfig
    planned: int
    scored: int
    errors: int
    missing: int
    terminations: dict[str, int]
    error_examples: list[str]
    conditions: list[ConditionSummary]
    costs: list[RoleCost]


def summarize(
    config: RunConfig, records: Iterable[EpisodeRecord], prices: PriceTable | None = None
) -> RunSummary:
    spec = config.report
    records = list(records)
    scored: list[EpisodeRecord] = []
    errors: list[EpisodeRecord] = []
    for record in records:
        (scored if record.status == "scored" else errors).append(record)
    planned = len(config.episode_keys())
    conditions = []
    for condition in config.conditions:
        mine = [r for r in scored if r.condition == condition]
        by: dict[str, list[GroupSummary]] = {}
        for key in spec.group_by:
            groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
            for r in mine:
                groups[str(r.metadata.get(key, "?"))].append(r)
            by[key] = [_group(name, groups[name], spec) for name in sorted(groups)]
        overall = _group("all", mine, spec)
        passes = {name: _pass_hat_k(mine, spec.metrics, name) for name in spec.pass_hat_k}
        conditions.append(
            ConditionSummary(condition=condition, overall=overall, by=by, pass_hat_k=passes)
        )
    return RunSummary(
        run=config,
        planned=planned,
        scored=len(scored),
        errors=len(errors),
        missing=planned - len(scored) - len(errors),
        terminations=dict(Counter(r.termination for r in scored + errors)),
        error_examples=sorted({r.error or "unknown error" for r in errors})[:5],
        conditions=conditions,
        costs=run_costs(
            records,
            {"assistant": config.agent, "user": config.user.get("spec", "unknown")},
            prices or PriceTable.load(),
        ),
    )


def _pass_hat_k(records: list[EpisodeRecord], metrics: list[MetricSpec], name: str) -> list[PassK]:
    value = next(m.value for m in metrics if m.name == name)
    trials: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        if r.score is not None:
            trials[r.sample_id].append(r.score.values.get(value, 0.0) == 1.0)
    return pass_hat_k(trials)


def _group(name: str, records: list[EpisodeRecord], spec: ReportSpec) -> GroupSummary:
    scores = [r.score for r in records if r.score is not None]
    rates = {}
    for metric in spec.metrics:
        pool = [
            sc.values for sc in scores if metric.given is None or sc.values.get(metric.given) == 1.0
        ]
        rates[metric.name] = rate(sum(v.get(metric.value, 0.0) for v in pool), len(pool))
    chance = None
    if spec.compare_to_chance:
        primary = next(m.value for m in spec.metrics if m.name == spec.primary)
        trials = [
            (round(r.score.values.get(primary, 0.0)), r.chance)
            for r in records
            if r.score is not None and r.chance is not None
        ]
        chance = chance_test(sum(k for k, _ in trials), [p for _, p in trials])
    outcomes = Counter(sc.outcome for sc in scores)
    rules = Counter(e.rule for sc in scores for e in sc.evidence if e.rule)
    return GroupSummary(
        group=name,
        episodes=len(records),
        metrics=rates,
        outcomes=dict(outcomes),
        chance=chance,
        evidence_rules=dict(sorted(rules.items())),
    )
