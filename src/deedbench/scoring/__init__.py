"""Shared scoring pieces: scores with evidence and the metrics reports aggregate."""

from deedbench.scoring.metrics import MetricSpec, ReportSpec
from deedbench.scoring.score import Evidence, Score

__all__ = ["Evidence", "MetricSpec", "ReportSpec", "Score"]
