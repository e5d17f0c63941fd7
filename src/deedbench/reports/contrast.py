"""Paired contrasts: one metric, two sets of episodes, the keys both have.

Used between two conditions of a run (TAC's welfare prompt against base) and between
two runs (model A against model B on the same samples). Pairing on (sample, epoch)
removes the variation between samples, and the bootstrap resamples whole clusters
(scenarios or tasks) because epochs and variants of one cluster move together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from pydantic import BaseModel

from deedbench.reports.columns import Side, shared_keys, totals
from deedbench.stats import McNemar, PairedDifference, mcnemar_exact, paired_bootstrap_difference
from deedbench.stats.paired import mcnemar_of, paired_difference_of

__all__ = ["Contrast", "Paired", "contrast", "contrast_sides"]

_PairKey = tuple[str, int]


class _Values(Protocol):
    @property
    def values(self) -> Mapping[str, float]: ...


class Paired(Protocol):
    """What a contrast reads of an episode (a report's `EpisodeFigures`): its key, the
    cluster it is resampled with, its score."""

    @property
    def sample_id(self) -> str: ...
    @property
    def epoch(self) -> int: ...
    @property
    def cluster(self) -> str: ...
    @property
    def score(self) -> _Values | None: ...


class Contrast(BaseModel):
    """b − a on one metric: McNemar's exact test and a cluster-bootstrap paired interval."""

    metric: str
    a: str
    b: str
    mcnemar: McNemar
    difference: PairedDifference


def contrast(
    metric: str,
    value: str,
    a: tuple[str, Iterable[Paired]],
    b: tuple[str, Iterable[Paired]],
    given: str | None = None,
) -> Contrast:
    """Compare score value `value` of b's episodes against a's on shared (sample, epoch) keys.

    a and b are (label, episodes); only scored episodes count, and with `given`, only those
    whose value `given` is 1 on both sides (episodes with no user or task fault).
    """
    first, clusters = _values(a[1], value, given)
    second, more = _values(b[1], value, given)
    clusters.update(more)
    return Contrast(
        metric=metric,
        a=a[0],
        b=b[0],
        mcnemar=mcnemar_exact(
            {k: v == 1.0 for k, v in first.items()}, {k: v == 1.0 for k, v in second.items()}
        ),
        difference=paired_bootstrap_difference(first, second, clusters),
    )


def contrast_sides(metric: str, a: tuple[str, Side], b: tuple[str, Side]) -> Contrast:
    """`contrast` of two sides given as columns (`Columns.side`): the same figures, the
    keys b shares taken in a's order, each shared key's cluster b's."""
    first, second = a[1], b[1]
    where, found = shared_keys(first.keys, second.keys)
    theirs = second.kinds[where[found]]
    del where  # a million episodes: each array here is megabytes, let go when done
    va, vb = first.values[first.kinds[found]], second.values[theirs]
    del found
    ones_a, ones_b = va == 1.0, vb == 1.0
    b01, b10 = int((~ones_a & ones_b).sum()), int((ones_a & ~ones_b).sum())
    del ones_a, ones_b
    shared = len(va)
    means = (float(va.mean()), float(vb.mean())) if shared else (None, None)
    clusters = second.clusters[theirs]
    del theirs
    vb -= va
    del va
    sums, counts = totals(clusters, vb)
    return Contrast(
        metric=metric,
        a=a[0],
        b=b[0],
        mcnemar=mcnemar_of(b01, b10, shared),
        difference=paired_difference_of(sums, counts, *means),
    )


def _values(
    episodes: Iterable[Paired], value: str, given: str | None = None
) -> tuple[dict[_PairKey, float], dict[_PairKey, str]]:
    values: dict[_PairKey, float] = {}
    clusters: dict[_PairKey, str] = {}
    for e in episodes:
        if e.score is None or (given is not None and e.score.values.get(given) != 1.0):
            continue
        key = (e.sample_id, e.epoch)
        values[key] = e.score.values.get(value, 0.0)
        clusters[key] = e.cluster
    return values, clusters
