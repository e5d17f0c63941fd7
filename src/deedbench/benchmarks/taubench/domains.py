"""τ-bench's domains as rescoring needs them, told apart by their data files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from deedbench.benchmarks.airline.rules import (
    AIRLINE_PROCEDURE,
    AIRLINE_PROCEDURE_RULES,
    check_airline_policy,
)
from deedbench.benchmarks.airline.tools import AIRLINE_TOOLS
from deedbench.benchmarks.airline.world import load_airline_data
from deedbench.benchmarks.retail.domain import RETAIL, Domain
from deedbench.engine import BenchmarkError

__all__ = ["AIRLINE", "RETAIL", "domain_for"]

AIRLINE = Domain(
    "airline",
    load_airline_data,
    AIRLINE_TOOLS,
    AIRLINE_PROCEDURE,
    frozenset({"reservations.*.payment_history", "reservations.*.passengers"}),
    procedure_rules=AIRLINE_PROCEDURE_RULES,
    policy_check=check_airline_policy,
)


def domain_for(directories: Sequence[Path]) -> Domain:
    if any((d / "flights.json").exists() for d in directories):
        return AIRLINE
    if any((d / "orders.json").exists() for d in directories):
        return RETAIL
    raise BenchmarkError(
        f"{', '.join(map(str, directories))}: no τ-bench retail (orders.json) or airline "
        "(flights.json) data"
    )
