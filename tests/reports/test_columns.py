"""reports/columns.py's first places: where each kind first appears among a run's
episodes, as np.minimum.at over all of them finds it, however late a kind first appears."""

from __future__ import annotations

import numpy as np
import pytest

from deedbench.reports.columns import first_order, first_places


def _reference(codes: np.ndarray, size: int) -> np.ndarray:
    first = np.full(size, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes)))
    return first


@pytest.mark.parametrize("late_at", [0, 4095, 4096, 12_287, 99_999])
def test_first_places_equal_minimum_at(late_at: int) -> None:
    rng = np.random.default_rng(late_at)
    codes = rng.integers(0, 50, 100_000).astype(np.int32)
    codes[late_at] = 60  # a kind seen once, wherever it falls among the blocks
    size = 64  # codes 50..59 and 61..63 never appear
    expected = _reference(codes, size)
    assert expected[60] == late_at and expected[55] == len(codes)
    np.testing.assert_array_equal(first_places(codes, size), expected)
    count = np.bincount(codes, minlength=size)
    np.testing.assert_array_equal(first_places(codes, size, count), expected)


def test_first_places_of_none_and_first_order() -> None:
    empty = np.zeros(0, dtype=np.int32)
    np.testing.assert_array_equal(first_places(empty, 3), [0, 0, 0])
    codes = np.array([7, 2, 7, 0, 2, 9] * 2000 + [5], dtype=np.int32)
    found, place = first_order(codes)
    assert found.tolist() == [7, 2, 0, 9, 5]
    assert place[:6].tolist() == [0, 1, 0, 2, 1, 3] and place[-1] == 4
