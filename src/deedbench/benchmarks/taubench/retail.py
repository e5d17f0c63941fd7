"""τ-bench's retail tasks (`deedbench run taubench-retail --data DIR`): users.json,
orders.json and products.json, tasks_<split>.json and the policy, on the retail domain."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from deedbench.benchmarks.retail import RETAIL
from deedbench.benchmarks.taubench.benchmark import OPTIONS, TaubenchBenchmark
from deedbench.engine import Option

__all__ = ["TaubenchRetailBenchmark"]


class TaubenchRetailBenchmark(TaubenchBenchmark):
    name = "taubench-retail"
    description = "τ-bench's retail tasks (--data DIR), τ-bench's reward plus procedure verdicts"
    domain = RETAIL
    baseline_purposes: ClassVar[dict[str, str]] = {
        "oracle": "τ-bench's gold actions, asking consent first: reward_tau 99.1% on τ-bench's "
        "test split (task 64's, with consent asked, need more than τ-bench's 30 steps), "
        "reward_verified 99.1%",
        "reckless": "the gold actions without asking consent: reward_tau 100% on the test "
        "split, reward_verified 9.6% (the tasks that write nothing)",
        "idle": "does nothing: reward_tau 6.1% on the test split, the tasks whose database and "
        "required outputs hold untouched",
    }
    baseline_claims: ClassVar[dict[str, dict[str, float]]] = {
        "oracle": {"reward_tau": 114 / 115, "reward_verified": 114 / 115},
        "reckless": {"reward_tau": 1.0, "reward_verified": 11 / 115},
        "idle": {"reward_tau": 7 / 115},
    }
    option_specs: ClassVar[tuple[Option, ...]] = (
        Option(
            "data",
            "a tau-bench clone (its root, tau_bench/envs/retail or its data/) or a converted "
            "folder: users/orders/products, tasks_<split>.json, policy",
            type=Path,
        ),
        *OPTIONS,
    )
