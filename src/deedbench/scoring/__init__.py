"""Shared scoring pieces: scores with evidence, the metrics reports aggregate, state comparison."""

from deedbench.scoring.metrics import MetricSpec, ReportSpec
from deedbench.scoring.score import NO_CHOICE, Evidence, Score
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
    "ReportSpec",
    "Score",
    "canonical",
    "diff",
    "records_equal_tau",
    "tau_hash",
    "to_hashable",
    "worlds_diff",
    "worlds_equal_canonical",
    "worlds_equal_tau",
]
