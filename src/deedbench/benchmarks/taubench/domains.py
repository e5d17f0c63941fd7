"""τ-bench's domains as rescoring needs them, told apart by their data files."""

from __future__ import annotations

from pathlib import Path

from deedbench.benchmarks.retail.procedure import RETAIL_PROCEDURE
from deedbench.benchmarks.retail.scorer import UNORDERED
from deedbench.benchmarks.retail.tools import RETAIL_TOOLS
from deedbench.benchmarks.retail.world import load_retail_data
from deedbench.benchmarks.taubench.rescore import Domain
from deedbench.engine import BenchmarkError

__all__ = ["RETAIL", "domain_for"]

RETAIL = Domain("retail", load_retail_data, RETAIL_TOOLS, RETAIL_PROCEDURE, UNORDERED)


def domain_for(directory: Path) -> Domain:
    if (directory / "flights.json").exists():
        from deedbench.benchmarks.airline.domain import AIRLINE

        return AIRLINE
    if (directory / "orders.json").exists():
        return RETAIL
    raise BenchmarkError(
        f"{directory}: not a τ-bench retail folder (orders.json) nor an airline one (flights.json)"
    )
