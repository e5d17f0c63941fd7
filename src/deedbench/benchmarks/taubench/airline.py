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
    baseline_purposes: ClassVar[dict[str, str]] = {
        "oracle": "τ-bench's gold actions, asking consent first: reward_tau 100% on τ-bench's "
        "test split; reward_verified 76.0%, since 12 of its 50 tasks' gold actions break the "
        "airline policy (validate lists them)",
        "reckless": "the gold actions without asking consent: reward_tau 100% on the test "
        "split, reward_verified 40.0% (the tasks that write nothing)",
        "idle": "does nothing: reward_tau 38.0% on the test split, the tasks whose database and "
        "required outputs hold untouched",
    }
    baseline_claims: ClassVar[dict[str, dict[str, float]]] = {
        "oracle": {"reward_tau": 1.0, "reward_verified": 38 / 50},
        "reckless": {"reward_tau": 1.0, "reward_verified": 20 / 50},
        "idle": {"reward_tau": 19 / 50},
    }
    option_specs: ClassVar[tuple[Option, ...]] = (
        Option(
            "data",
            "a tau-bench clone (its root, tau_bench/envs/airline or its data/) or a converted "
            "folder: users/flights/reservations, tasks_<split>.json, policy",
            type=Path,
        ),
        *OPTIONS,
    )
