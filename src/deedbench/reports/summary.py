"""A run's figures, computed from its stored episodes only.

The summary is the single source for every output: the terminal tables render
it and ``--json`` prints it as it is.
"""

from __future__ import annotations

import copy
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from sys import intern
from typing import NamedTuple

from pydantic import BaseModel, Field

from deedbench.audit import AuditResult, AuditSummary, summarize_audits
from deedbench.records import EpisodeRecord, MetricSpec, ReportSpec, RunConfig
from deedbench.reports.contrast import Contrast, contrast
from deedbench.reports.cost import (
    OUTSIDE_ROLES,
    CallTotals,
    PriceTable,
    RoleCost,
    call_costs,
    role_models,
)
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
    "EpisodeFigures",
    "ErrorKind",
    "GroupSummary",
    "RunSummary",
    "RunTally",
    "ScoreFigures",
    "VariantFlip",
    "cluster_of",
    "group_order",
    "summarize",
]

_NUMBERS = re.compile(r"\d+(?:\.\d+)?")  # what two messages of one kind of error may differ in
_DIGITS = re.compile(r"(\d+)")


def group_order(name: str) -> tuple[list[str | int], str]:
    """The order groups are listed in, natural: numbers inside a name compare as numbers,
    so τ²'s tasks run 0, 1, 2, ..., 10 (not 0, 1, 10, 11, ..., 2), and "task_9" comes
    before "task_10"; names equal but for case or leading zeros keep a fixed order."""
    parts = _DIGITS.split(name)  # text, digits, text, ...: each kind at the same places
    return [int(p) if i % 2 else p.casefold() for i, p in enumerate(parts)], name


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
    # how often the scores cite each piece of evidence, by its rule field: procedure rules
    # broken, and the evidence of the checks (terminal.split_evidence tells them apart)
    evidence_rules: dict[str, int] = {}
    # the episodes that did not succeed, by whose failure each was (`records.Attribution`),
    # and how many episodes each kind of fault was found in; left out where none was judged
    failures: dict[str, int] = Field(default_factory=dict, exclude_if=lambda v: not v)
    fault_kinds: dict[str, int] = Field(default_factory=dict, exclude_if=lambda v: not v)


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


class ScoreFigures(NamedTuple):
    """What the statistics read of a score: no evidence excerpts, only the rules cited."""

    outcome: str
    values: dict[str, float]
    choice: str | None
    rules: tuple[str, ...]
    party: str | None = None  # whose failure it was (`records.Attribution`), None: no verdict
    faults: tuple[str, ...] = ()  # the kinds of the faults found in it, each once


class EpisodeFigures(NamedTuple):
    """What the statistics keep of one scored episode, instead of its record: a few
    strings and its score's values (hundreds of bytes, where a record is tens of KB).
    A named tuple: immutable, as the viewer shares them, and quick to make by the
    tens of thousands (a frozen dataclass took 2.5 us, this 0.5 us)."""

    sample_id: str
    condition: str
    epoch: int
    cluster: str
    groups: tuple[str, ...]  # its value of each of the report's `group_by` keys
    variant: str | None  # its value of the report's `flip_by` key (None: the report has none)
    score: ScoreFigures | None
    chance: float | None


class RunTally:
    """A run's figures gathered as its records stream by, each record read once and let
    go: errors, terminations, timeouts and token usage are counted on the way, and each
    scored episode leaves only its `EpisodeFigures` (`episodes`, in the order read) for
    the statistics, which need every episode of a group at once."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        spec = config.report
        self._spec = spec
        self._cluster = cluster_of(spec)
        self._group_by = tuple(spec.group_by)
        self._models = role_models(config)
        self.episodes: list[EpisodeFigures] = []
        self.added = 0  # records added, errors included
        self._errors: Counter[str] = Counter()  # per condition
        self._terminations: dict[str, Counter[str]] = defaultdict(Counter)  # per condition
        self._kinds: dict[str, ErrorKind] = {}
        self._timeouts = 0
        self._calls = CallTotals()

    @classmethod
    def of(cls, config: RunConfig, records: Iterable[EpisodeRecord]) -> RunTally:
        """A tally of these records (whole ones or stored summaries), read once, one at a
        time."""
        tally = cls(config)
        for record in records:
            tally.add(record)
        return tally

    def add(self, record: EpisodeRecord, figures: EpisodeFigures | None = None) -> None:
        """Count one record (a whole one, or its stored summary: the same figures);
        `figures`, if the caller has made them already, are its `figures(record)`."""
        self.added += 1
        condition = intern(record.condition)
        self._terminations[condition][intern(record.termination)] += 1
        self._timeouts += sum(u.timeouts for u in record.usage.values())
        for m in record.messages:
            if m.usage is not None:
                self._calls.add(m.role, self._models.get(m.role, "unknown"), m.usage)
        for role in OUTSIDE_ROLES:  # model calls outside the conversation (τ²'s judge)
            used = record.usage.get(role)
            if used is not None:
                self._calls.add(role, self._models.get(role, "unknown"), used)
        if record.status != "scored":
            self._errors[condition] += 1
            message = record.error or "unknown error"
            key = _NUMBERS.sub("#", message)
            kind = self._kinds.setdefault(key, ErrorKind(message=message, count=0))
            kind.count += 1
            self._timeouts += "timed out" in (record.error or "")
            return
        self.episodes.append(figures or self.figures(record))

    def snapshot(self) -> RunTally:
        """A copy that later `add`s leave alone: a summary computed from it meanwhile
        counts only what was added before."""
        other = copy.copy(self)
        other.episodes = list(self.episodes)
        other._errors = Counter(self._errors)
        other._terminations = defaultdict(
            Counter, {c: Counter(t) for c, t in self._terminations.items()}
        )
        other._kinds = {key: kind.model_copy() for key, kind in self._kinds.items()}
        other._calls = copy.deepcopy(self._calls)
        return other

    def figures(self, record: EpisodeRecord) -> EpisodeFigures:
        """What the statistics keep of one record (no score unless it was scored); its
        strings interned, so that the figures of a big run share them."""
        score = record.score if record.status == "scored" else None
        figures = None
        if score is not None:
            rules = tuple([intern(e.rule) for e in score.evidence if e.rule])
            choice = None if score.choice is None else intern(score.choice)
            found = score.attribution
            party = None if found is None or found.party is None else intern(found.party)
            kinds = () if found is None else tuple(sorted({intern(f.kind) for f in found.faults}))
            figures = ScoreFigures(intern(score.outcome), score.values, choice, rules, party, kinds)
        metadata, flip_by = record.metadata, self._spec.flip_by
        return EpisodeFigures(
            intern(record.sample_id),
            intern(record.condition),
            record.epoch,
            intern(self._cluster(record)),
            tuple([intern(str(metadata.get(key, "?"))) for key in self._group_by]),
            None if flip_by is None else intern(str(metadata.get(flip_by, "?"))),
            figures,
            record.chance,
        )

    def summary(
        self,
        prices: PriceTable | None = None,
        covariate: Covariate | None = None,
        audits: Iterable[AuditResult] = (),
        groupings: Sequence[str] | None = None,
    ) -> RunSummary:
        """Every figure of the records added so far; `audits` are the run's stored
        eval-awareness audits, if any. `groupings` limits the breakdowns to those
        `group_by` keys, and the flips to a run whose `flip_by` key is among them (None:
        all), for a reader that shows no others: a run's closing tables show one."""
        config, spec = self.config, self._spec
        keys = spec.group_by if groupings is None else list(groupings)
        with_flips = groupings is None or spec.flip_by in keys
        audits = list(audits)
        prices = prices or PriceTable.load()
        primary = spec.metric(spec.primary)
        scored = self.episodes
        planned = config.planned_episodes
        errors = sum(self._errors.values())
        conditions = []
        for condition in config.conditions:
            mine = [e for e in scored if e.condition == condition]
            columns = _Columns(mine, spec)
            by: dict[str, list[GroupSummary]] = {}
            for index, key in enumerate(spec.group_by):
                if key not in keys:
                    continue
                groups: dict[str, list[int]] = defaultdict(list)
                for position, e in enumerate(mine):
                    groups[e.groups[index]].append(position)
                by[key] = [
                    _group(name, groups[name], columns, spec)
                    for name in sorted(groups, key=group_order)
                ]
            overall = _group("all", range(len(mine)), columns, spec)
            passes = {name: _pass_hat_k(mine, spec.metric(name).value) for name in spec.pass_hat_k}
            versus = None
            if condition != config.conditions[0]:
                first = config.conditions[0]
                versus = contrast(
                    primary.name,
                    primary.value,
                    (first, (e for e in scored if e.condition == first)),
                    (condition, mine),
                )
            conditions.append(
                ConditionSummary(
                    condition=condition,
                    errors=self._errors[condition],
                    terminations=dict(sorted(self._terminations[condition].items())),
                    overall=overall,
                    by=by,
                    pass_hat_k=passes,
                    flips=_flips(mine, spec) if with_flips else [],
                    versus_first=versus,
                    covariate=_covariate(mine, primary, covariate),
                )
            )
        terminations: Counter[str] = Counter()
        for counts in self._terminations.values():
            terminations.update(counts)
        return RunSummary(
            run=config,
            cluster_by=spec.cluster_by or "sample",
            planned=planned,
            scored=len(scored),
            errors=errors,
            missing=planned - len(scored) - errors,
            terminations=dict(sorted(terminations.items())),
            error_kinds=sorted(self._kinds.values(), key=lambda k: (-k.count, k.message)),
            timeouts=self._timeouts,
            conditions=conditions,
            costs=self._calls.costs(prices)
            + call_costs(
                (
                    ("audit judge", a.judge_spec, a.usage["judge"])
                    for a in audits
                    if a.judge_spec and "judge" in a.usage
                ),
                prices,
            ),
            audits=summarize_audits(audits),
        )


def summarize(
    config: RunConfig,
    records: Iterable[EpisodeRecord],
    prices: PriceTable | None = None,
    covariate: Covariate | None = None,
    audits: Iterable[AuditResult] = (),
) -> RunSummary:
    """Every figure of a run, its records (or their stored summaries) read once, one at
    a time; `audits` are its stored eval-awareness audits, if any."""
    return RunTally.of(config, records).summary(prices, covariate, audits)


def _pass_hat_k(episodes: list[EpisodeFigures], value: str) -> list[PassK]:
    trials: dict[str, list[bool]] = defaultdict(list)
    for e in episodes:
        # an episode without the value was not scored on it (τ²'s "needs judge"): it is
        # no trial, neither a pass nor a failure
        if e.score is not None and value in e.score.values:
            trials[e.sample_id].append(e.score.values[value] == 1.0)
    return pass_hat_k(trials)


class _Columns:
    """One condition's episodes as numpy columns, built in one pass, so that each group
    (all of them, and one per value of every grouping) is counted by indexing them
    instead of by a pass in Python per metric."""

    def __init__(self, episodes: list[EpisodeFigures], spec: ReportSpec) -> None:
        import numpy as np

        self.scores = [e.score for e in episodes]
        self.scored = np.array([s is not None for s in self.scores], dtype=bool)
        names = {m.value for m in spec.metrics} | {m.given for m in spec.metrics if m.given}
        self.values = {
            name: np.array([0.0 if s is None else s.values.get(name, 0.0) for s in self.scores])
            for name in names
        }
        self.clusters = np.array([e.cluster for e in episodes], dtype=object)
        self.chances = np.array([np.nan if e.chance is None else e.chance for e in episodes])


def _group(
    name: str, positions: Sequence[int], columns: _Columns, spec: ReportSpec
) -> GroupSummary:
    """The figures of the episodes at these positions (in the order read) of a condition."""
    import numpy as np

    where = np.asarray(positions, dtype=np.intp)
    scored = where[columns.scored[where]]
    rates = {}
    clustered = {}
    for metric in spec.metrics:
        counted = scored  # the episodes a metric counts: those with `given` = 1, if it has one
        if metric.given is not None:
            counted = scored[columns.values[metric.given][scored] == 1.0]
        values = columns.values[metric.value][counted]
        rates[metric.name] = rate(float(values.sum()), len(values))
        clustered[metric.name] = cluster_bootstrap_rate(values, columns.clusters[counted])
    chance = cluster_chance = None
    if spec.compare_to_chance:
        trials = scored[~np.isnan(columns.chances[scored])]
        primary = columns.values[spec.metric(spec.primary).value][trials]
        successes = [round(v) for v in primary.tolist()]
        chances = columns.chances[trials].tolist()
        chance = chance_test(sum(successes), chances)
        cluster_chance = cluster_chance_test(successes, chances, columns.clusters[trials])
    scores = [s for i in scored.tolist() if (s := columns.scores[i]) is not None]
    outcomes = Counter(sc.outcome for sc in scores)
    rules = Counter(rule for sc in scores for rule in sc.rules)
    parties = Counter(sc.party for sc in scores if sc.party is not None)
    kinds = Counter(kind for sc in scores for kind in sc.faults)
    return GroupSummary(
        group=name,
        episodes=len(where),
        metrics=rates,
        clustered=clustered,
        outcomes=dict(outcomes),
        chance=chance,
        cluster_chance=cluster_chance,
        evidence_rules=dict(sorted(rules.items())),
        failures=dict(parties.most_common()),
        fault_kinds=dict(kinds.most_common()),
    )


def _flips(episodes: list[EpisodeFigures], spec: ReportSpec) -> list[VariantFlip]:
    """Per variant, the choices compared with the base variant's on the same (cluster, epoch)."""
    if spec.flip_by is None or spec.cluster_by is None:
        return []
    choices: dict[str, dict[tuple[str, int], str]] = defaultdict(dict)
    for e in episodes:
        if e.score is not None and e.score.choice is not None:
            choices[e.variant or "?"][(e.cluster, e.epoch)] = e.score.choice
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
    episodes: list[EpisodeFigures], primary: MetricSpec, covariate: Covariate | None
) -> CovariateResult | None:
    if covariate is None:
        return None
    per_cluster: dict[str, list[float]] = defaultdict(list)
    for e in episodes:
        if e.score is not None and primary.counts(e.score.values):
            per_cluster[e.cluster].append(e.score.values.get(primary.value, 0.0))
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
