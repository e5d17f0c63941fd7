"""The exact count distributions against exact rational arithmetic and scipy.stats's own
values; the bootstrap against scipy.stats.bootstrap, draw for draw."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from deedbench.stats.clusters import pooled_mean_bootstrap
from deedbench.stats.exact import binomial_pmf, count_tails, poisson_binomial_pmf, tails
from deedbench.stats.paired import mcnemar_exact

# Chance levels as a benchmark has them (#safe / #options), with the certain ones.
LEVELS = [Fraction(n, d) for n, d in ((0, 1), (1, 1), (1, 4), (1, 3), (1, 2), (1, 5), (2, 3))]
LEVELS += [Fraction(3, 4), Fraction(1, 8), Fraction(9, 10)]


def exact_pmf(probabilities: list[Fraction]) -> list[Fraction]:
    pmf = [Fraction(1)]
    for p in probabilities:
        pmf = [
            (pmf[k] * (1 - p) if k < len(pmf) else 0) + (pmf[k - 1] * p if k else 0)
            for k in range(len(pmf) + 1)
        ]
    return pmf


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(LEVELS), min_size=1, max_size=250), st.data())
def test_tails_are_exact_to_the_last_digits_even_when_tiny(
    levels: list[Fraction], data: st.DataObject
) -> None:
    """Both tails within 1e-13 of exact rational arithmetic, however small: scipy's
    upper tail is 1 - cdf, which is 0 below about 1e-16."""
    pmf = exact_pmf(levels)
    mine = poisson_binomial_pmf([float(p) for p in levels])
    k = data.draw(st.integers(0, len(levels)))
    below, above = tails(mine, k)
    for got, want in ((below, float(sum(pmf[: k + 1]))), (above, float(sum(pmf[k:])))):
        assert got == pytest.approx(want, rel=1e-13, abs=1e-300)


def test_a_tiny_upper_tail_is_kept() -> None:
    """All 60 trials at chance 1/2 succeeding: 2**-60, where 1 - cdf gives 0."""
    _, above = tails(poisson_binomial_pmf([0.5] * 60), 60)
    assert above == pytest.approx(2.0**-60, rel=1e-14)
    assert float(stats.poisson_binom([0.5] * 60).sf(59)) == 0.0


@pytest.mark.parametrize("n", [1, 7, 64, 1000, 20_000])
def test_many_trials_agree_with_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    chances = rng.choice([0.25, 1 / 3, 0.5, 2 / 3, 0.75], n).tolist()
    mine = poisson_binomial_pmf(chances)
    reference = stats.poisson_binom(chances)
    assert mine.sum() == pytest.approx(1.0, abs=1e-12)
    for k in {0, n // 3, int(sum(chances)), n}:
        below, above = tails(mine, k)
        assert below == pytest.approx(float(reference.cdf(k)), rel=1e-9, abs=1e-300)
        if float(reference.sf(k - 1)) > 1e-6:  # where scipy's 1 - cdf is still precise
            assert above == pytest.approx(float(reference.sf(k - 1)), rel=1e-9)


@pytest.mark.parametrize(("n", "p"), [(0, 0.3), (1, 0.3), (10, 0.5), (333, 0.1), (4096, 0.75)])
def test_binomial_is_scipys(n: int, p: float) -> None:
    reference = stats.binom.pmf(range(n + 1), n, p)
    assert binomial_pmf(n, p) == pytest.approx(reference, rel=1e-11, abs=1e-300)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400))
def test_mcnemar_is_scipys_binomtest(b01: int, b10: int) -> None:
    a = {i: i < b10 for i in range(b01 + b10)}
    b = {i: i >= b10 for i in range(b01 + b10)}
    reference = 1.0 if b01 + b10 == 0 else stats.binomtest(b01, b01 + b10, 0.5).pvalue
    assert mcnemar_exact(a, b).p_value == pytest.approx(reference, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 60),
    st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]),
    st.sampled_from([2, 99, 1000, 10_000]),
    st.integers(0, 2**32),
    st.booleans(),
)
def test_bootstrap_is_scipys_draw_for_draw(
    clusters: int, confidence: float, resamples: int, seed: int, whole: bool
) -> None:
    """The same resamples and interval as scipy.stats.bootstrap, to the last bit, for
    counts (whole sums) and for differences from chance (fractional sums)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 30, clusters).astype(float)
    sums = np.floor(rng.random(clusters) * (counts + 1)) if whole else rng.random(clusters) * counts
    low, high, draws = pooled_mean_bootstrap(sums, counts, confidence, resamples, seed)
    reference = stats.bootstrap(
        (sums, counts),
        lambda s, c, axis=-1: s.sum(axis=axis) / c.sum(axis=axis),
        paired=True,
        vectorized=True,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    assert np.array_equal(draws, reference.bootstrap_distribution)
    interval = reference.confidence_interval
    assert (low, high) == (float(interval.low), float(interval.high))


# --- count_tails: the tails without the whole distribution (issue 40) ---------------------


def _squared_binomial(n: int, p: float) -> np.ndarray:
    """The binomial as deedbench computed it before issue 40 (repeated squaring by
    np.convolve, quadratic in n): the reference the new tails must reproduce."""
    result, power = np.ones(1), np.array([1.0 - p, p])
    while n:
        if n & 1:
            result = np.convolve(result, power)
        n >>= 1
        if n:
            power = np.convolve(power, power)
    return result


def _convolved(trials: dict[float, int]) -> np.ndarray:
    result = np.ones(1)
    for p, n in trials.items():
        result = np.convolve(result, _squared_binomial(n, p))
    return result


@settings(max_examples=30, deadline=None)
@given(
    st.dictionaries(st.sampled_from(LEVELS), st.integers(0, 40), min_size=1, max_size=3),
    st.data(),
)
def test_count_tails_are_exact_rational_arithmetic(
    trials: dict[Fraction, int], data: st.DataObject
) -> None:
    """Both tails of a sum of binomials within 1e-12 of exact rational arithmetic,
    however small, on both sides of the mean and at both ends."""
    pmf = exact_pmf([p for p, n in trials.items() for _ in range(n)])
    n = len(pmf) - 1
    ends = [0, 1, n // 4, n // 2, n - 1, n, -1, n + 1]
    k = data.draw(st.sampled_from([*ends, data.draw(st.integers(0, n))]))
    below, above = count_tails({float(p): n for p, n in trials.items()}, k)
    want = [
        float(sum(pmf[: max(k + 1, 0)], Fraction(0))),
        float(sum(pmf[max(k, 0) :], Fraction(0))),
    ]
    assert below == pytest.approx(min(want[0], 1.0), rel=1e-12, abs=1e-300)
    assert above == pytest.approx(min(want[1], 1.0), rel=1e-12, abs=1e-300)


def test_count_tails_are_the_convolutions_on_thousands_of_trials() -> None:
    """The p-values a report printed before (from the whole distribution, convolved) and
    now, on a few thousand trials at a benchmark's chance levels: within 1e-12."""
    rng = np.random.default_rng(40)
    for _ in range(12):
        trials = {p: int(rng.integers(200, 2500)) for p in (2 / 3, 0.5, 1 / 3, 0.75)}
        old = _convolved(trials)
        n, mean = len(old) - 1, sum(p * n for p, n in trials.items())
        for k in {0, 1, int(mean) - 60, int(mean), int(mean) + 7, int(mean) + 90, n - 2, n}:
            for got, was in zip(count_tails(trials, k), tails(old, k), strict=True):
                assert got == pytest.approx(was, rel=1e-12, abs=1e-300)


def test_a_million_trials_take_milliseconds_not_hours() -> None:
    """Two runs of a million episodes made the whole distribution quadratic (it did not
    finish in 15 minutes); the tails alone grow with the square root of the trials."""
    import time

    from deedbench.stats import chance_test

    chances = [2 / 3] * 833_360 + [0.5] * 166_672
    started = time.process_time()
    for k in (600_000, 638_000, 639_000, 640_000, 700_000):
        test = chance_test(k, chances)
        assert test is not None and 0.0 <= test.p_below <= 1.0 and 0.0 <= test.p_above <= 1.0
    assert time.process_time() - started < 2.0
    test = chance_test(638_906, chances)  # the mean: about half on either side
    assert test is not None and 0.45 < test.p_below < 0.55 and 0.45 < test.p_above < 0.55


def test_stirling_errors_are_the_exact_ones() -> None:
    from decimal import Decimal, getcontext
    from math import factorial

    from deedbench.stats.exact import _STIRLERR

    getcontext().prec = 50
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")
    half_log_2pi = (2 * pi).ln() / 2
    for n in range(1, 16):
        log_factorial = Decimal(factorial(n)).ln()
        exact = log_factorial - (n + Decimal("0.5")) * Decimal(n).ln() + n - half_log_2pi
        assert _STIRLERR[n] == float(exact)
