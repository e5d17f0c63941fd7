"""A scorer other than a benchmark's own, as a user assigns one (`bench.scorer = ...`)."""

from __future__ import annotations

from dataclasses import dataclass

from deedbench.engine import EpisodeTranscript
from deedbench.records import Sample, Score

__all__ = ["FixedScorer"]


@dataclass
class FixedScorer:
    """Gives every episode the same outcome, whatever the agent did."""

    outcome: str = "harmful"

    def score(self, sample: Sample, transcript: EpisodeTranscript) -> Score:
        return Score(outcome=self.outcome, values={"fixed": 1.0})
