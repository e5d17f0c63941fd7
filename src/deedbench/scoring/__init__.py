"""Shared scoring pieces: state comparison and τ-bench's hash, procedure rules over a
transcript. The scores, evidence and metrics they produce are records
(`deedbench.records`).
"""

from deedbench.scoring.procedure import ProcedureSpec, Violation, check_procedure
from deedbench.scoring.state import (
    OverlayState,
    TauTextual,
    canonical,
    diff,
    records_equal_tau,
    tau_hash,
    to_hashable,
    worlds_diff,
    worlds_equal_canonical,
    worlds_equal_tau,
)

__all__ = [
    "OverlayState",
    "ProcedureSpec",
    "TauTextual",
    "Violation",
    "canonical",
    "check_procedure",
    "diff",
    "records_equal_tau",
    "tau_hash",
    "to_hashable",
    "worlds_diff",
    "worlds_equal_canonical",
    "worlds_equal_tau",
]
