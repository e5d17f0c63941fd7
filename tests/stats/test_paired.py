"""McNemar's exact test and the paired bootstrap of a mean difference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from deedbench.stats.clusters import cluster_bootstrap_rate
from deedbench.stats.paired import (
    McNemar,
    PairedDifference,
    mcnemar_exact,
    paired_bootstrap_difference,
)

B = 2000


def pairs(b01: int, b10: int, both: int = 0, neither: int = 0) -> tuple[dict, dict]:
    """Two runs over keys 0.. with the given counts of each (a, b) outcome pair."""
    cells = [(False, True)] * b01 + [(True, False)] * b10 + [(True, True)] * both
    cells += [(False, False)] * neither
    return {i: x for i, (x, _) in enumerate(cells)}, {i: y for i, (_, y) in enumerate(cells)}


# --- mcnemar_exact --------------------------------------------------------------------------


def test_mcnemar_known_value() -> None:
    result = mcnemar_exact(*pairs(8, 2))
    assert (result.b01, result.b10, result.n_shared) == (8, 2, 10)
    assert result.p_value == pytest.approx(112 / 1024)  # 2 * (1 + 10 + 45) / 2**10
    assert result.p_value == pytest.approx(2 * stats.binom.cdf(2, 10, 0.5))


def test_mcnemar_is_symmetric_in_the_runs() -> None:
    forward, backward = mcnemar_exact(*pairs(8, 2)), mcnemar_exact(*reversed(pairs(8, 2)))
    assert (backward.b01, backward.b10) == (forward.b10, forward.b01)
    assert backward.p_value == pytest.approx(forward.p_value)


def test_concordant_pairs_do_not_change_the_p_value() -> None:
    few = mcnemar_exact(*pairs(6, 1))
    many = mcnemar_exact(*pairs(6, 1, both=40, neither=25))
    assert many.n_shared == 72
    assert many.p_value == pytest.approx(few.p_value)


def test_no_discordant_pairs_give_p_one() -> None:
    assert mcnemar_exact(*pairs(0, 0, both=3, neither=2)) == McNemar(
        b01=0, b10=0, n_shared=5, p_value=1.0
    )
    assert mcnemar_exact({}, {}) == McNemar(b01=0, b10=0, n_shared=0, p_value=1.0)


def test_mcnemar_counts_shared_keys_only() -> None:
    a = {"x": False, "y": True, "only_a": False}
    b = {"x": True, "y": True, "only_b": False}
    assert mcnemar_exact(a, b) == McNemar(b01=1, b10=0, n_shared=2, p_value=1.0)


@pytest.mark.parametrize(("b01", "b10"), [(1, 0), (5, 0), (10, 0), (7, 3), (12, 4), (20, 20)])
def test_mcnemar_matches_twice_the_smaller_tail(b01: int, b10: int) -> None:
    n = b01 + b10
    tail = min(stats.binom.cdf(b01, n, 0.5), stats.binom.sf(b01 - 1, n, 0.5))
    assert mcnemar_exact(*pairs(b01, b10)).p_value == pytest.approx(min(1.0, 2 * tail))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 5))
def test_mcnemar_p_value_is_a_probability(b01: int, b10: int, both: int) -> None:
    result = mcnemar_exact(*pairs(b01, b10, both=both))
    assert (result.b01, result.b10, result.n_shared) == (b01, b10, b01 + b10 + both)
    assert 0 < result.p_value <= 1
    if b01 == b10:
        assert result.p_value == pytest.approx(1.0)


# --- paired_bootstrap_difference -------------------------------------------------------------


def test_difference_hand_computation() -> None:
    a = {"t1": 0.0, "t2": 1.0, "t3": 0.5, "t4": 0.25, "only_a": 9.0}
    b = {"t1": 1.0, "t2": 1.0, "t3": 0.0, "t4": 0.75, "only_b": -9.0}
    result = paired_bootstrap_difference(a, b, resamples=B)
    assert result.value == pytest.approx((1 + 0 - 0.5 + 0.5) / 4)
    assert result.mean_a == pytest.approx(1.75 / 4)
    assert result.mean_b == pytest.approx(2.75 / 4)
    assert (result.n_shared, result.clusters) == (4, 4)
    assert result.ci_low is not None and result.ci_high is not None
    assert -0.5 <= result.ci_low <= result.value <= result.ci_high <= 1.0


def test_no_shared_keys() -> None:
    assert paired_bootstrap_difference({"x": 1.0}, {"y": 1.0}) == PairedDifference(
        value=None, mean_a=None, mean_b=None, ci_low=None, ci_high=None, n_shared=0, clusters=0
    )


def test_one_key_has_no_interval() -> None:
    result = paired_bootstrap_difference({"x": 0.25}, {"x": 1.0}, resamples=B)
    assert (result.value, result.ci_low, result.ci_high) == (0.75, None, None)
    assert (result.n_shared, result.clusters) == (1, 1)


def test_two_keys_exact_distribution() -> None:
    """Differences 0 and 1: resampled means 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4."""
    result = paired_bootstrap_difference({1: 0, 2: 0}, {1: 0, 2: 1}, resamples=B)
    assert (result.value, result.ci_low, result.ci_high) == (0.5, 0.0, 1.0)


def test_a_constant_difference_has_a_zero_width_interval() -> None:
    a = {i: i / 10 for i in range(10)}
    b = {i: i / 10 + 0.25 for i in range(10)}
    result = paired_bootstrap_difference(a, b, resamples=B)
    assert result.value == pytest.approx(0.25)
    assert result.ci_low == pytest.approx(0.25) and result.ci_high == pytest.approx(0.25)


def test_matches_the_mean_of_keys_by_binomial_count() -> None:
    """20 keys, b gains 1 on half of them: a resampled mean is Binomial(20, 1/2) / 20."""
    result = paired_bootstrap_difference(
        {i: 0 for i in range(20)}, {i: int(i < 10) for i in range(20)}, resamples=B
    )
    binomial = stats.binom(20, 0.5)
    assert result.ci_low == pytest.approx(binomial.ppf(0.025) / 20, abs=0.051)
    assert result.ci_high == pytest.approx(binomial.ppf(0.975) / 20, abs=0.051)


def clustered_runs() -> tuple[dict, dict, dict]:
    """12 scenarios × 5 epochs; b beats a on every epoch of 4 scenarios, ties elsewhere."""
    keys = [(f"s{s}", epoch) for s in range(12) for epoch in range(5)]
    a = {key: 0.0 for key in keys}
    b = {key: float(int(key[0][1:]) < 4) for key in keys}
    return a, b, {key: key[0] for key in keys}


def test_clusters_widen_the_interval_when_epochs_agree() -> None:
    a, b, scenario = clustered_runs()
    by_key = paired_bootstrap_difference(a, b, resamples=B)
    by_scenario = paired_bootstrap_difference(a, b, clusters=scenario, resamples=B)
    assert by_key.value == by_scenario.value == pytest.approx(1 / 3)
    assert (by_key.clusters, by_scenario.clusters, by_scenario.n_shared) == (60, 12, 60)
    assert by_key.ci_low is not None and by_key.ci_high is not None
    assert by_scenario.ci_low is not None and by_scenario.ci_high is not None
    assert by_scenario.ci_high - by_scenario.ci_low > 1.5 * (by_key.ci_high - by_key.ci_low)


def test_clustered_difference_is_the_cluster_bootstrap_of_the_differences() -> None:
    a, b, scenario = clustered_runs()
    paired = paired_bootstrap_difference(a, b, clusters=scenario, resamples=B, seed=4)
    keys = list(a)
    direct = cluster_bootstrap_rate(
        [b[k] - a[k] for k in keys], [scenario[k] for k in keys], resamples=B, seed=4
    )
    assert (paired.value, paired.ci_low, paired.ci_high) == (
        direct.value,
        direct.ci_low,
        direct.ci_high,
    )


def test_clusters_must_cover_the_shared_keys() -> None:
    with pytest.raises(ValueError, match="no entry for 1 key"):
        paired_bootstrap_difference({"x": 1, "y": 0}, {"x": 0, "y": 0}, clusters={"x": "s"})


def test_difference_deterministic_for_a_seed() -> None:
    a = {i: (i * 7 % 11) / 11 for i in range(15)}
    b = {i: (i * 5 % 13) / 13 for i in range(15)}
    first = paired_bootstrap_difference(a, b, resamples=B, seed=11)
    assert paired_bootstrap_difference(a, b, resamples=B, seed=11) == first
    other = paired_bootstrap_difference(a, b, resamples=B, seed=12)
    assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.integers(0, 30),
        st.tuples(st.floats(0, 1), st.floats(0, 1), st.sampled_from("pqrs")),
        min_size=2,
        max_size=20,
    ),
    st.booleans(),
)
def test_difference_properties(rows: dict, clustered: bool) -> None:
    a = {key: x for key, (x, _, _) in rows.items()}
    b = {key: y for key, (_, y, _) in rows.items()}
    clusters = {key: c for key, (_, _, c) in rows.items()} if clustered else None
    result = paired_bootstrap_difference(a, b, clusters=clusters, resamples=300)
    assert result.value is not None and result.mean_a is not None and result.mean_b is not None
    assert result.value == pytest.approx(result.mean_b - result.mean_a)
    assert result.n_shared == len(rows)
    if result.clusters >= 2:
        assert result.ci_low is not None and result.ci_high is not None
        assert result.ci_low - 1e-12 <= result.value <= result.ci_high + 1e-12
    else:
        assert result.ci_low is None
