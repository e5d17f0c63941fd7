"""Paired comparisons of two runs over the same keys (scenario, epoch) or tasks.

Pairing removes the variation between keys, which is usually most of it, so a paired
test sees a difference that two separate intervals would hide.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from deedbench.stats.clusters import _cluster_totals, pooled_mean_bootstrap
from deedbench.stats.exact import binomial_pmf, tails

if TYPE_CHECKING:  # numpy is imported where statistics are computed
    import numpy as np

__all__ = [
    "McNemar",
    "PairedDifference",
    "mcnemar_exact",
    "mcnemar_of",
    "paired_bootstrap_difference",
    "paired_difference_of",
]

_K = TypeVar("_K", bound=Hashable)


class McNemar(BaseModel):
    """McNemar's exact test on paired 0/1 outcomes.

    Only discordant pairs carry information: b01 counts keys where a failed and b
    succeeded, b10 the reverse. Under no difference each discordant pair goes either
    way with probability 1/2, so p_value is the two-sided binomial test of b01 out of
    b01 + b10 (1.0 with no discordant pairs).
    """

    b01: int
    b10: int
    n_shared: int
    p_value: float


def mcnemar_exact(a: Mapping[_K, bool], b: Mapping[_K, bool]) -> McNemar:
    """Does b succeed on different keys than a more often one way than the other?"""
    shared = [key for key in a if key in b]
    b01 = sum(not a[key] and bool(b[key]) for key in shared)
    b10 = sum(bool(a[key]) and not b[key] for key in shared)
    return mcnemar_of(b01, b10, len(shared))


def mcnemar_of(b01: int, b10: int, shared: int) -> McNemar:
    """`mcnemar_exact` from its counts: the discordant pairs each way, and the pairs."""
    discordant = b01 + b10
    # scipy's binomtest(b01, discordant, 0.5): at p = 1/2 the two tails mirror each
    # other, so the two-sided p-value is twice the smaller one (1 when they meet, as
    # with no discordant pairs).
    smaller = min(b01, b10)
    p_value = 1.0
    if 2 * smaller != discordant:
        below, _ = tails(binomial_pmf(discordant, 0.5), smaller)
        p_value = min(1.0, 2 * below)
    return McNemar(b01=b01, b10=b10, n_shared=shared, p_value=p_value)


class PairedDifference(BaseModel):
    """mean(b − a) over shared keys, with a percentile bootstrap interval.

    The bootstrap resamples keys, or whole clusters when clusters are given (epochs of
    one scenario move together). value is None with no shared keys; the interval is None
    with fewer than two resampling units.
    """

    value: float | None
    mean_a: float | None
    mean_b: float | None
    ci_low: float | None
    ci_high: float | None
    n_shared: int
    clusters: int


def paired_bootstrap_difference(
    a: Mapping[_K, float],
    b: Mapping[_K, float],
    clusters: Mapping[_K, str] | None = None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedDifference:
    """Mean difference b − a on the keys both have; clusters maps each key to its cluster.

    Without clusters every key is its own cluster, which makes the pooled mean of the
    resampled clusters the plain mean of the resampled keys. With clusters the statistic
    is the pooled mean over all keys of the clusters drawn.
    """
    shared = [key for key in a if key in b]
    if clusters is None:
        groups: list[Hashable] = list(range(len(shared)))
    else:
        missing = [key for key in shared if key not in clusters]
        if missing:
            raise ValueError(
                f"clusters has no entry for {len(missing)} key(s), e.g. {missing[0]!r}"
            )
        groups = [clusters[key] for key in shared]
    import numpy as np  # imported where statistics are computed

    first = np.array([a[key] for key in shared], dtype=float)
    second = np.array([b[key] for key in shared], dtype=float)
    sums, counts = _cluster_totals(second - first, groups)
    if not shared:
        return paired_difference_of(sums, counts, None, None)
    return paired_difference_of(
        sums, counts, float(first.mean()), float(second.mean()), confidence, resamples, seed
    )


def paired_difference_of(
    sums: np.ndarray,
    counts: np.ndarray,
    mean_a: float | None,
    mean_b: float | None,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedDifference:
    """`paired_bootstrap_difference` from each cluster's sum of b − a and number of shared
    keys (the clusters in the order they first appear) and the two sides' means."""
    shared = int(counts.sum())
    if not shared:
        return PairedDifference(
            value=None, mean_a=None, mean_b=None, ci_low=None, ci_high=None, n_shared=0, clusters=0
        )
    low = high = None
    if len(sums) >= 2:
        low, high, _ = pooled_mean_bootstrap(sums, counts, confidence, resamples, seed)
    return PairedDifference(
        value=float(sums.sum() / shared),
        mean_a=mean_a,
        mean_b=mean_b,
        ci_low=low,
        ci_high=high,
        n_shared=shared,
        clusters=len(sums),
    )
