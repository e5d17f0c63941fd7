"""pass^k: the chance that k independent trials of a task all succeed, averaged over tasks.

For a task with c successes in n trials the unbiased estimate is C(c, k) / C(n, k).
Two conventions for tasks with fewer trials than others: deedbench's (`pass_hat_k`)
leaves a task out of the k it has too few trials for; τ²'s leaderboard
(`tau2_pass_hat_k`) stops at the fewest trials any task has, and counts every task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb

from pydantic import BaseModel

__all__ = ["PassK", "pass_hat_k", "pass_hat_k_of", "tau2_pass_hat_k"]


class PassK(BaseModel):
    k: int
    value: float
    tasks: int


def pass_hat_k(outcomes: Mapping[str, Sequence[bool]]) -> list[PassK]:
    """pass^k for k = 1 .. the largest number of trials of any task."""
    return pass_hat_k_of([(sum(v), len(v)) for v in outcomes.values()])


def pass_hat_k_of(tasks: Sequence[tuple[int, int]]) -> list[PassK]:
    """`pass_hat_k` from each task's successes and trials (c, n), in the tasks' order.

    Each C(c, k) / C(n, k) is the exact ratio rounded once, as `math.comb`'s would be, but
    both binomial coefficients are carried from k - 1 to k (one multiplication and one
    exact division each) instead of computed anew: thousands of trials per task cost
    milliseconds, where computing each anew cost seconds."""
    most = max((n for _, n in tasks), default=0)
    ratios: list[list[float]] = []
    for c, n in tasks:
        row, above, below = [], 1, 1
        for k in range(1, n + 1):
            above = above * (c - k + 1) // k if k <= c else 0  # C(c, k)
            below = below * (n - k + 1) // k  # C(n, k)
            row.append(above / below)
        ratios.append(row)
    result = []
    for k in range(1, most + 1):
        eligible = [row[k - 1] for row in ratios if len(row) >= k]
        result.append(PassK(k=k, value=sum(eligible) / len(eligible), tasks=len(eligible)))
    return result


def tau2_pass_hat_k(
    outcomes: Mapping[str, Sequence[bool]], num_trials: int, actions: Mapping[str, int]
) -> dict[int, float]:
    """pass^k as τ²'s ``compute_metrics`` gives it, to the last bit: k = 1 .. the run's
    `num_trials`, or the fewest trials any task has if that is fewer; each the mean over
    every task, summed as τ²'s pandas sums its column: each task's C(c, k) / C(n, k) in
    the order of task ids, then sorted by the task's gold action count (`actions`, τ²'s
    ``task_num_actions``) with numpy's quicksort, which does not keep ties in order, and
    added by numpy's pairwise sum. τ²'s leaderboard compares submitted figures with its
    own for equality, and pass^2 of four trials (sixths) summed in another order can
    differ in the last bit. numpy's quicksort orders ties by its build (SIMD on x86), as
    τ²'s own figure does: the two agree where they run alike."""
    import numpy as np

    if not outcomes:
        return {}
    tasks = sorted(outcomes)
    counts = np.array([actions.get(t, 0) for t in tasks], dtype=np.int64)
    order = counts.argsort(kind="quicksort")
    most = min(num_trials, min(len(outcomes[t]) for t in tasks))
    found = {}
    for k in range(1, most + 1):
        values = np.array(
            [comb(sum(outcomes[t]), k) / comb(len(outcomes[t]), k) for t in tasks],
            dtype=np.float64,
        )[order]
        found[k] = float(values.sum() / len(tasks))
    return found
