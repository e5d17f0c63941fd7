"""Exact distributions of counts of independent 0/1 trials, in numpy alone.

A summary needs both one-sided tails of a count against chance, over up to millions of
trials whose chance levels take a few distinct values (one per scenario's safe share):
the count is a sum of a few binomials. scipy.stats has these distributions, but
importing it costs a second (its docstrings are assembled on import), five times what a
run may spend after its last answer; numpy does the arithmetic here, and tests/stats
check each function against exact rational arithmetic and scipy.stats's own values.

`count_tails` gives both tails in time that grows with the square root of the trials,
without building the whole distribution (`poisson_binomial_pmf` builds it, by direct
convolutions that grow with the square of the trials: 100,000 trials took seconds). It
tilts the distribution towards the observed count (exponential tilting: for any t,
P(X = x) = M(t) e^(-t x) P_t(X = x), where P_t is again a sum of binomials, each with
probability p e^t / (1 - p + p e^t), and M is the moment generating function), so the
terms the tail is made of are near the tilted distribution's centre; there each binomial
is computed by Loader's saddle-point formula (the one R's dbinom uses, relative error
near 1e-15 wherever the value does not underflow) on the range that holds all but 1e-20
of its largest term, and the binomials are convolved directly, so every term is a sum of
non-negative products and keeps its relative precision. The tail on the observed count's
side away from the mean is summed from the tilted terms, weighted by e^(-t (x - k)) <= 1;
the other tail is 1 minus it plus P(X = k), which is at least 1/2 and so loses nothing.
The relative error of either tail is below 1e-12 wherever the tail is above 1e-300
(tests/stats/test_exact.py checks 1e-12 against exact rational arithmetic).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where statistics are computed
    import numpy as np

__all__ = ["binomial_pmf", "binomial_tails", "count_tails", "poisson_binomial_pmf", "tails"]

# Stirling's error log(n!) - log(sqrt(2 pi n) (n/e)^n) for n = 0..15 (0 is a placeholder),
# as R's stirlerr tabulates it (computed here with 50-digit decimals; tests/stats checks).
_STIRLERR = (
    0.0,
    0.08106146679532726,
    0.0413406959554093,
    0.02767792568499834,
    0.020790672103765093,
    0.016644691189821193,
    0.013876128823070748,
    0.01189670994589177,
    0.010411265261972096,
    0.009255462182712733,
    0.00833056343336287,
    0.007573675487951841,
    0.00694284010720953,
    0.006408994188004207,
    0.0059513701127588475,
    0.005554733551962801,
)
_LN_2PI = math.log(2 * math.pi)
_KEEP = 1e-20  # each binomial is computed where its terms are at least this times its largest
_WHOLE_UP_TO = 20_000  # one binomial of at most this many trials: its whole distribution


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0..n, X ~ Binomial(n, p), each term by Loader's formula (relative
    error near 1e-15 down to where it underflows), in time linear in n."""
    import numpy as np

    return _binomial(n, p, 0, n) if n > 0 else np.ones(1)


def poisson_binomial_pmf(probabilities: Iterable[float]) -> np.ndarray:
    """P(X = k) for k = 0..n, X the number of successes of independent trials with these
    success probabilities. Trials sharing a probability form one binomial, and the
    binomials are multiplied smallest first by direct convolution: quadratic in the
    number of trials, so a summary uses `count_tails`, which needs only the tails."""
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


def binomial_tails(n: int, p: float, k: int) -> tuple[float, float]:
    """P(X <= k) and P(X >= k) for X ~ Binomial(n, p): `count_tails` of one binomial."""
    return count_tails({p: n}, k)


def count_tails(trials: Mapping[float, int], k: int) -> tuple[float, float]:
    """P(X <= k) and P(X >= k), at most 1, for X the number of successes of independent
    trials, `trials[p]` of them with success probability p (the module says how)."""
    import numpy as np

    shift = sum(n for p, n in trials.items() if p >= 1.0)  # certain successes
    groups = [(p, n) for p, n in trials.items() if 0.0 < p < 1.0 and n > 0]
    k -= shift
    total = sum(n for _, n in groups)
    if k < 0:
        return 0.0, 1.0
    if k > total:
        return 1.0, 0.0
    if len(groups) == 1 and total <= _WHOLE_UP_TO:  # every term, summed from each side
        return tails(_binomial(groups[0][1], groups[0][0], 0, total), k)
    if k == 0 or k == total:  # one term: every trial fails, or every one succeeds
        end = math.exp(sum(n * (math.log1p(-p) if k == 0 else math.log(p)) for p, n in groups))
        return (end, 1.0) if k == 0 else (1.0, end)
    tilt = _tilt(groups, k)
    start, terms = 0, np.ones(1)
    for p, n in groups:
        q = _tilted(p, tilt)
        low, high = _central(n, q)
        start += low
        terms = np.convolve(terms, _binomial(n, q, low, high))
    log_scale = math.fsum([n * math.log1p(p * math.expm1(tilt)) for p, n in groups] + [-tilt * k])
    x = np.arange(start, start + len(terms), dtype=float)
    here = terms[k - start] if start <= k < start + len(terms) else 0.0
    mean = sum(n * p for p, n in groups)
    below_side = k <= mean  # the tail that is summed: the one away from the mean
    side = (x <= k) if below_side else (x >= k)
    summed = float((terms[side] * np.exp(-tilt * (x[side] - k))).sum())  # weights <= 1
    small = math.exp(log_scale + math.log(summed)) if summed > 0 else 0.0
    at_k = math.exp(log_scale + math.log(here)) if here > 0 else 0.0
    big = 1.0 - small + at_k
    below, above = (small, big) if below_side else (big, small)
    return min(below, 1.0), min(above, 1.0)


def _tilt(groups: list[tuple[float, int]], k: int) -> float:
    """The t at which the tilted distribution's mean is k (0 < k < its trials): Newton's
    method kept inside a bracket. Any t gives exact tails; this one puts k at the centre."""
    low, high, t = -800.0, 800.0, 0.0
    for _ in range(200):
        mean = spread = 0.0
        for p, n in groups:
            q = _tilted(p, t)
            mean += n * q
            spread += n * q * (1 - q)
        if mean > k:
            high = t
        else:
            low = t
        step = (mean - k) / spread if spread > 0 else math.inf
        nxt = t - step
        if not low < nxt < high:
            nxt = (low + high) / 2
        if abs(nxt - t) < 1e-12:
            return nxt
        t = nxt
    return t


def _tilted(p: float, t: float) -> float:
    """p e^t / (1 - p + p e^t), computed without overflow."""
    logit = math.log(p) - math.log1p(-p) + t
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    e = math.exp(logit)
    return e / (1.0 + e)


def _central(n: int, p: float) -> tuple[int, int]:
    """The range of Binomial(n, p) that holds every term at least `_KEEP` times its largest:
    widened from twelve standard deviations until both ends (unless 0 or n) are below it."""
    mode = min(n, int((n + 1) * p))
    reach = 12.0 * math.sqrt(n * p * (1 - p)) + 8.0
    while True:
        low, high = max(0, int(mode - reach)), min(n, int(mode + reach) + 1)
        ends = _binomial(n, p, low, low), _binomial(n, p, high, high), _binomial(n, p, mode, mode)
        largest = float(ends[2][0])
        if (low == 0 or ends[0][0] < _KEEP * largest) and (
            high == n or ends[1][0] < _KEEP * largest
        ):
            return low, high
        reach *= 2


def _binomial(n: int, p: float, low: int, high: int) -> np.ndarray:
    """P(X = x) for x = low..high, X ~ Binomial(n, p) (0 < n), by Loader's formula:
    exp(stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, np) - bd0(n - x, nq)) /
    sqrt(2 pi x (n - x) / n), and the two ends by their own formulas."""
    import numpy as np

    x = np.arange(low, high + 1, dtype=float)
    q = 1.0 - p
    if p == 0.0 or q == 0.0:
        certain: np.ndarray = (x == (0 if p == 0.0 else n)).astype(float)
        return certain
    result = np.zeros(len(x))
    inner = (x > 0) & (x < n)
    xi = x[inner]
    if xi.size:
        lc = (
            _stirlerr(np.array([float(n)]))[0]
            - _stirlerr(xi)
            - _stirlerr(n - xi)
            - _bd0(xi, n * p)
            - _bd0(n - xi, n * q)
        )
        lf = _LN_2PI + np.log(xi) + np.log1p(-xi / n)
        result[inner] = np.exp(lc - 0.5 * lf)
    if low == 0:
        result[0] = math.exp(-_bd0_one(n, n * q) - n * p if p < 0.1 else n * math.log(q))
    if high == n:
        result[-1] = math.exp(-_bd0_one(n, n * p) - n * q if q < 0.1 else n * math.log(p))
    return result


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for whole n >= 1: the table, then the series."""
    import numpy as np

    result = np.empty(len(n))
    small = n <= 15
    result[small] = np.take(_STIRLERR, n[small].astype(np.intp))
    big = n[~small]
    nn = big * big
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    result[~small] = (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / big
    return result


def _bd0(x: np.ndarray, m: float) -> np.ndarray:
    """x log(x / m) + m - x for x > 0, without cancellation where x is near m."""
    import numpy as np

    result: np.ndarray = x * np.log(x / m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    if near.any():
        xn = x[near]
        v = (xn - m) / (xn + m)
        s = (xn - m) * v
        ej = 2 * xn * v
        v2 = v * v
        for j in range(1, 40):  # |v| < 0.1: each term is 100 times smaller than the last
            ej = ej * v2
            s = s + ej / (2 * j + 1)
            if not np.any(np.abs(ej) > 1e-18 * np.abs(s)):
                break
        result[near] = s
    return result


def _bd0_one(x: float, m: float) -> float:
    import numpy as np

    return float(_bd0(np.array([float(x)]), m)[0])
