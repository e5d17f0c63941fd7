"""`tau2-retail`: τ²'s retail tasks (114; base, train and test splits)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark, tau2_options
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.benchmarks.tau2.retail.domain import RETAIL
from deedbench.engine import Option
from deedbench.files import read_text

__all__ = ["Tau2RetailBenchmark"]


class Tau2RetailBenchmark(Tau2Benchmark):
    name = "tau2-retail"
    description = "τ²-bench retail: orders, returns, exchanges; τ²'s reward and procedure"
    option_specs: ClassVar[tuple[Option, ...]] = tau2_options()

    @property
    def domain(self) -> Tau2Domain:
        return RETAIL

    def policy_text(self, folder: Path) -> str:
        return read_text(folder / "policy.md")
