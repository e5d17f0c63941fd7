"""`tau2-airline`: τ²'s airline tasks (50; base, train and test splits)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from deedbench.benchmarks.tau2.airline.domain import AIRLINE
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark, tau2_options
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.engine import Option
from deedbench.files import read_text

__all__ = ["Tau2AirlineBenchmark"]


class Tau2AirlineBenchmark(Tau2Benchmark):
    name = "tau2-airline"
    description = "τ²-bench airline: flights, reservations, refunds; τ²'s reward and procedure"
    option_specs: ClassVar[tuple[Option, ...]] = tau2_options()

    @property
    def domain(self) -> Tau2Domain:
        return AIRLINE

    def policy_text(self, folder: Path) -> str:
        return read_text(folder / "policy.md")
