"""Exact distributions of counts of independent 0/1 trials, in numpy alone.

A summary needs the whole distribution of a count (for both one-sided tails) over
tens of thousands of trials, and the end of every run computes one. scipy.stats has
these distributions, but importing it costs a second (its docstrings are assembled on
import), five times what a run may spend after its last answer. numpy does the
arithmetic here; tests/stats check each function against scipy.stats's own values.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where statistics are computed
    import numpy as np

__all__ = ["binomial_pmf", "poisson_binomial_pmf", "tails"]


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0..n, X ~ Binomial(n, p): the polynomial ((1 - p) + p x)^n by
    repeated squaring. Every term is a sum of non-negative products, so nothing cancels
    and each probability keeps its relative precision down to where it underflows."""
    import numpy as np

    result = np.ones(1)
    power = np.array([1.0 - p, p])
    while n:
        if n & 1:
            result = np.convolve(result, power)
        n >>= 1
        if n:
            power = np.convolve(power, power)
    return result


def poisson_binomial_pmf(probabilities: Iterable[float]) -> np.ndarray:
    """P(X = k) for k = 0..n, X the number of successes of independent trials with these
    success probabilities. Trials sharing a probability form one binomial (a benchmark
    has few distinct chance levels, so this is a handful of them), and the binomials are
    multiplied smallest first, which keeps the direct convolutions cheap."""
    import numpy as np

    factors = [
        (n + 1, i, binomial_pmf(n, p)) for i, (p, n) in enumerate(Counter(probabilities).items())
    ]
    if not factors:
        return np.ones(1)
    heapq.heapify(factors)
    while len(factors) > 1:
        _, i, first = heapq.heappop(factors)
        _, _, second = heapq.heappop(factors)
        product = np.convolve(first, second)
        heapq.heappush(factors, (len(product), i, product))
    return factors[0][2]


def tails(pmf: np.ndarray, k: int) -> tuple[float, float]:
    """P(X <= k) and P(X >= k), each summed from its own side (so a tiny upper tail is
    not lost in 1 - P(X < k)), at most 1."""
    below = float(pmf[: max(k + 1, 0)].sum())
    above = float(pmf[max(k, 0) :].sum())
    return min(below, 1.0), min(above, 1.0)
