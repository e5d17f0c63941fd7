"""Cluster bootstraps of a rate and of the distance from chance, and TAC flip rates."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from deedbench.stats.clusters import (
    ClusterChanceTest,
    ClusterRate,
    FlipRate,
    cluster_bootstrap_rate,
    cluster_chance_test,
    flip_rates,
)
from deedbench.stats.rates import chance_test, rate

B = 2000


def scenarios(sizes: list[int]) -> list[str]:
    """Cluster labels: sizes[i] trials of scenario s<i>."""
    return [f"s{i}" for i, size in enumerate(sizes) for _ in range(size)]


# --- cluster_bootstrap_rate -----------------------------------------------------------------


def test_no_trials() -> None:
    assert cluster_bootstrap_rate([], []) == ClusterRate(
        value=None, ci_low=None, ci_high=None, clusters=0, n=0
    )


def test_one_cluster_has_a_value_but_no_interval() -> None:
    result = cluster_bootstrap_rate([1, 0, 1, 1], ["a"] * 4, resamples=B)
    assert result == ClusterRate(value=0.75, ci_low=None, ci_high=None, clusters=1, n=4)


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        cluster_bootstrap_rate([1, 0], ["a"])


def test_values_must_be_finite() -> None:
    with pytest.raises(ValueError, match="finite"):
        cluster_bootstrap_rate([1, float("nan")], ["a", "b"])


def test_value_is_the_pooled_mean_not_the_mean_of_cluster_means() -> None:
    values = [1, 1, 1, 1, 0, 0.5]  # a: 4 trials, mean 1; b: 2 trials, mean 0.25
    result = cluster_bootstrap_rate(values, ["a"] * 4 + ["b"] * 2, resamples=B)
    assert result.value == pytest.approx(4.5 / 6)
    assert (result.clusters, result.n) == (2, 6)


def test_clusters_need_not_be_contiguous() -> None:
    contiguous = cluster_bootstrap_rate([1, 1, 0, 0, 1, 0], list("aabbcc"), resamples=B)
    shuffled = cluster_bootstrap_rate([1, 0, 1, 0, 0, 1], list("abcbac"), resamples=B)
    assert shuffled == contiguous


def test_two_clusters_exact_distribution() -> None:
    """Two equal clusters with means 0 and 1: resampled means are 0, 1/2, 1 with
    probabilities 1/4, 1/2, 1/4, so the 95% percentile interval is [0, 1]."""
    result = cluster_bootstrap_rate([0, 0, 1, 1], list("aabb"), resamples=B)
    assert result.value == 0.5
    assert (result.ci_low, result.ci_high) == (0.0, 1.0)


def test_equal_cluster_means_are_binomial() -> None:
    """20 equal clusters, half all-success and half all-failure: a resampled mean is
    Binomial(20, 1/2) / 20 exactly, so the interval is near its 2.5% and 97.5% quantiles."""
    result = cluster_bootstrap_rate([1] * 50 + [0] * 50, scenarios([5] * 20), resamples=B)
    binomial = stats.binom(20, 0.5)
    assert result.ci_low == pytest.approx(binomial.ppf(0.025) / 20, abs=0.051)
    assert result.ci_high == pytest.approx(binomial.ppf(0.975) / 20, abs=0.051)


def test_all_equal_clusters_give_a_zero_width_interval() -> None:
    values = [1, 0, 0, 1, 1, 0, 0, 1] * 3  # every cluster of 4 has mean 1/2
    result = cluster_bootstrap_rate(values, scenarios([4] * 6), resamples=B)
    assert result.value == result.ci_low == result.ci_high == 0.5


def width(result: ClusterRate) -> float:
    assert result.ci_low is not None and result.ci_high is not None
    return result.ci_high - result.ci_low


def test_within_cluster_correlation_widens_the_interval() -> None:
    """30 scenarios × 10 epochs, 150 successes in all. The more the epochs of a scenario
    agree, the wider the cluster interval, and beyond the iid Wilson interval."""
    labels = scenarios([10] * 30)
    # Each scenario has k successes of 10; the spread of k across scenarios is the
    # within-cluster correlation: all 5 (none), 2 or 8 (some), 0 or 10 (total).
    spreads = {"none": [5] * 30, "some": [2, 8] * 15, "total": [0, 10] * 15}
    widths = {}
    for name, ks in spreads.items():
        values = [int(epoch < k) for k in ks for epoch in range(10)]
        assert sum(values) == 150
        result = cluster_bootstrap_rate(values, labels, resamples=B)
        assert result.value == 0.5
        widths[name] = width(result)
    wilson = rate(150, 300)
    assert wilson.ci_low is not None and wilson.ci_high is not None
    wilson_width = wilson.ci_high - wilson.ci_low
    assert widths["none"] == 0.0 < widths["some"] < widths["total"]
    assert widths["total"] > 2 * wilson_width


def test_confidence_level_orders_the_intervals() -> None:
    values, labels = [1] * 30 + [0] * 20, scenarios([5] * 10)
    narrow = cluster_bootstrap_rate(values, labels, confidence=0.8, resamples=B)
    wide = cluster_bootstrap_rate(values, labels, confidence=0.99, resamples=B)
    assert width(narrow) < width(wide)


def test_deterministic_for_a_seed() -> None:
    values = [0.1, 0.9, 0.35, 0.7, 0.2, 0.05, 0.6, 0.8, 0.45, 0.3, 1.0, 0.15]
    labels = scenarios([1, 2, 1, 3, 1, 2, 2])
    first = cluster_bootstrap_rate(values, labels, resamples=B, seed=7)
    assert cluster_bootstrap_rate(values, labels, resamples=B, seed=7) == first
    seeds = [cluster_bootstrap_rate(values, labels, resamples=B, seed=s) for s in range(5)]
    assert len({(r.ci_low, r.ci_high) for r in seeds}) > 1


clustered = st.lists(
    st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=6),
    min_size=2,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(clustered)
def test_interval_contains_the_estimate(groups: list[list[float]]) -> None:
    values = [v for group in groups for v in group]
    labels = scenarios([len(group) for group in groups])
    result = cluster_bootstrap_rate(values, labels, resamples=500)
    assert result.value == pytest.approx(sum(values) / len(values))
    assert result.ci_low is not None and result.ci_high is not None
    tolerance = 1e-12
    assert min(values) - tolerance <= result.ci_low <= result.value + tolerance
    assert result.value - tolerance <= result.ci_high <= max(values) + tolerance
    assert (result.clusters, result.n) == (len(groups), len(values))


# --- cluster_chance_test --------------------------------------------------------------------


def test_chance_test_of_nothing() -> None:
    result = cluster_chance_test([], [], [])
    assert isinstance(result, ClusterChanceTest)
    assert (result.n, result.clusters, result.observed, result.expected) == (0, 0, 0, 0.0)
    assert result.rate is result.difference is result.p_below is result.ci_low is None


def test_chance_test_of_one_cluster() -> None:
    result = cluster_chance_test([1, 0, 0], [0.5, 0.5, 0.25], ["a"] * 3, resamples=B)
    assert (result.n, result.clusters, result.observed, result.expected) == (3, 1, 1, 1.25)
    assert result.rate == pytest.approx(1 / 3)
    assert result.chance == pytest.approx(1.25 / 3)
    assert result.difference == pytest.approx(-0.25 / 3)
    assert result.ci_low is result.ci_high is result.p_below is result.p_above is None


@pytest.mark.parametrize(
    ("successes", "chances", "message"),
    [
        ([2, 0], [0.5, 0.5], "0 or 1"),
        ([1, 0], [0.5, 1.5], r"\[0, 1\]"),
        ([1], [0.5, 0.5], "differ in length"),
    ],
)
def test_chance_test_refuses_bad_input(
    successes: list[int], chances: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        cluster_chance_test(successes, chances, ["a", "b"])


def test_chance_test_hand_computation() -> None:
    successes = [1, 1, 0, 0, 0, 1]
    chances = [0.5, 0.25, 0.5, 1 / 3, 1 / 3, 1 / 3]
    result = cluster_chance_test(successes, chances, list("aabbcc"), resamples=B)
    assert (result.observed, result.n, result.clusters) == (3, 6, 3)
    assert result.expected == pytest.approx(2.25)
    assert result.rate == pytest.approx(0.5)
    assert result.chance == pytest.approx(0.375)
    assert result.difference == pytest.approx(0.125)
    assert result.ci_low is not None and result.ci_high is not None
    assert result.ci_low <= result.difference <= result.ci_high


def test_two_clusters_exact_p_values() -> None:
    """Cluster a is 1 below chance in total, b is 1 above: resampled differences are
    −1/2, 0, 1/2 with probabilities 1/4, 1/2, 1/4, so P(d* >= 0) = P(d* <= 0) = 3/4."""
    result = cluster_chance_test([0, 0, 1, 1], [0.5] * 4, list("aabb"), resamples=B)
    assert result.difference == 0.0
    assert (result.ci_low, result.ci_high) == (-0.5, 0.5)
    assert result.p_below == pytest.approx(0.75, abs=0.03)
    assert result.p_above == pytest.approx(0.75, abs=0.03)


def test_every_cluster_below_chance() -> None:
    """No resample can reach chance: p_below is the smallest value, 1 / (B + 1)."""
    successes = [0, 1, 0, 0] * 5  # each cluster of 4: 1 success, 2 expected
    result = cluster_chance_test(successes, [0.5] * 20, scenarios([4] * 5), resamples=B)
    assert result.difference == result.ci_low == result.ci_high == pytest.approx(-0.25)
    assert result.p_below == pytest.approx(1 / (B + 1))
    assert result.p_above == 1.0


def test_clustering_weakens_the_evidence_against_chance() -> None:
    """10 scenarios × 5 epochs at chance 1/2; 3 scenarios always succeed, 7 never do. As
    50 independent trials (15 successes) this is far below chance; as 10 scenarios it is not."""
    successes = [1] * 15 + [0] * 35
    labels = scenarios([5] * 10)
    iid = chance_test(15, [0.5] * 50)
    clustered = cluster_chance_test(successes, [0.5] * 50, labels, resamples=B)
    assert iid is not None and iid.p_below < 0.01
    assert clustered.p_below is not None and clustered.p_below > 0.05
    assert clustered.ci_high is not None and clustered.ci_high > 0


def test_chance_test_deterministic_for_a_seed() -> None:
    args = ([1, 0, 0, 1, 0, 0, 0], [0.5] * 7, list("aabbccd"))
    assert cluster_chance_test(*args, resamples=B, seed=3) == cluster_chance_test(
        *args, resamples=B, seed=3
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, 1), st.sampled_from([0.2, 0.25, 1 / 3, 0.5])),
            min_size=1,
            max_size=5,
        ),
        min_size=2,
        max_size=8,
    )
)
def test_p_values_agree_with_the_interval(groups: list[list[tuple[int, float]]]) -> None:
    successes = [s for group in groups for s, _ in group]
    chances = [c for group in groups for _, c in group]
    labels = scenarios([len(group) for group in groups])
    result = cluster_chance_test(successes, chances, labels, resamples=500)
    assert result.p_below is not None and result.p_above is not None
    assert 0 < result.p_below <= 1 and 0 < result.p_above <= 1
    assert result.p_below + result.p_above >= 1  # every draw is >= 0 or <= 0
    assert result.ci_low is not None and result.ci_high is not None
    # The 2.5% quantile sits at position h = 0.025 (B − 1) of the sorted draws (0-based,
    # interpolated), so when it is above zero at most ceil(h) draws are <= 0; likewise 97.5%.
    bound = (1 + math.ceil(0.025 * (500 - 1))) / (500 + 1)
    if result.ci_high < 0:
        assert result.p_below <= bound
    if result.ci_low > 0:
        assert result.p_above <= bound


# --- flip_rates -----------------------------------------------------------------------------


def test_identical_runs_never_flip() -> None:
    base = {("s1", 0): "A", ("s1", 1): "B", ("s2", 0): "A"}
    result = flip_rates(base, dict(base))
    wilson = rate(0, 3)
    assert result == FlipRate(
        flips=0,
        n=3,
        value=0.0,
        ci_low=wilson.ci_low,
        ci_high=wilson.ci_high,
        base_only=0,
        variant_only=0,
    )
    assert result.ci_low == 0.0


def test_flip_rate_counts_shared_keys_only() -> None:
    base = {("s1", 0): "A", ("s1", 1): "B", ("s2", 0): "A", ("s3", 0): "C"}
    variant = {("s1", 0): "A", ("s1", 1): "A", ("s2", 0): "B", ("s4", 0): "A", ("s4", 1): "B"}
    result = flip_rates(base, variant)
    assert (result.flips, result.n, result.base_only, result.variant_only) == (2, 3, 1, 2)
    assert result.value == pytest.approx(2 / 3)
    interval = stats.binomtest(2, 3).proportion_ci(0.95, method="wilson")
    assert (result.ci_low, result.ci_high) == pytest.approx((interval.low, interval.high))


def test_flip_rate_without_shared_keys() -> None:
    result = flip_rates({("s1", 0): "A"}, {("s2", 0): "A"})
    assert (result.flips, result.n, result.value, result.ci_low) == (0, 0, None, None)
    assert (result.base_only, result.variant_only) == (1, 1)


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(
        st.tuples(st.sampled_from("abc"), st.integers(0, 3)), st.sampled_from("XYZ"), max_size=12
    ),
    st.dictionaries(
        st.tuples(st.sampled_from("abc"), st.integers(0, 3)), st.sampled_from("XYZ"), max_size=12
    ),
)
def test_flip_rate_is_symmetric(base: dict, variant: dict) -> None:
    forward, backward = flip_rates(base, variant), flip_rates(variant, base)
    assert (forward.flips, forward.n, forward.value) == (backward.flips, backward.n, backward.value)
    assert (forward.base_only, forward.variant_only) == (backward.variant_only, backward.base_only)
    assert forward.n == len(base.keys() & variant.keys())
