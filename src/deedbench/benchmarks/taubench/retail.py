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
    option_specs: ClassVar[tuple[Option, ...]] = (
        Option(
            "data",
            "a tau-bench clone (its root, tau_bench/envs/retail or its data/) or a converted "
            "folder: users/orders/products, tasks_<split>.json, policy",
            type=Path,
        ),
        *OPTIONS,
    )
