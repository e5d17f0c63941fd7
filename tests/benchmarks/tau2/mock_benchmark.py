"""τ²'s mock domain as a deedbench benchmark, for running whole episodes in tests."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from deedbench.benchmarks.tau2.benchmark import MODE_OPTION, Tau2Benchmark, tau2_options
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.engine import Option

from .mock_domain import MOCK


class MockTau2Benchmark(Tau2Benchmark):
    name = "tau2-mock"
    description = "τ²'s mock domain"
    option_specs: ClassVar[tuple[Option, ...]] = tau2_options(MODE_OPTION)

    @property
    def domain(self) -> Tau2Domain:
        return MOCK

    def policy_text(self, folder: Path) -> str:
        return (folder / "policy.md").read_text(encoding="utf-8")
