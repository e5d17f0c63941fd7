"""A run's episodes as a report computes with them: each kind of episode once, and two
small integers per episode (its epoch and its kind) in the order the episodes were stored.

An episode's kind is everything a report reads of it but its epoch and its calls' usage
(`records.kinds`); a run of a million episodes has a few hundred. So a group's rate, its
clusters' totals, the chance tests' trials and the counts of outcomes, rules and faults
are sums over kinds, weighted by how many episodes of each kind the group has; only what
pairs episodes (flips between variants on the same cluster and epoch, contrasts between
conditions or runs on the same sample and epoch) reads the epochs. Everything here is
numpy over those arrays, never a Python loop per episode, and every figure is the one
the episodes read one at a time gave: the same sums in the same order where the order of
floating-point sums matters, the clusters and outcomes in the order they first appear.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from deedbench.records import MetricSpec, ReportSpec

if TYPE_CHECKING:  # numpy is imported where figures are computed
    import numpy as np

__all__ = [
    "Codes",
    "Columns",
    "Counted",
    "Kind",
    "ScoreFigures",
    "Side",
    "counter_in_order",
    "first_order",
    "first_places",
    "kind_of_json",
    "last_of_each",
    "ordered_sum",
    "shared_keys",
    "totals",
]


class ScoreFigures(NamedTuple):
    """What the statistics read of a score: no evidence excerpts, only the rules cited."""

    outcome: str
    values: dict[str, float]
    choice: str | None
    rules: tuple[str, ...]
    party: str | None = None  # whose failure it was (`records.Attribution`), None: no verdict
    faults: tuple[str, ...] = ()  # the kinds of the faults found in it, each once


class Kind(NamedTuple):
    """One kind of episode (`records.kinds`): all a report reads of an episode but its
    epoch and its calls' usage."""

    sample_id: str
    condition: str
    status: str
    termination: str
    error: str | None
    timeouts: int
    score: ScoreFigures | None
    metadata: dict[str, Any]
    chance: float | None


def kind_of_json(value: Mapping[str, Any]) -> Kind:
    """A kind from its JSON value, as the store keeps it (KeyError or TypeError when it is
    not one)."""
    score = value["score"]
    figures = None
    if score is not None:
        figures = ScoreFigures(
            str(score["outcome"]),
            {str(k): float(v) for k, v in dict(score["values"]).items()},
            None if score["choice"] is None else str(score["choice"]),
            tuple(str(rule) for rule in score["rules"]),
            None if score["party"] is None else str(score["party"]),
            tuple(sorted({str(kind) for kind in score["faults"]})),
        )
    chance = value["chance"]
    return Kind(
        str(value["sample_id"]),
        str(value["condition"]),
        str(value["status"]),
        str(value["termination"]),
        None if value["error"] is None else str(value["error"]),
        int(value["timeouts"] or 0),
        figures,
        dict(value["metadata"]),
        None if chance is None else float(chance),
    )


def ordered_sum(values: np.ndarray, at: np.ndarray | None = None) -> float:
    """Python's `sum` of these floats (of `values[at]`, if given), one after the other in
    their order (as the trials' chance levels were summed one record at a time), without
    a Python float per value held at once."""
    taken = values if at is None else at
    step = 65_536

    def chunk(i: int) -> list[float]:
        part = taken[i : i + step]
        return (part if at is None else values[part]).tolist()  # type: ignore[no-any-return]

    return float(sum(itertools.chain.from_iterable(chunk(i) for i in range(0, len(taken), step))))


class Codes:
    """Strings numbered in the order they are first given."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        return self.ids.setdefault(text, len(self.ids))

    def names(self) -> list[str]:
        return list(self.ids)


@dataclass(frozen=True)
class Side:
    """One side of a paired contrast: the (sample, epoch) keys of its scored episodes in
    the order stored (sample codes shared with the other side), each one's kind, and what
    a kind's value and cluster are (cluster codes shared too)."""

    keys: np.ndarray  # sample code * stride + epoch
    kinds: np.ndarray
    values: np.ndarray  # per kind
    clusters: np.ndarray  # per kind


def first_places(codes: np.ndarray, size: int, count: np.ndarray | None = None) -> np.ndarray:
    """Where each code 0..size-1 first appears among `codes` (int64; their number where it
    does not), `count` each code's occurrences if known. The codes are read from the start
    in blocks that double, each one's first places by a sort of the block, until every
    code present is found: a few hundred kinds first appear among a run's first epochs, so
    a million episodes cost a few thousand (np.minimum.at over all of them was most of a
    report's time at a million)."""
    import numpy as np

    n = len(codes)
    first = np.full(size, n, dtype=np.int64)
    if count is None:
        count = np.bincount(codes, minlength=size)
    missing = int(np.count_nonzero(count))
    start, step = 0, 4096
    while missing and start < n:
        found, at = np.unique(codes[start : start + step], return_index=True)
        new = first[found] == n
        first[found[new]] = at[new] + start
        missing -= int(np.count_nonzero(new))
        start, step = start + step, step * 2
    return first


def first_order(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct codes (small whole numbers) in the order they first appear, and each
    element's place in that order (`first_places`: no sort of them all)."""
    import numpy as np

    n = len(codes)
    if not n:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.int32)
    first = first_places(codes, int(codes.max()) + 1)
    present = np.flatnonzero(first < n)
    found = present[np.argsort(first[present], kind="stable")]
    rank = np.full(len(first), -1, dtype=np.int32)
    rank[found] = np.arange(len(found), dtype=np.int32)
    return found, rank[codes]


def totals(clusters: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (in the order they first appear): the sum of the values, one after the
    other as they come, and the number of them."""
    import numpy as np

    found, place = first_order(clusters)
    sums = np.bincount(place, weights=values.astype(float), minlength=len(found))
    counts = np.bincount(place, minlength=len(found)).astype(float)
    return sums, counts


class Counted(NamedTuple):
    """Some of a run's episodes, per kind: how many, and where the first of them is among
    them (their number where the kind has none)."""

    episodes: np.ndarray
    first: np.ndarray


class Columns:
    """A run's stored episodes for its report: its kinds, and per episode its epoch and
    kind in the order stored. `cluster` names an episode's cluster from its kind."""

    def __init__(
        self,
        kinds: Sequence[Kind],
        epochs: np.ndarray,
        of: np.ndarray,
        spec: ReportSpec,
        cluster: Callable[[Kind], str],
        conditions: Sequence[str],
    ) -> None:
        import numpy as np

        self.kinds, self.epochs, self.of, self.spec = kinds, epochs, of, spec
        self.conditions = list(conditions)
        count = len(kinds)
        # per kind
        condition = {c: i for i, c in enumerate(self.conditions)}
        self.condition = np.array([condition.get(k.condition, -1) for k in kinds], dtype=np.int32)
        self.scored = np.array([k.status == "scored" for k in kinds], dtype=bool)
        self.has_score = np.array([k.score is not None for k in kinds], dtype=bool)
        self.samples = Codes()
        self.sample = np.array([self.samples(k.sample_id) for k in kinds], dtype=np.int32)
        self.clusters = Codes()
        self.cluster = np.array([self.clusters(cluster(k)) for k in kinds], dtype=np.int32)
        self.groups: list[tuple[Codes, np.ndarray]] = []
        for key in spec.group_by:
            codes = Codes()
            self.groups.append(
                (
                    codes,
                    np.array([codes(str(k.metadata.get(key, "?"))) for k in kinds], np.intp),
                )
            )
        flip_by = spec.flip_by
        self.variants = Codes()
        self.variant = np.array(
            [
                -1 if flip_by is None else self.variants(str(k.metadata.get(flip_by, "?")))
                for k in kinds
            ],
            dtype=np.int32,
        )
        self.choices = Codes()
        self.choice = np.array(
            [
                -1 if k.score is None or k.score.choice is None else self.choices(k.score.choice)
                for k in kinds
            ],
            dtype=np.int32,
        )
        self.chance = np.array([np.nan if k.chance is None else k.chance for k in kinds])
        self._values: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.count = np.bincount(of, minlength=count) if count else np.zeros(0, np.intp)
        self.largest_epoch = int(epochs.max()) if epochs.size else 0

    # --- per kind ---------------------------------------------------------------------------

    def value(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Per kind, score value `name` (0 where its score has none, as a record read
        one at a time gave) and whether its score has it."""
        import numpy as np

        found = self._values.get(name)
        if found is None:
            scores = [k.score for k in self.kinds]
            has = np.array([s is not None and name in s.values for s in scores], dtype=bool)
            values = np.array([0.0 if s is None else s.values.get(name, 0.0) for s in scores])
            found = self._values[name] = (values, has)
        return found

    def counted(self, metric: MetricSpec) -> np.ndarray:
        """Per kind: whether a rate of `metric` counts it (scored, with `given` 1)."""
        counted = self.has_score.copy()
        if metric.given is not None:
            counted &= self.value(metric.given)[0] == 1.0
        return counted

    # --- episodes ---------------------------------------------------------------------------

    def of_condition(self, condition: str) -> np.ndarray:
        """The positions of the condition's scored episodes, in the order stored."""
        import numpy as np

        index = self.conditions.index(condition)
        wanted = self.scored & (self.condition == index)
        found = np.flatnonzero(wanted[self.of])
        return found.astype(np.int32) if len(self.of) < 2**31 else found

    def in_group(self, positions: np.ndarray, key: int) -> dict[str, np.ndarray]:
        """The positions by their value of the `key`-th grouping, by name."""
        import numpy as np

        codes, per_kind = self.groups[key]
        names = codes.names()
        values = per_kind[self.of[positions]]
        present = np.flatnonzero(np.bincount(values, minlength=len(names)))
        return {names[v]: positions[values == v] for v in present.tolist()}

    def counted_kinds(self, positions: np.ndarray) -> Counted:
        """These episodes per kind (`first_places`: no sort of them all)."""
        import numpy as np

        kinds = self.of[positions]
        count = np.bincount(kinds, minlength=len(self.kinds))
        return Counted(count, first_places(kinds, len(self.kinds), count))

    def by_cluster(
        self, counted: Counted, chosen: np.ndarray, weights: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Per cluster of the `chosen` kinds' episodes, in the order the clusters first
        appear: the sum of each episode's weight (its kind's) and how many; None where the
        weights are not all whole numbers, whose sum depends on the order of its terms
        (then the caller sums episode by episode)."""
        import numpy as np

        kinds = np.flatnonzero(chosen & (counted.episodes > 0))
        if not np.all(weights[kinds] == np.round(weights[kinds])):
            return None
        size = len(self.clusters.ids)
        clusters = self.cluster[kinds]
        first = np.full(size, np.iinfo(np.intp).max, dtype=np.intp)
        np.minimum.at(first, clusters, counted.first[kinds])
        n = counted.episodes[kinds].astype(float)
        sums = np.bincount(clusters, weights=n * weights[kinds], minlength=size)
        counts = np.bincount(clusters, weights=n, minlength=size)
        present = np.flatnonzero(counts > 0)
        order = present[np.argsort(first[present], kind="stable")]
        return sums[order], counts[order]

    def first_counts(self, positions: np.ndarray) -> list[tuple[Kind, int]]:
        """The kinds of these episodes, each with how many, in the order they first appear."""
        import numpy as np

        kinds = self.of[positions]
        found, _ = first_order(kinds)
        counts = np.bincount(kinds, minlength=len(self.kinds))
        return [(self.kinds[k], int(counts[k])) for k in found.tolist()]

    def side(
        self,
        positions: np.ndarray,
        value: str,
        given: str | None,
        samples: Codes,
        clusters: Codes,
        stride: int,
    ) -> Side:
        """These episodes as a contrast's side (those with a score, and `given` 1 if named):
        keys (sample code * `stride` + epoch), kinds, and each kind's value and cluster,
        coded by the codes both sides share."""
        import numpy as np

        kinds = self.of[positions]
        keep = self.has_score[kinds]
        if given is not None:
            keep &= self.value(given)[0][kinds] == 1.0
        kinds, epochs = kinds[keep], self.epochs[positions[keep]]
        wide = (len(samples.ids) + len(self.samples.ids)) * stride >= 2**31
        sample = np.array(
            [samples(name) for name in self.samples.names()],
            dtype=np.int64 if wide else np.int32,
        )
        cluster = np.array([clusters(name) for name in self.clusters.names()], dtype=np.int32)
        keys = sample[self.sample[kinds]]
        keys *= stride
        keys += epochs
        return Side(
            keys=keys,
            kinds=kinds,
            values=self.value(value)[0],
            clusters=cluster[self.cluster] if len(self.kinds) else np.zeros(0, np.intp),
        )


def shared_keys(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where b has each of a's keys (in a's order; -1 where it has none), and whether it
    has it: keys are unique on each side, whole numbers from 0. Keys that fill a table
    no bigger than a few times the two sides are looked up in it (no sort)."""
    import numpy as np

    size = int(max(a.max(initial=-1), b.max(initial=-1))) + 1
    if size <= 4 * (len(a) + len(b)) + 1024:
        table = np.full(size, -1, dtype=np.int32 if len(b) < 2**31 else np.intp)
        table[b] = np.arange(len(b), dtype=table.dtype)
        where = table[a]
        return where, where >= 0
    order = np.argsort(b, kind="stable")
    ordered = b[order]
    at = np.searchsorted(ordered, a)
    found = at < len(ordered)
    found[found] = ordered[at[found]] == a[found]
    where = np.full(len(a), -1, dtype=np.intp)
    where[found] = order[at[found]]
    return where, found


def last_of_each(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A mapping's keys in the order first given and each one's last value: what a dict
    filled one (key, value) at a time holds (keys whole numbers from 0)."""
    import numpy as np

    if not keys.size:
        return keys, values
    size = int(keys.max()) + 1
    if size <= 4 * len(keys) + 1024:
        seen = np.zeros(size, dtype=bool)
        seen[keys] = True
        if int(np.count_nonzero(seen)) == len(keys):  # each key once: the pairs as given
            return keys, values
    found, first = np.unique(keys, return_index=True)
    _, last = np.unique(keys[::-1], return_index=True)
    last = len(keys) - 1 - last
    order = np.argsort(first, kind="stable")
    return found[order], values[last[order]]


def counter_in_order(pairs: Sequence[tuple[str, int]]) -> Counter[str]:
    """A Counter filled in this order (its keys keep the order they first came)."""
    counted: Counter[str] = Counter()
    for name, n in pairs:
        counted[name] += n
    return counted
