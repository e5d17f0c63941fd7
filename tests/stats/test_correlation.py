"""Spearman's rho with a bootstrap interval, and reading a covariate from CSV."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from deedbench.stats.correlation import (
    Correlation,
    _spearman,
    read_covariate_csv,
    spearman_with_bootstrap,
)

B = 2000


def test_monotone_relation_has_rho_one() -> None:
    x = [1.0, 2.0, 3.5, 4.0, 7.0, 8.0, 9.5, 12.0]
    result = spearman_with_bootstrap(x, [math.exp(v) for v in x], resamples=B)
    assert result.rho == pytest.approx(1.0)
    assert result.ci_low == pytest.approx(1.0) and result.ci_high == pytest.approx(1.0)
    assert result.p_value is not None and result.p_value < 1e-6
    assert (result.n, result.dropped, result.reason) == (8, 0, None)


def test_reversed_relation_has_rho_minus_one() -> None:
    x = list(range(10))
    result = spearman_with_bootstrap(x, [-(v**3) for v in x], resamples=B)
    assert result.rho == pytest.approx(-1.0)


def test_hand_computed_rho() -> None:
    """Ranks of y are 1, 3, 2, 4, 5: sum d^2 = 2, rho = 1 - 6*2 / (5*24) = 0.9."""
    result = spearman_with_bootstrap([1, 2, 3, 4, 5], [10, 30, 20, 40, 50], resamples=B)
    assert result.rho == pytest.approx(0.9)


@pytest.mark.parametrize("seed", range(5))
def test_matches_scipy_and_interval_contains_rho(seed: int) -> None:
    generator = np.random.default_rng(seed)
    x = generator.normal(size=40)
    y = 0.5 * x + generator.normal(size=40)
    result = spearman_with_bootstrap(x.tolist(), y.tolist(), resamples=B, seed=seed)
    expected = stats.spearmanr(x, y)
    assert result.rho == pytest.approx(expected.statistic)
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.ci_low is not None and result.ci_high is not None
    assert -1 <= result.ci_low < result.rho < result.ci_high <= 1
    assert result.undefined_resamples == 0


def test_vectorised_statistic_matches_spearmanr_with_ties() -> None:
    generator = np.random.default_rng(1)
    x = generator.integers(0, 4, size=(6, 12)).astype(float)
    y = generator.integers(0, 5, size=(6, 12)).astype(float)
    rows = _spearman(x, y, axis=-1)
    assert rows == pytest.approx(
        [stats.spearmanr(a, b).statistic for a, b in zip(x, y, strict=True)]
    )


def test_more_pairs_narrow_the_interval() -> None:
    generator = np.random.default_rng(2)
    x = generator.normal(size=400)
    y = x + generator.normal(size=400)
    few = spearman_with_bootstrap(x[:25].tolist(), y[:25].tolist(), resamples=B)
    many = spearman_with_bootstrap(x.tolist(), y.tolist(), resamples=B)
    assert few.ci_low is not None and few.ci_high is not None
    assert many.ci_low is not None and many.ci_high is not None
    assert many.ci_high - many.ci_low < few.ci_high - few.ci_low


def test_deterministic_for_a_seed() -> None:
    generator = np.random.default_rng(3)
    x, y = generator.normal(size=30).tolist(), generator.normal(size=30).tolist()
    first = spearman_with_bootstrap(x, y, resamples=B, seed=5)
    assert spearman_with_bootstrap(x, y, resamples=B, seed=5) == first
    other = spearman_with_bootstrap(x, y, resamples=B, seed=6)
    assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)


@pytest.mark.parametrize(
    ("x", "y", "reason"),
    [
        ([2, 2, 2, 2], [1, 2, 3, 4], "x is constant"),
        ([1, 2, 3, 4], [0.5, 0.5, 0.5, 0.5], "y is constant"),
        ([1, 2], [2, 1], "fewer than 3 pairs"),
        ([], [], "fewer than 3 pairs"),
    ],
)
def test_undefined_rho_has_a_reason(x: list[float], y: list[float], reason: str) -> None:
    result = spearman_with_bootstrap(x, y, resamples=B)
    assert result.rho is result.p_value is result.ci_low is result.ci_high is None
    assert result.reason is not None and reason in result.reason
    assert result.n == len(x)


def test_non_finite_pairs_are_left_out() -> None:
    nan, inf = float("nan"), float("inf")
    x = [1, 2, nan, 3, 4, 5, 6]
    y = [2, 1, 5, 4, inf, 6, 7]
    result = spearman_with_bootstrap(x, y, resamples=B)
    clean = spearman_with_bootstrap([1, 2, 3, 5, 6], [2, 1, 4, 6, 7], resamples=B)
    assert (result.n, result.dropped) == (5, 2)
    assert result.rho == pytest.approx(clean.rho)
    assert (result.ci_low, result.ci_high) == (clean.ci_low, clean.ci_high)


def test_only_nan_is_undefined_not_an_error() -> None:
    result = spearman_with_bootstrap([float("nan")] * 4, [1, 2, 3, 4], resamples=B)
    assert (result.rho, result.n, result.dropped) == (None, 0, 4)


def test_constant_resamples_are_counted_and_left_out() -> None:
    """With x mostly tied, some resamples draw only the tied value; their rho is undefined."""
    result = spearman_with_bootstrap([0, 0, 0, 0, 1], [1, 2, 3, 4, 5], resamples=B)
    assert result.rho == pytest.approx(stats.spearmanr([0, 0, 0, 0, 1], [1, 2, 3, 4, 5])[0])
    # P(no draw of the single 1 among 5) = (4/5)^5 ≈ 0.33
    assert result.undefined_resamples == pytest.approx(B * 0.8**5, rel=0.15)
    assert result.ci_low is not None and result.ci_high is not None
    assert math.isfinite(result.ci_low) and math.isfinite(result.ci_high)


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        spearman_with_bootstrap([1, 2, 3], [1, 2])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6)), min_size=3, max_size=30))
def test_rho_is_scipys_or_undefined(rows: list[tuple[float, float]]) -> None:
    x, y = [a for a, _ in rows], [b for _, b in rows]
    result = spearman_with_bootstrap(x, y, resamples=200)
    assert isinstance(result, Correlation)
    if len(set(x)) == 1 or len(set(y)) == 1:
        assert result.rho is None and result.reason is not None
        return
    assert result.rho == pytest.approx(stats.spearmanr(x, y).statistic)
    if result.ci_low is not None and result.ci_high is not None:
        assert -1 - 1e-9 <= result.ci_low <= result.ci_high <= 1 + 1e-9


# --- read_covariate_csv ---------------------------------------------------------------------


def write(tmp_path: Path, text: str, encoding: str = "utf-8") -> Path:
    path = tmp_path / "covariates.csv"
    path.write_text(text, encoding=encoding)
    return path


def test_reads_the_two_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "scenario,length,notes\ns1,120,x\n s2 , 3.5e2 ,y\n\ns3,-4,\n")
    assert read_covariate_csv(path, "scenario", "length") == {"s1": 120.0, "s2": 350.0, "s3": -4.0}


def test_byte_order_mark_and_padded_header(tmp_path: Path) -> None:
    path = write(tmp_path, "scenario , length\ns1,1\n", encoding="utf-8-sig")
    assert read_covariate_csv(path, "scenario", "length") == {"s1": 1.0}


def test_missing_column_names_file_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "scenario,length\ns1,1\n")
    with pytest.raises(ValueError, match="no column 'words'") as error:
        read_covariate_csv(path, "scenario", "words")
    assert str(path) in str(error.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scenario,length\ns1,1\ns2,long\n", "line 3, column 'length': 'long' is not a finite"),
        ("scenario,length\ns1,1\ns2,\n", "line 3, column 'length': '' is not a finite"),
        ("scenario,length\ns1,nan\n", "line 2, column 'length': 'nan' is not a finite"),
        ("scenario,length\ns1,1\ns2\n", "line 3, column 'length': '' is not a finite"),
        ("scenario,length\ns1,1\n,2\n", "line 3, column 'scenario': empty key"),
        (
            "scenario,length\ns1,1\ns2,2\ns1,3\n",
            "line 4, column 'scenario': key 's1' repeats line 2",
        ),
    ],
)
def test_bad_rows_name_file_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as error:
        read_covariate_csv(path, "scenario", "length")
    assert str(error.value).startswith(f"{path}: {message}")


def test_empty_file_has_no_header(tmp_path: Path) -> None:
    path = write(tmp_path, "")
    with pytest.raises(ValueError, match="no header row"):
        read_covariate_csv(path, "scenario", "length")


def test_header_only_gives_nothing(tmp_path: Path) -> None:
    assert read_covariate_csv(write(tmp_path, "scenario,length\n"), "scenario", "length") == {}
