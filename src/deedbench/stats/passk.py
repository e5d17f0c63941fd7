"""pass^k: the chance that k independent trials of a task all succeed, averaged over tasks.

For a task with c successes in n trials the unbiased estimate is C(c, k) / C(n, k);
tasks with fewer than k trials are left out of that k.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb

from pydantic import BaseModel

__all__ = ["PassK", "pass_hat_k"]


class PassK(BaseModel):
    k: int
    value: float
    tasks: int


def pass_hat_k(outcomes: Mapping[str, Sequence[bool]]) -> list[PassK]:
    """pass^k for k = 1 .. the largest number of trials of any task."""
    most = max((len(v) for v in outcomes.values()), default=0)
    result = []
    for k in range(1, most + 1):
        eligible = [v for v in outcomes.values() if len(v) >= k]
        value = sum(comb(sum(v), k) / comb(len(v), k) for v in eligible)
        result.append(PassK(k=k, value=value / len(eligible), tasks=len(eligible)))
    return result
