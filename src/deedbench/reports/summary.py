"""A run's figures, computed from its stored episodes only.

The summary is the single source for every output: the terminal tables render
it and ``--json`` prints it as it is.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from pydantic import BaseModel

from deedbench.audit import AuditResult, AuditSummary, summarize_audits
from deedbench.records import EpisodeRecord, MetricSpec, ReportSpec, RunConfig
from deedbench.reports.contrast import Contrast, contrast
from deedbench.reports.cost import PriceTable, RoleCost, call_costs, run_costs
from deedbench.stats import (
    ChanceTest,
    ClusterChanceTest,
    ClusterRate,
    Correlation,
    FlipRate,
    PassK,
    Rate,
    chance_test,
    cluster_bootstrap_rate,
    cluster_chance_test,
    flip_rates,
    pass_hat_k,
    rate,
    spearman_with_bootstrap,
)

__all__ = [
    "ConditionSummary",
    "Covariate",
    "CovariateResult",
    "ErrorKind",
    "GroupSummary",
    "RunSummary",
    "VariantFlip",
    "cluster_of",
    "summarize",
]

_NUMBERS = re.compile(r"\d+(?:\.\d+)?")  # what two messages of one kind of error may differ in


class GroupSummary(BaseModel):
    """The rates of one group of scored episodes (all of a condition, or one category...).

    `metrics` has Wilson intervals (episodes as independent trials); `clustered` has the
    same rates with intervals from a bootstrap over clusters (scenarios or tasks), which
    is the honest one when episodes of a cluster move together. Both are shown.
    """

    group: str
    episodes: int
    metrics: dict[str, Rate]
    clustered: dict[str, ClusterRate] = {}
    outcomes: dict[str, int]
    chance: ChanceTest | None = None
    cluster_chance: ClusterChanceTest | None = None
    evidence_rules: dict[str, int] = {}  # how often each rule is cited (procedure violations...)


class VariantFlip(BaseModel):
    """How often a variant changed the agent's choice against the base variant."""

    variant: str
    flips: FlipRate
    clustered: ClusterRate


class Covariate(BaseModel):
    """A per-cluster number supplied by the user (e.g. a public-salience score per scenario)."""

    name: str
    values: dict[str, float]


class CovariateResult(BaseModel):
    """Spearman's rho between per-cluster rates of the primary metric and a covariate."""

    name: str
    metric: str
    correlation: Correlation
    unmatched: list[str]  # clusters of the run that the covariate file lacks


class ErrorKind(BaseModel):
    """Error episodes whose messages differ at most in numbers (attempts, seconds, ports):
    how many there are, and the first one's message."""

    message: str
    count: int


class ConditionSummary(BaseModel):
    condition: str
    errors: int  # episodes of this condition that infrastructure broke (in no rate)
    terminations: dict[str, int] = {}  # how its episodes ended, errors included
    overall: GroupSummary
    by: dict[str, list[GroupSummary]]
    pass_hat_k: dict[str, list[PassK]] = {}
    flips: list[VariantFlip] = []
    versus_first: Contrast | None = None  # paired against the run's first condition
    covariate: CovariateResult | None = None


class RunSummary(BaseModel):
    run: RunConfig
    cluster_by: str  # what a cluster is in this run's intervals: a metadata key, or "sample"
    planned: int
    scored: int
    errors: int
    missing: int
    terminations: dict[str, int]
    error_kinds: list[ErrorKind]  # most frequent first
    # model calls that timed out: those sent again before an answer, and the last attempts
    # of calls whose retries ran out
    timeouts: int = 0
    conditions: list[ConditionSummary]
    costs: list[RoleCost]
    audits: list[AuditSummary] = []  # per judge (or the scanner alone) and condition


def cluster_of(spec: ReportSpec) -> Callable[[EpisodeRecord], str]:
    """The cluster an episode belongs to: its `cluster_by` metadata value, else its sample."""
    key = spec.cluster_by
    if key is None:
        return lambda r: r.sample_id
    return lambda r: str(r.metadata.get(key, r.sample_id))


def summarize(
    config: RunConfig,
    records: Iterable[EpisodeRecord],
    prices: PriceTable | None = None,
    covariate: Covariate | None = None,
    audits: Iterable[AuditResult] = (),
) -> RunSummary:
    """Every figure of a run; `audits` are its stored eval-awareness audits, if any."""
    spec = config.report
    audits = list(audits)
    prices = prices or PriceTable.load()
    cluster = cluster_of(spec)
    primary = spec.metric(spec.primary)
    records = list(records)
    scored: list[EpisodeRecord] = []
    errors: list[EpisodeRecord] = []
    for record in records:
        (scored if record.status == "scored" else errors).append(record)
    planned = config.planned_episodes
    conditions = []
    for condition in config.conditions:
        mine = [r for r in scored if r.condition == condition]
        by: dict[str, list[GroupSummary]] = {}
        for key in spec.group_by:
            groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
            for r in mine:
                groups[str(r.metadata.get(key, "?"))].append(r)
            by[key] = [_group(name, groups[name], spec, cluster) for name in sorted(groups)]
        overall = _group("all", mine, spec, cluster)
        passes = {name: _pass_hat_k(mine, spec.metric(name).value) for name in spec.pass_hat_k}
        versus = None
        if condition != config.conditions[0]:
            first = config.conditions[0]
            versus = contrast(
                primary.name,
                primary.value,
                (first, (r for r in scored if r.condition == first)),
                (condition, mine),
                cluster,
            )
        conditions.append(
            ConditionSummary(
                condition=condition,
                errors=sum(1 for r in errors if r.condition == condition),
                terminations=_terminations(r for r in records if r.condition == condition),
                overall=overall,
                by=by,
                pass_hat_k=passes,
                flips=_flips(mine, spec, cluster),
                versus_first=versus,
                covariate=_covariate(mine, primary, cluster, covariate),
            )
        )
    return RunSummary(
        run=config,
        cluster_by=spec.cluster_by or "sample",
        planned=planned,
        scored=len(scored),
        errors=len(errors),
        missing=planned - len(scored) - len(errors),
        terminations=_terminations(records),
        error_kinds=_error_kinds(errors),
        timeouts=sum(u.timeouts for r in records for u in r.usage.values())
        + sum(1 for r in errors if "timed out" in (r.error or "")),
        conditions=conditions,
        costs=run_costs(
            records,
            {"assistant": config.agent, "user": config.user.spec if config.user else "unknown"},
            prices,
        )
        + call_costs(
            (
                ("judge", a.judge_spec, a.usage["judge"])
                for a in audits
                if a.judge_spec and "judge" in a.usage
            ),
            prices,
        ),
        audits=summarize_audits(audits),
    )


def _terminations(records: Iterable[EpisodeRecord]) -> dict[str, int]:
    return dict(sorted(Counter(r.termination for r in records).items()))


def _error_kinds(errors: list[EpisodeRecord]) -> list[ErrorKind]:
    """Distinct error messages, numbers aside, each with how many errors it stands for."""
    kinds: dict[str, ErrorKind] = {}
    for record in errors:
        message = record.error or "unknown error"
        kind = kinds.setdefault(_NUMBERS.sub("#", message), ErrorKind(message=message, count=0))
        kind.count += 1
    return sorted(kinds.values(), key=lambda k: (-k.count, k.message))


def _pass_hat_k(records: list[EpisodeRecord], value: str) -> list[PassK]:
    trials: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        if r.score is not None:
            trials[r.sample_id].append(r.score.values.get(value, 0.0) == 1.0)
    return pass_hat_k(trials)


def _counted(
    records: Iterable[EpisodeRecord], metric: MetricSpec
) -> list[tuple[EpisodeRecord, float]]:
    """The episodes a metric counts (those with `given` = 1, where it has one), with values."""
    return [
        (r, r.score.values.get(metric.value, 0.0))
        for r in records
        if r.score is not None and metric.counts(r.score.values)
    ]


def _group(
    name: str,
    records: list[EpisodeRecord],
    spec: ReportSpec,
    cluster: Callable[[EpisodeRecord], str],
) -> GroupSummary:
    rates = {}
    clustered = {}
    for metric in spec.metrics:
        counted = _counted(records, metric)
        values = [value for _, value in counted]
        rates[metric.name] = rate(sum(values), len(values))
        clustered[metric.name] = cluster_bootstrap_rate(values, [cluster(r) for r, _ in counted])
    chance = cluster_chance = None
    if spec.compare_to_chance:
        primary = spec.metric(spec.primary).value
        trials = [r for r in records if r.score is not None and r.chance is not None]
        successes = [round(r.score.values.get(primary, 0.0)) for r in trials if r.score]
        chances = [r.chance for r in trials if r.chance is not None]
        chance = chance_test(sum(successes), chances)
        cluster_chance = cluster_chance_test(successes, chances, [cluster(r) for r in trials])
    scores = [r.score for r in records if r.score is not None]
    outcomes = Counter(sc.outcome for sc in scores)
    rules = Counter(e.rule for sc in scores for e in sc.evidence if e.rule)
    return GroupSummary(
        group=name,
        episodes=len(records),
        metrics=rates,
        clustered=clustered,
        outcomes=dict(outcomes),
        chance=chance,
        cluster_chance=cluster_chance,
        evidence_rules=dict(sorted(rules.items())),
    )


def _flips(
    records: list[EpisodeRecord], spec: ReportSpec, cluster: Callable[[EpisodeRecord], str]
) -> list[VariantFlip]:
    """Per variant, the choices compared with the base variant's on the same (cluster, epoch)."""
    if spec.flip_by is None or spec.cluster_by is None:
        return []
    choices: dict[str, dict[tuple[str, int], str]] = defaultdict(dict)
    for r in records:
        if r.score is not None and r.score.choice is not None:
            variant = str(r.metadata.get(spec.flip_by, "?"))
            choices[variant][(cluster(r), r.epoch)] = r.score.choice
    base = choices.get(spec.flip_base)
    if not base:
        return []
    result = []
    for variant in sorted(v for v in choices if v != spec.flip_base):
        mine = choices[variant]
        shared = [key for key in base if key in mine]
        result.append(
            VariantFlip(
                variant=variant,
                flips=flip_rates(base, mine),
                clustered=cluster_bootstrap_rate(
                    [float(base[k] != mine[k]) for k in shared], [k[0] for k in shared]
                ),
            )
        )
    return result


def _covariate(
    records: list[EpisodeRecord],
    primary: MetricSpec,
    cluster: Callable[[EpisodeRecord], str],
    covariate: Covariate | None,
) -> CovariateResult | None:
    if covariate is None:
        return None
    per_cluster: dict[str, list[float]] = defaultdict(list)
    for r, value in _counted(records, primary):
        per_cluster[cluster(r)].append(value)
    matched = sorted(c for c in per_cluster if c in covariate.values)
    return CovariateResult(
        name=covariate.name,
        metric=primary.name,
        correlation=spearman_with_bootstrap(
            [sum(per_cluster[c]) / len(per_cluster[c]) for c in matched],
            [covariate.values[c] for c in matched],
        ),
        unmatched=sorted(set(per_cluster) - set(matched)),
    )
