"""pass^k: the mean over tasks of C(c, k) / C(n, k), by hand and by brute force."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deedbench.stats import PassK, pass_hat_k


def brute_force(trials: list[bool], k: int) -> Fraction:
    """The share of k-subsets of the trials that are all successes."""
    subsets = list(itertools.combinations(trials, k))
    return Fraction(sum(all(s) for s in subsets), len(subsets))


def test_hand_computation_with_tasks_of_unequal_trials() -> None:
    outcomes = {
        "a": [True, True, False],  # c=2, n=3
        "b": [True, True, True],  # c=3, n=3
        "c": [True],  # c=1, n=1: only in k=1
        "d": [False, True],  # c=1, n=2: in k=1 and k=2
    }
    result = pass_hat_k(outcomes)
    assert [p.k for p in result] == [1, 2, 3]
    assert [p.tasks for p in result] == [4, 3, 2]
    k1 = (2 / 3 + 1 + 1 + 1 / 2) / 4
    k2 = (math.comb(2, 2) / math.comb(3, 2) + 1 + 0 / 1) / 3  # "d": C(1,2)/C(2,2) = 0
    k3 = (0 / 1 + 1) / 2  # "a": C(2,3) = 0
    assert result[0].value == pytest.approx(k1)
    assert result[1].value == pytest.approx(k2)
    assert result[2].value == pytest.approx(k3)


def test_all_successes_give_one_for_every_k() -> None:
    result = pass_hat_k({"a": [True] * 4, "b": [True] * 4})
    assert result == [PassK(k=k, value=1.0, tasks=2) for k in range(1, 5)]


def test_pass_hat_k_falls_with_k_for_a_flaky_task() -> None:
    values = [p.value for p in pass_hat_k({"a": [True, True, True, False]})]
    assert values == pytest.approx([3 / 4, 1 / 2, 1 / 4, 0.0])


def test_no_tasks_or_no_trials_give_an_empty_curve() -> None:
    assert pass_hat_k({}) == []
    assert pass_hat_k({"a": []}) == []


def test_a_task_without_trials_is_left_out() -> None:
    assert pass_hat_k({"a": [True, False], "b": []}) == [
        PassK(k=1, value=0.5, tasks=1),
        PassK(k=2, value=0.0, tasks=1),
    ]


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=3), st.lists(st.booleans(), max_size=6), max_size=6
    )
)
def test_matches_the_brute_force_estimate(outcomes: dict[str, list[bool]]) -> None:
    result = pass_hat_k(outcomes)
    most = max((len(v) for v in outcomes.values()), default=0)
    assert [p.k for p in result] == list(range(1, most + 1))
    for point in result:
        eligible = [v for v in outcomes.values() if len(v) >= point.k]
        assert point.tasks == len(eligible)
        expected = sum(brute_force(v, point.k) for v in eligible) / len(eligible)
        assert point.value == pytest.approx(float(expected))


def test_taus_convention_stops_at_the_fewest_trials_and_counts_every_task() -> None:
    from deedbench.stats import tau2_pass_hat_k

    outcomes = {"a": [True, True, False], "b": [True, True, True], "d": [False, True]}
    found = tau2_pass_hat_k(outcomes, num_trials=4, actions={"a": 3, "b": 1, "d": 2})
    assert set(found) == {1, 2}  # task d has 2 trials: τ² stops there, for every task
    assert found[1] == pytest.approx((2 / 3 + 1 + 1 / 2) / 3)
    assert found[2] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert set(tau2_pass_hat_k(outcomes, num_trials=1, actions={})) == {1}
    assert tau2_pass_hat_k({}, num_trials=4, actions={}) == {}
