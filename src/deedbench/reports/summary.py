"""A run's figures, computed from its stored episodes only.

The summary is the single source for every output: the terminal tables render
it and ``--json`` prints it as it is. Its input is a `RunTally`: the run's kinds of
episode and, per episode, its epoch and kind (`reports.columns` computes with them), read
from the store's kinds and facts or gathered from records as they arrive.
"""

from __future__ import annotations

import copy
import json
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from pydantic import BaseModel, Field

from deedbench.audit import AuditResult, AuditSummary, summarize_audits
from deedbench.records import EpisodeRecord, ReportSpec, RunConfig, Usage
from deedbench.records.kinds import episode_kind, kind_value
from deedbench.reports.columns import (
    Codes,
    Columns,
    Kind,
    ScoreFigures,
    kind_of_json,
)
from deedbench.reports.contrast import Contrast, contrast_sides
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
)

if TYPE_CHECKING:  # numpy is imported where figures are computed
    import numpy as np

__all__ = [
    "ConditionSummary",
    "Covariate",
    "CovariateResult",
    "EpisodeFigures",
    "ErrorKind",
    "GroupSummary",
    "RunSummary",
    "RunTally",
    "StoredRun",
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


def _kind_cluster(spec: ReportSpec) -> Callable[[Kind], str]:
    key = spec.cluster_by
    if key is None:
        return lambda k: k.sample_id
    return lambda k: str(k.metadata.get(key, k.sample_id))


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


class StoredRun(Protocol):
    """Where a run's kinds, facts and calls are read (`engine.store_figures`): the run
    store, or the viewer's read-only one."""

    @property
    def path(self) -> Path: ...
    def stored_kinds(self, run_id: str) -> list[tuple[int, int, str]]: ...
    def stored_facts(self, run_id: str) -> tuple[np.ndarray, np.ndarray]: ...
    def stored_calls(self, run_id: str) -> list[tuple[str, bool, Usage]]: ...
    def report_corrupt(self, message: str) -> None: ...


class RunTally:
    """A run's figures gathered as its episodes come: each kind of episode once
    (`records.kinds`) and, per episode in the order read, its epoch and its kind;
    the token usage of its calls summed. From the store (`stored`) that is what the
    store keeps (nothing per episode parsed); as a run's records arrive (`add`), each
    record is read once and let go. `added` counts the episodes, errors included."""

    def __init__(self, config: RunConfig) -> None:
        self.config = config
        spec = config.report
        self._spec = spec
        self._cluster = cluster_of(spec)
        self._group_by = tuple(spec.group_by)
        self._models = role_models(config)
        self._kinds: list[Kind] = []
        self._ids: dict[str, int] = {}  # a kind's JSON: its place in `_kinds`
        self._epochs = array("i")
        self._of = array("i")
        self._read: tuple[np.ndarray, np.ndarray] | None = None  # (epochs, kinds) from a store
        self._calls = CallTotals()
        self._columns: Columns | None = None  # made once per change

    @classmethod
    def of(cls, config: RunConfig, records: Iterable[EpisodeRecord]) -> RunTally:
        """A tally of these records (whole ones or stored summaries), read once, one at a
        time."""
        tally = cls(config)
        for record in records:
            tally.add(record)
        return tally

    @classmethod
    def stored(cls, config: RunConfig, store: StoredRun) -> RunTally:
        """The run's tally as the store keeps it: its kinds, two integers per episode and
        its calls (no record read). A kind the store marks corrupt (a summary that is no
        record's any more) is skipped, its episode named through the store."""
        import numpy as np

        tally = cls(config)
        run_id = config.run_id
        numbers = []
        for number, _, text in store.stored_kinds(run_id):
            value = json.loads(text)
            try:
                kind = kind_of_json(value)
            except (KeyError, TypeError, ValueError):
                store.report_corrupt(
                    f"{store.path}: skipped the corrupt summary of run {run_id!r}, sample "
                    f"{value.get('sample_id')!r}, condition {value.get('condition')!r}, epoch "
                    f"{value.get('corrupt', '?')}: it is no episode's record"
                )
                continue
            numbers.append(number)
            tally._kinds.append(kind)
        epochs, kinds = store.stored_facts(run_id)
        highest = int(kinds.max(initial=-1))
        place = np.full(max(highest, *numbers, 0) + 1, -1, dtype=np.int32)
        place[np.asarray(numbers, dtype=np.intp)] = np.arange(len(numbers), dtype=np.int32)
        np.take(place, kinds, out=kinds)  # the store's kind numbers become places, in place
        if kinds.size and int(kinds.min()) < 0:  # episodes of a corrupt kind: left out
            keep = kinds >= 0
            epochs, kinds = epochs[keep], kinds[keep]
        tally._read = (epochs, kinds)
        for role, billed, usage in store.stored_calls(run_id):
            tally._calls.add_total(role, tally._models.get(role, "unknown"), usage, billed)
        return tally

    @property
    def added(self) -> int:
        """Episodes counted, errors included."""
        return len(self._of) + (0 if self._read is None else len(self._read[1]))

    def add(self, record: EpisodeRecord, figures: EpisodeFigures | None = None) -> None:
        """Count one record (a whole one, or its stored summary: the same figures);
        `figures` is accepted and ignored (what is kept is the record's kind)."""
        if self._read is not None:  # one from the store: go on in memory
            epochs, of = self._read
            self._epochs.extend(epochs.tolist())
            self._of.extend(of.tolist())
            self._read = None
        self._columns = None
        text = episode_kind(record)
        index = self._ids.get(text)
        if index is None:
            index = self._ids[text] = len(self._kinds)
            self._kinds.append(kind_of_json(kind_value(record)))
        self._epochs.append(record.epoch)
        self._of.append(index)
        for m in record.messages:
            if m.usage is not None:
                self._calls.add(m.role, self._models.get(m.role, "unknown"), m.usage)
        for role in OUTSIDE_ROLES:  # model calls outside the conversation (τ²'s judge)
            used = record.usage.get(role)
            if used is not None:
                self._calls.add(role, self._models.get(role, "unknown"), used)

    def snapshot(self) -> RunTally:
        """A copy that later `add`s leave alone: a summary computed from it meanwhile
        counts only what was added before."""
        other = copy.copy(self)
        other._kinds = list(self._kinds)
        other._ids = dict(self._ids)
        other._epochs = array("i", self._epochs)
        other._of = array("i", self._of)
        other._calls = copy.deepcopy(self._calls)
        other._columns = None
        return other

    def columns(self) -> Columns:
        """The episodes as the statistics read them (`reports.columns`)."""
        import numpy as np

        if self._columns is not None:
            return self._columns
        if self._read is not None:
            epochs, of = self._read
        else:
            # copies: an array.array that lends its buffer cannot grow
            epochs = np.array(self._epochs, dtype=np.int32)
            of = np.array(self._of, dtype=np.int32)
        self._columns = Columns(
            self._kinds,
            epochs,
            of,
            self._spec,
            _kind_cluster(self._spec),
            self.config.conditions,
        )
        return self._columns

    @property
    def episodes(self) -> list[EpisodeFigures]:
        """Each scored episode's figures, in the order read (built on each call: a report
        computes from `columns`)."""
        columns = self.columns()
        figures = [self._figures_of(kind) for kind in self._kinds]
        return [
            figures[kind]._replace(epoch=epoch)
            for epoch, kind in zip(columns.epochs.tolist(), columns.of.tolist(), strict=True)
            if self._kinds[kind].status == "scored"
        ]

    def _figures_of(self, kind: Kind) -> EpisodeFigures:
        metadata, flip_by = kind.metadata, self._spec.flip_by
        return EpisodeFigures(
            kind.sample_id,
            kind.condition,
            0,
            _kind_cluster(self._spec)(kind),
            tuple([str(metadata.get(key, "?")) for key in self._group_by]),
            None if flip_by is None else str(metadata.get(flip_by, "?")),
            kind.score if kind.status == "scored" else None,
            kind.chance,
        )

    def figures(self, record: EpisodeRecord) -> EpisodeFigures:
        """What the statistics keep of one record (no score unless it was scored)."""
        figures = self._figures_of(kind_of_json(kind_value(record)))
        return figures._replace(epoch=record.epoch)

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
        columns = self.columns()
        planned = config.planned_episodes
        from deedbench.reports.figures import (  # they build this module's models
            all_positions,
            covariate_of,
            flips_of,
            group_of,
            group_pass_hat_k,
        )

        every = columns.first_counts(all_positions(columns))
        terminations: dict[str, Counter[str]] = defaultdict(Counter)
        errors: Counter[str] = Counter()
        kinds: dict[str, ErrorKind] = {}
        timeouts = scored = 0
        for kind, n in every:
            terminations[kind.condition][kind.termination] += n
            timeouts += kind.timeouts * n
            if kind.status == "scored":
                scored += n
                continue
            errors[kind.condition] += n
            message = kind.error or "unknown error"
            found = kinds.setdefault(
                _NUMBERS.sub("#", message), ErrorKind(message=message, count=0)
            )
            found.count += n
            timeouts += n * ("timed out" in (kind.error or ""))
        conditions = []
        for condition in config.conditions:
            mine = columns.of_condition(condition)
            by: dict[str, list[GroupSummary]] = {}
            for index, key in enumerate(spec.group_by):
                if key not in keys:
                    continue
                groups = columns.in_group(mine, index)
                by[key] = [
                    group_of(name, groups[name], columns, spec)
                    for name in sorted(groups, key=group_order)
                ]
            overall = group_of("all", mine, columns, spec)
            passes = {
                name: group_pass_hat_k(mine, columns, spec.metric(name).value)
                for name in spec.pass_hat_k
            }
            versus = None
            if condition != config.conditions[0]:
                first = config.conditions[0]
                shared = (Codes(), Codes(), columns.largest_epoch + 1)
                theirs = columns.side(columns.of_condition(first), primary.value, None, *shared)
                versus = contrast_sides(
                    primary.name,
                    (first, theirs),
                    (condition, columns.side(mine, primary.value, None, *shared)),
                )
            conditions.append(
                ConditionSummary(
                    condition=condition,
                    errors=errors[condition],
                    terminations=dict(sorted(terminations[condition].items())),
                    overall=overall,
                    by=by,
                    pass_hat_k=passes,
                    flips=flips_of(mine, columns, spec) if with_flips else [],
                    versus_first=versus,
                    covariate=covariate_of(mine, columns, primary, covariate),
                )
            )
        total: Counter[str] = Counter()
        for counts in terminations.values():
            total.update(counts)
        error_count = sum(errors.values())
        return RunSummary(
            run=config,
            cluster_by=spec.cluster_by or "sample",
            planned=planned,
            scored=scored,
            errors=error_count,
            missing=planned - scored - error_count,
            terminations=dict(sorted(total.items())),
            error_kinds=sorted(kinds.values(), key=lambda k: (-k.count, k.message)),
            timeouts=timeouts,
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
