"""Rank correlation of a per-scenario score with a covariate, and reading that covariate.

Spearman's rho asks only whether the two rise together, not linearly, which suits
scores on bounded scales and covariates of arbitrary units.
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from deedbench.files import read_text

if TYPE_CHECKING:  # numpy and scipy are imported where statistics are computed
    import numpy as np

__all__ = ["Correlation", "read_covariate_csv", "spearman_with_bootstrap"]


class Correlation(BaseModel):
    """Spearman's rho with scipy's p-value and a percentile bootstrap interval over pairs.

    rho is None, with the reason, when it is undefined: fewer than 3 pairs or a constant
    side. Pairs with a NaN or infinite member are left out and counted in dropped.
    Resamples whose rho is undefined (a side constant in the resample) are left out of
    the interval and counted in undefined_resamples; when many are, the interval is
    conditional on the resample varying and should be read with care.
    """

    rho: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    dropped: int
    undefined_resamples: int
    reason: str | None


def spearman_with_bootstrap(
    x: Sequence[float],
    y: Sequence[float],
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> Correlation:
    """rho and p-value from scipy.stats.spearmanr; the interval resamples (x, y) pairs."""
    import numpy as np
    from scipy import stats

    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} != {len(y)}")
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    kept = np.isfinite(xs) & np.isfinite(ys)
    xs, ys = xs[kept], ys[kept]
    n, dropped = int(xs.size), int(kept.size - xs.size)

    def undefined(reason: str) -> Correlation:
        return Correlation(
            rho=None,
            p_value=None,
            ci_low=None,
            ci_high=None,
            n=n,
            dropped=dropped,
            undefined_resamples=0,
            reason=reason,
        )

    if n < 3:
        return undefined(f"fewer than 3 pairs with finite values ({n})")
    if np.all(xs == xs[0]):
        return undefined("x is constant")
    if np.all(ys == ys[0]):
        return undefined("y is constant")

    estimate = stats.spearmanr(xs, ys)
    with warnings.catch_warnings():
        # Resamples that draw one value many times can be constant; they give NaN.
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            (xs, ys),
            _spearman,
            paired=True,
            vectorized=True,
            confidence_level=confidence,
            n_resamples=resamples,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    draws = result.bootstrap_distribution
    missing = int(np.count_nonzero(np.isnan(draws)))
    if missing == draws.size:
        low = high = None
    else:
        # scipy's percentile interval, with the undefined resamples left out.
        alpha = (1 - confidence) / 2
        low, high = (
            float(q) for q in stats.quantile(draws, np.array([alpha, 1 - alpha]), nan_policy="omit")
        )
    return Correlation(
        rho=float(estimate.statistic),
        p_value=float(estimate.pvalue),
        ci_low=low,
        ci_high=high,
        n=n,
        dropped=dropped,
        undefined_resamples=missing,
        reason=None,
    )


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's rho along an axis: Pearson's r of average ranks, as spearmanr computes it."""
    from scipy import stats

    rho: np.ndarray = stats.pearsonr(
        stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis
    ).statistic
    return rho


def read_covariate_csv(path: Path, key_column: str, value_column: str) -> dict[str, float]:
    """Map key_column to value_column (a finite number) for every row of a CSV with a header.

    Any problem is a ValueError naming the file, the line and the column, so a bad row in
    a hand-made spreadsheet is found without a debugger.
    """
    with io.StringIO(read_text(path, "utf-8-sig"), newline="") as handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in reader.fieldnames or []]
        if not header:
            raise ValueError(f"{path}: no header row")
        for column in (key_column, value_column):
            if column not in header:
                raise ValueError(f"{path}: no column {column!r}; the header has {header}")
        reader.fieldnames = header
        values: dict[str, float] = {}
        seen_on: dict[str, int] = {}
        for row in reader:
            line = reader.line_num
            key = (row.get(key_column) or "").strip()
            raw = (row.get(value_column) or "").strip()
            if not key:
                raise ValueError(f"{path}: line {line}, column {key_column!r}: empty key")
            if key in values:
                raise ValueError(
                    f"{path}: line {line}, column {key_column!r}: key {key!r} repeats "
                    f"line {seen_on[key]}"
                )
            try:
                value = float(raw)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise ValueError(
                    f"{path}: line {line}, column {value_column!r}: {raw!r} is not a finite number"
                )
            values[key] = value
            seen_on[key] = line
    return values
