"""τ-bench's airline tasks (`deedbench run taubench-airline --data DIR`): flights.json,
reservations.json and users.json, tasks_<split>.json and the policy, on the airline domain."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.taubench.benchmark import OPTIONS, TaubenchBenchmark
from deedbench.engine import Option

__all__ = ["TaubenchAirlineBenchmark"]


class TaubenchAirlineBenchmark(TaubenchBenchmark):
    name = "taubench-airline"
    description = "τ-bench's airline tasks (--data DIR), τ-bench's reward plus policy verdicts"
    domain = AIRLINE
    option_specs: ClassVar[tuple[Option, ...]] = (
        Option(
            "data",
            "a tau-bench clone (its root, tau_bench/envs/airline or its data/) or a converted "
            "folder: users/flights/reservations, tasks_<split>.json, policy",
            type=Path,
        ),
        *OPTIONS,
    )
