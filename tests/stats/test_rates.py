"""Wilson intervals and the exact Poisson-binomial test against chance."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from deedbench.stats import ChanceTest, Rate, chance_test, rate


def wilson(k: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval written out, independent of scipy's implementation."""
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = k / n
    denominator = 1 + z**2 / n
    centre = (p + z**2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def test_rate_known_value() -> None:
    result = rate(3, 10)
    assert isinstance(result, Rate)
    assert (result.k, result.n, result.value) == (3, 10, 0.3)
    assert result.ci_low == pytest.approx(0.1078, abs=1e-4)
    assert result.ci_high == pytest.approx(0.6032, abs=1e-4)


@pytest.mark.parametrize(("k", "n"), [(0, 5), (5, 5), (1, 1), (3, 10), (50, 100), (17, 288)])
def test_rate_matches_wilson_formula(k: int, n: int) -> None:
    result = rate(k, n)
    assert result.value == pytest.approx(k / n)
    low, high = wilson(k, n)
    assert result.ci_low == pytest.approx(low, abs=1e-9)
    assert result.ci_high == pytest.approx(high, abs=1e-9)
    scipy_ci = stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    assert (result.ci_low, result.ci_high) == pytest.approx((scipy_ci.low, scipy_ci.high))


def test_rate_confidence_level() -> None:
    narrow, wide = rate(3, 10, confidence=0.80), rate(3, 10, confidence=0.99)
    assert (narrow.ci_low, narrow.ci_high) == pytest.approx(wilson(3, 10, 0.80))
    assert (wide.ci_low, wide.ci_high) == pytest.approx(wilson(3, 10, 0.99))
    assert wide.ci_low < narrow.ci_low < 0.3 < narrow.ci_high < wide.ci_high


@given(
    n=st.integers(min_value=1, max_value=5000),
    confidence=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]),
    data=st.data(),
)
def test_rate_is_scipys_wilson_interval(n: int, confidence: float, data: st.DataObject) -> None:
    """rate() computes the interval itself (no binomtest p-value search, no scipy import),
    with the standard library's normal quantile: scipy's bounds to 12 significant digits
    (measured: within 1.1e-14 over 20,000 draws), the same 0 and 1 at the ends."""
    k = data.draw(st.integers(min_value=0, max_value=n))
    scipy_ci = stats.binomtest(k, n).proportion_ci(confidence, method="wilson")
    result = rate(k, n, confidence)
    assert result.ci_low == pytest.approx(float(scipy_ci.low), rel=1e-12, abs=0)
    assert result.ci_high == pytest.approx(float(scipy_ci.high), rel=1e-12, abs=0)
    assert (result.ci_low == 0.0) == (k == 0) and (result.ci_high == 1.0) == (k == n)


def test_rate_of_nothing_has_no_value() -> None:
    assert rate(0, 0) == Rate(k=0, n=0, value=None, ci_low=None, ci_high=None)


@given(n=st.integers(min_value=1, max_value=2000), data=st.data())
def test_rate_interval_contains_the_value(n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(min_value=0, max_value=n))
    result = rate(k, n)
    assert result.ci_low is not None and result.ci_high is not None
    assert 0.0 <= result.ci_low <= k / n <= result.ci_high <= 1.0


@pytest.mark.parametrize(("k", "n"), [(2.5, 5), (3.5, 5), (0.5, 1)])
def test_rate_refuses_fractional_successes(k: float, n: int) -> None:
    """A Wilson interval is for counts of 0/1 outcomes: partial credit is refused,
    never silently rounded into a different count."""
    with pytest.raises(ValueError, match="0/1 outcomes"):
        rate(k, n)


# --- chance_test ----------------------------------------------------------------------------


def test_chance_test_of_nothing() -> None:
    assert chance_test(0, []) is None


@pytest.mark.parametrize("observed", range(11))
def test_equal_chances_are_binomial(observed: int) -> None:
    result = chance_test(observed, [0.5] * 10)
    assert isinstance(result, ChanceTest)
    binomial = stats.binom(10, 0.5)
    assert result.n == 10
    assert result.observed == observed
    assert result.chance == pytest.approx(0.5)
    assert result.expected == pytest.approx(5.0)
    assert result.p_below == pytest.approx(binomial.cdf(observed))  # P(X <= k)
    assert result.p_above == pytest.approx(binomial.sf(observed - 1))  # P(X >= k)


def test_equal_chances_known_values() -> None:
    result = chance_test(3, [0.5] * 10)
    assert result is not None
    assert result.p_below == pytest.approx(176 / 1024)
    assert result.p_above == pytest.approx(968 / 1024)


def brute_force(probabilities: list[float]) -> list[float]:
    """P(X = k) for every k, by enumerating all 2**n outcomes."""
    distribution = [0.0] * (len(probabilities) + 1)
    for outcome in itertools.product((0, 1), repeat=len(probabilities)):
        weight = 1.0
        for success, p in zip(outcome, probabilities, strict=True):
            weight *= p if success else 1 - p
        distribution[sum(outcome)] += weight
    return distribution


MIXED = [0.25, 0.5, 1 / 3, 0.75, 0.2, 2 / 3]


@pytest.mark.parametrize("observed", range(len(MIXED) + 1))
def test_mixed_chances_match_enumeration(observed: int) -> None:
    result = chance_test(observed, MIXED)
    assert result is not None
    pmf = brute_force(MIXED)
    assert result.expected == pytest.approx(sum(MIXED))
    assert result.chance == pytest.approx(sum(MIXED) / len(MIXED))
    assert result.p_below == pytest.approx(sum(pmf[: observed + 1]), abs=1e-12)
    assert result.p_above == pytest.approx(sum(pmf[observed:]), abs=1e-12)


def test_certain_outcomes() -> None:
    """Probabilities of 0 and 1 are legal: a sample with no or only safe options."""
    result = chance_test(2, [1.0, 1.0, 0.0])
    assert result is not None
    assert result.p_below == pytest.approx(1.0)
    assert result.p_above == pytest.approx(1.0)
    above = chance_test(3, [1.0, 1.0, 0.0])
    assert above is not None and above.p_above == pytest.approx(0.0, abs=1e-12)
