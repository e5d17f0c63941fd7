"""Rates with Wilson intervals, and the exact test of a count against per-trial chance."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

__all__ = ["ChanceTest", "Rate", "chance_test", "rate"]


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
    from scipy import stats  # imported where statistics are computed, not with the module

    interval = stats.binomtest(int(k), n).proportion_ci(confidence, method="wilson")
    return Rate(k=k, n=n, value=k / n, ci_low=float(interval.low), ci_high=float(interval.high))


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
    if not probabilities:
        return None
    from scipy import stats

    distribution = stats.poisson_binom(list(probabilities))
    expected = float(sum(probabilities))
    return ChanceTest(
        chance=expected / len(probabilities),
        expected=expected,
        observed=observed,
        n=len(probabilities),
        p_below=float(distribution.cdf(observed)),
        p_above=float(distribution.sf(observed - 1)),
    )
