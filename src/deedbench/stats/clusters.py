"""Intervals and tests that respect clusters: samples of one scenario (or task) are not independent.

Epochs of a scenario share its prompt, options and traps, so their outcomes move
together; treating them as independent trials understates the uncertainty. The
bootstraps here resample whole clusters with replacement and pool the trials of the
clusters drawn, so the interval widens as much as the within-cluster correlation
demands and no more.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import BaseModel

from deedbench.stats.rates import rate

if TYPE_CHECKING:  # numpy is imported where statistics are computed
    import numpy as np

__all__ = [
    "ClusterChanceTest",
    "ClusterRate",
    "FlipRate",
    "cluster_bootstrap_rate",
    "cluster_chance_of_totals",
    "cluster_chance_test",
    "cluster_rate_of_totals",
    "flip_rate_of",
    "flip_rates",
    "pooled_mean_bootstrap",
]


class ClusterRate(BaseModel):
    """The pooled mean of per-trial values, with a cluster-bootstrap percentile interval.

    value is None when there are no trials; the interval is None with fewer than two
    clusters, where resampling clusters has nothing to vary.
    """

    value: float | None
    ci_low: float | None
    ci_high: float | None
    clusters: int
    n: int


def cluster_bootstrap_rate(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ClusterRate:
    """Mean of values[i] over all trials; clusters[i] names the cluster of trial i.

    Each resample draws as many clusters as there are, with replacement, and takes the
    pooled mean (sum of their values / number of their trials), so large clusters
    weigh as much as they do in the point estimate.
    """
    _same_length(values, clusters, "values", "clusters")
    sums, counts = _cluster_totals(values, clusters)
    return cluster_rate_of_totals(sums, counts, confidence, resamples, seed)


def cluster_rate_of_totals(
    sums: np.ndarray,
    counts: np.ndarray,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ClusterRate:
    """`cluster_bootstrap_rate` from each cluster's sum of values and number of trials, the
    clusters in the order they first appear (the order decides which ones a resample draws)."""
    n = int(counts.sum())
    if n == 0:
        return ClusterRate(value=None, ci_low=None, ci_high=None, clusters=0, n=0)
    value = float(sums.sum() / counts.sum())
    if len(sums) < 2:
        return ClusterRate(value=value, ci_low=None, ci_high=None, clusters=len(sums), n=n)
    low, high, _ = pooled_mean_bootstrap(sums, counts, confidence, resamples, seed)
    return ClusterRate(value=value, ci_low=low, ci_high=high, clusters=len(sums), n=n)


class ClusterChanceTest(BaseModel):
    """The observed success rate against per-trial chance, with clusters resampled whole.

    difference = rate − chance (pooled over trials). The interval is a cluster-bootstrap
    percentile interval of the difference; p_below and p_above are one-sided bootstrap
    p-values for "below chance" and "above chance". Interval and p-values are None with
    fewer than two clusters; everything but the counts is None with no trials.
    """

    observed: int
    expected: float
    n: int
    clusters: int
    rate: float | None
    chance: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_below: float | None
    p_above: float | None


def cluster_chance_test(
    successes: Sequence[int],
    chances: Sequence[float],
    clusters: Sequence[Hashable],
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ClusterChanceTest:
    """Is the success rate below (or above) what uniform random choice would give?

    chance_test() is exact but assumes independent trials; here trial i (success 0/1,
    chance probability chances[i]) belongs to cluster clusters[i], and the clusters are
    resampled whole. Each resample's statistic is the pooled difference

        d* = (sum of successes − sum of chances) / number of trials

    over the clusters drawn, so a cluster carries its own chance level along with its
    outcomes. From the B bootstrap differences d*:

    - the interval is the percentile interval of d* at the given confidence;
    - p_below = (1 + #{d* >= 0}) / (1 + B), the evidence against "at or above chance";
    - p_above = (1 + #{d* <= 0}) / (1 + B), the evidence against "at or below chance".

    This is the percentile-interval inversion: p_below < alpha roughly when the one-sided
    (1 − alpha) upper percentile bound of the difference is below zero. The +1 keeps a
    finite bootstrap from reporting p = 0 and errs conservative; draws exactly at zero
    count against the claim. Like any bootstrap it is approximate, and poor with few
    clusters (say under 10): then read it beside the exact chance_test().
    """
    _same_length(successes, chances, "successes", "chances")
    _same_length(successes, clusters, "successes", "clusters")
    for i, (s, c) in enumerate(zip(successes, chances, strict=True)):
        if s not in (0, 1):
            raise ValueError(f"successes[{i}] is {s!r}; each trial's success must be 0 or 1")
        if not 0.0 <= c <= 1.0:
            raise ValueError(f"chances[{i}] is {c!r}; a chance probability lies in [0, 1]")
    import numpy as np

    differences = np.asarray(successes, dtype=float) - np.asarray(chances, dtype=float)
    sums, counts = _cluster_totals(differences, clusters)
    return cluster_chance_of_totals(
        int(sum(successes)), float(sum(chances)), sums, counts, confidence, resamples, seed
    )


def cluster_chance_of_totals(
    observed: int,
    expected: float,
    sums: np.ndarray,
    counts: np.ndarray,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> ClusterChanceTest:
    """`cluster_chance_test` from the successes, the sum of the chances (in the trials'
    order: a sum of floats depends on it) and each cluster's sum of (success - chance)
    and number of trials, the clusters in the order they first appear."""
    n = int(counts.sum())
    if n == 0:
        return ClusterChanceTest(
            observed=0,
            expected=0.0,
            n=0,
            clusters=0,
            rate=None,
            chance=None,
            difference=None,
            ci_low=None,
            ci_high=None,
            p_below=None,
            p_above=None,
        )
    import numpy as np

    low = high = p_below = p_above = None
    if len(sums) >= 2:
        low, high, draws = pooled_mean_bootstrap(sums, counts, confidence, resamples, seed)
        p_below = float((1 + np.count_nonzero(draws >= 0)) / (1 + draws.size))
        p_above = float((1 + np.count_nonzero(draws <= 0)) / (1 + draws.size))
    return ClusterChanceTest(
        observed=observed,
        expected=expected,
        n=n,
        clusters=len(sums),
        rate=observed / n,
        chance=expected / n,
        difference=float(sums.sum() / n),
        ci_low=low,
        ci_high=high,
        p_below=p_below,
        p_above=p_above,
    )


class FlipRate(BaseModel):
    """How often a variant prompt changes the choice made under the base prompt.

    Counted over the (scenario, epoch) keys both runs have; base_only and variant_only
    count the keys one run lacks, so a silently shrunken comparison shows. The Wilson
    interval treats keys as independent; epochs of one scenario are not, so for a
    cluster-aware interval pass the 0/1 flips to cluster_bootstrap_rate() by scenario.
    """

    flips: int
    n: int
    value: float | None
    ci_low: float | None
    ci_high: float | None
    base_only: int
    variant_only: int


def flip_rates(
    base: Mapping[tuple[str, int], str], variant: Mapping[tuple[str, int], str]
) -> FlipRate:
    """Share of shared (scenario, epoch) keys whose choice differs between the two runs."""
    shared = [key for key in base if key in variant]
    flips = sum(base[key] != variant[key] for key in shared)
    return flip_rate_of(flips, len(shared), len(base), len(variant))


def flip_rate_of(flips: int, shared: int, base: int, variant: int) -> FlipRate:
    """`flip_rates` from its counts: flips among the shared keys, and each side's keys."""
    result = rate(flips, shared)
    return FlipRate(
        flips=flips,
        n=shared,
        value=result.value,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        base_only=base - shared,
        variant_only=variant - shared,
    )


def pooled_mean_bootstrap(
    sums: np.ndarray, counts: np.ndarray, confidence: float, resamples: int, seed: int
) -> tuple[float, float, np.ndarray]:
    """Percentile interval of sum(sums)/sum(counts) over clusters drawn with replacement.

    Returns the interval and the bootstrap distribution. Needs at least two clusters.
    The same draws and quantiles as scipy.stats.bootstrap(paired=True,
    method="percentile") with a Generator seeded with `seed` (tests/stats compares the
    two to the last bit), in numpy alone: scipy.stats costs a second to import.
    """
    import numpy as np

    if _whole(sums) and _whole(counts):  # 0/1 outcomes: every order of adding is exact
        times = _times_drawn(seed, len(sums), resamples)
        draws: np.ndarray = (times @ sums) / (times @ counts)  # a sixth of the time
    else:
        drawn = _drawn(seed, len(sums), resamples)
        draws = sums[drawn].sum(axis=-1) / counts[drawn].sum(axis=-1)
    alpha = (1 - confidence) / 2
    low, high = _linear_quantiles(np.sort(draws), (alpha, 1 - alpha))
    return low, high, draws


@lru_cache(maxsize=8)
def _drawn(seed: int, clusters: int, resamples: int) -> np.ndarray:
    """Which clusters each resample draws: scipy's draws for this seed, the same for every
    statistic over as many clusters, so a summary's hundreds of bootstraps share them."""
    import numpy as np

    drawn = np.random.default_rng(seed).integers(0, clusters, (resamples, clusters))
    small = drawn.astype(np.min_scalar_type(clusters))  # a quarter of the memory, or less
    small.flags.writeable = False
    return small


@lru_cache(maxsize=8)
def _times_drawn(seed: int, clusters: int, resamples: int) -> np.ndarray:
    """How many times each resample draws each cluster, from the same draws."""
    import numpy as np

    drawn = _drawn(seed, clusters, resamples)
    cells = drawn + np.arange(resamples)[:, None] * clusters
    times = np.bincount(cells.ravel(), minlength=resamples * clusters).astype(float)
    times = times.reshape(resamples, clusters)
    times.flags.writeable = False
    return times


def _whole(values: np.ndarray) -> bool:
    """Whole numbers small enough that sums of them are exact in floating point."""
    import numpy as np

    return bool(np.all(values == np.round(values)) and np.all(np.abs(values) < 2**50))


def _linear_quantiles(ordered: np.ndarray, levels: tuple[float, ...]) -> list[float]:
    """Quantiles of sorted values by linear interpolation (Hyndman and Fan's type 7,
    the default of numpy and scipy.stats.quantile), in scipy's arithmetic."""
    n = len(ordered)
    result = []
    for p in levels:
        position = p * n + (1 - p)  # 1-based
        upper = position // 1
        fraction = position % 1
        lower = upper - 1
        if lower < 0:
            fraction = 0.0
        j, j1 = int(min(max(lower, 0), n - 1)), int(min(max(upper, 0), n - 1))
        result.append(float((1 - fraction) * ordered[j] + fraction * ordered[j1]))
    return result


def _cluster_totals(
    values: Sequence[float] | np.ndarray, clusters: Sequence[Hashable]
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sum of values and number of trials, clusters in order of first appearance."""
    import numpy as np

    index = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    codes = np.fromiter(map(index.__getitem__, clusters), dtype=np.intp, count=len(clusters))
    weights = np.asarray(values, dtype=float)
    if weights.size and not np.all(np.isfinite(weights)):
        raise ValueError("values must be finite numbers")
    sums = np.bincount(codes, weights=weights, minlength=len(index))
    counts = np.bincount(codes, minlength=len(index)).astype(float)
    return sums, counts


def _same_length(
    first: Sequence[object], second: Sequence[object], first_name: str, second_name: str
) -> None:
    if len(first) != len(second):
        raise ValueError(
            f"{first_name} and {second_name} differ in length: {len(first)} != {len(second)}"
        )
