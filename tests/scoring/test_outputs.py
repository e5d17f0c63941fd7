"""Required outputs: τ-bench's substring rule (compat) against deedbench's strict rule."""

from __future__ import annotations

import pytest

from deedbench.scoring.outputs import missing_outputs, outputs_compat, outputs_strict

# --- τ-bench's substring rule -----------------------------------------------------------------


def test_compat_finds_a_number_inside_a_longer_one() -> None:
    # τ-bench's known false positive: "10" is a substring of "$100".
    assert outputs_compat(["10"], ["The total is $100."])


def test_compat_misses_an_abbreviated_unit() -> None:
    assert not outputs_compat(["20 hours"], ["Shipping takes 20 hrs."])


def test_compat_ignores_case_and_commas_in_replies_only() -> None:
    assert outputs_compat(["Delivered", "1234.50"], ["your order was DELIVERED; $1,234.50"])
    # Commas are removed from the replies, not from the outputs.
    assert not outputs_compat(["1,234.50"], ["$1,234.50"])


def test_compat_needs_every_output_in_some_reply() -> None:
    replies = ["status: pending", "total: 933.28"]
    assert outputs_compat(["pending", "933.28"], replies)
    assert not outputs_compat(["pending", "933.28", "refunded"], replies)


def test_compat_fails_where_it_reaches_a_null_reply_as_tau_bench_raises() -> None:
    # τ-bench looks for each output in the replies in order; `None.lower()` raises.
    assert outputs_compat(["933.28"], ["total: 933.28", None])  # found before the None
    assert not outputs_compat(["933.28"], [None, "total: 933.28"])
    assert not outputs_compat(["pending", "933.28"], ["pending", None, "933.28"])
    assert outputs_compat([], [None])  # a task without outputs never reads its replies
    assert not outputs_compat(["pending"], [])


def test_compat_with_no_outputs_passes() -> None:
    assert outputs_compat([], [])
    assert outputs_compat([], ["anything"])


# --- the strict rule --------------------------------------------------------------------------


def test_strict_does_not_find_a_number_inside_a_longer_one() -> None:
    assert not outputs_strict(["10"], ["The total is $100."])
    assert missing_outputs(["10"], ["The total is $100."]) == ["10"]
    assert not outputs_strict(["10"], ["version 1.10"])
    assert not outputs_strict(["933.28"], ["1933.28 in all"])


def test_strict_also_misses_an_abbreviated_unit() -> None:
    assert not outputs_strict(["20 hours"], ["Shipping takes 20 hrs."])


@pytest.mark.parametrize(
    "reply",
    [
        "The total is 10.",
        "The total is $10.00",
        "That comes to 10.0 dollars",
        "you paid $10, thanks",
        "10",
    ],
)
def test_strict_matches_numbers_as_numbers(reply: str) -> None:
    assert outputs_strict(["10"], [reply])


@pytest.mark.parametrize(
    ("output", "reply"),
    [
        ("1234.5", "You paid $1,234.50 in total."),
        ("1,234.50", "You paid 1234.5 in total."),
        ("$1,234.50", "You paid 1234.50."),
        ("1234567", "a balance of 1,234,567"),
    ],
)
def test_strict_accepts_thousands_separators_and_currency_signs(output: str, reply: str) -> None:
    assert outputs_strict([output], [reply])


def test_strict_number_tolerance() -> None:
    assert outputs_strict(["933.28"], ["about 933.284"])
    assert outputs_strict(["933.28"], ["about 933.276"])
    assert not outputs_strict(["933.28"], ["about 933.29"])
    assert not outputs_strict(["933.28"], ["about 933.27"])
    # The tolerance is a parameter.
    assert outputs_strict(["933.28"], ["about 933.29"], tolerance=0.02)
    assert missing_outputs(["933.28"], ["about 933.29"], tolerance=0.02) == []


def test_strict_matches_words_on_word_boundaries() -> None:
    assert outputs_strict(["delivered"], ["Your order was Delivered."])
    assert outputs_strict(["delivered"], ["status: delivered, total 3"])
    assert not outputs_strict(["delivered"], ["it is still undelivered"])
    assert not outputs_strict(["deliver"], ["it was delivered"])
    # ... where τ-bench's rule finds both.
    assert outputs_compat(["delivered"], ["it is still undelivered"])
    assert outputs_compat(["deliver"], ["it was delivered"])


def test_strict_multiword_outputs_tolerate_spacing_and_case() -> None:
    assert outputs_strict(["20 hours"], ["It takes 20   Hours\nat most"])
    assert not outputs_strict(["20 hours"], ["It takes 120 hours"])


def test_strict_reports_exactly_the_missing_outputs_in_order() -> None:
    replies = ["Your order is pending.", "It cost $100."]
    outputs = ["processed", "pending", "10", "100"]
    assert missing_outputs(outputs, replies) == ["processed", "10"]
    assert not outputs_strict(outputs, replies)
    assert outputs_strict(["pending", "100"], replies)
    assert outputs_strict([], [])


def test_strict_searches_every_reply() -> None:
    assert outputs_strict(["pending", "933.28"], ["status: pending", "total: $933.28"])


def test_strict_reads_a_comma_list_as_separate_numbers() -> None:
    # thousands separators group exactly three digits; anything else is a list
    assert outputs_strict(["20"], ["sizes 10,20,30 are in stock"])
    assert not outputs_strict(["102030"], ["sizes 10,20,30 are in stock"])
    assert outputs_strict(["1234567"], ["a balance of 1,234,567"])
    assert outputs_strict(["2345"], ["items 1,2345 left"])
