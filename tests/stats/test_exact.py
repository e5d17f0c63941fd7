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
from deedbench.stats.exact import binomial_pmf, poisson_binomial_pmf, tails
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
