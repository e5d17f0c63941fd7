"""Rates with Wilson intervals, and the exact test of a count against per-trial chance."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import NormalDist

from pydantic import BaseModel

from deedbench.stats.exact import count_tails

__all__ = ["ChanceTest", "Rate", "chance_test", "chance_test_of", "rate"]


class Rate(BaseModel):
    """k successes out of n, with a 95% Wilson interval (None when n is 0).

    Only counts of 0/1 outcomes have a binomial interval; a metric with partial
    credit needs another interval and is refused here rather than rounded.
    """

    k: float
    n: int
    value: float | None
    ci_low: float | None
    ci_high: float | None


def rate(k: float, n: int, confidence: float = 0.95) -> Rate:
    if k != int(k):
        raise ValueError(f"rate() takes a count of 0/1 outcomes; got k={k}")
    if n == 0:
        return Rate(k=k, n=0, value=None, ci_low=None, ci_high=None)
    low, high = _wilson(int(k), n, confidence)
    return Rate(k=k, n=n, value=k / n, ci_low=low, ci_high=high)


def _wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """The two-sided Wilson score interval, as scipy's
    `binomtest(k, n).proportion_ci(confidence, method="wilson")` computes it but with
    the standard library's normal quantile (within a few units in the last place of
    scipy's, as tests/stats checks): scipy's binomtest also runs a p-value search this
    would throw away (~5 ms a rate), and importing scipy.special costs 0.3 s."""
    z = NormalDist().inv_cdf(0.5 + 0.5 * confidence)
    p = k / n
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    return (0.0 if k == 0 else center - delta), (1.0 if k == n else center + delta)


class ChanceTest(BaseModel):
    """The observed count against what uniform random choice would give.

    Each trial has its own chance probability (#safe/#options of its sample), so
    the count under chance follows a Poisson-binomial distribution; both one-sided
    exact p-values are given.
    """

    chance: float
    expected: float
    observed: int
    n: int
    p_below: float
    p_above: float


def chance_test(observed: int, probabilities: Sequence[float]) -> ChanceTest | None:
    """`observed` successes of trials with these chance probabilities, against chance."""
    if not probabilities:
        return None
    return chance_test_of(observed, Counter(probabilities), float(sum(probabilities)))


def chance_test_of(
    observed: int, trials: Mapping[float, int], expected: float
) -> ChanceTest | None:
    """The same from the number of trials at each chance probability, and `expected`,
    their sum as the trials came (a sum of floats depends on its order; `chance_test`'s
    is Python's, in the trials' order)."""
    n = sum(trials.values())
    if not n:
        return None
    p_below, p_above = count_tails(trials, observed)
    return ChanceTest(
        chance=expected / n,
        expected=expected,
        observed=observed,
        n=n,
        p_below=p_below,
        p_above=p_above,
    )
