"""Shared scoring pieces: state comparison and τ-bench's hash, procedure rules over a
transcript; and, from the records they stand on, scores with evidence and the metrics
reports aggregate.
"""

from deedbench.records import NO_CHOICE, Evidence, MetricSpec, ReportSpec, Score
from deedbench.scoring.procedure import ProcedureSpec, Violation, check_procedure
from deedbench.scoring.state import (
    OverlayState,
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
    "NO_CHOICE",
    "Evidence",
    "MetricSpec",
    "OverlayState",
    "ProcedureSpec",
    "ReportSpec",
    "Score",
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
