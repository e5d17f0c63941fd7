"""How a benchmark's score values aggregate into the rates a report shows."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

__all__ = ["MetricSpec", "ReportSpec"]


class MetricSpec(BaseModel):
    """A rate: the mean of score value `value`, over episodes where `given` is 1 if set."""

    name: str
    value: str
    given: str | None = None
    description: str = ""

    def counts(self, values: Mapping[str, float]) -> bool:
        """Whether the metric counts an episode with these score values (`given` is 1)."""
        return self.given is None or values.get(self.given) == 1.0


class ReportSpec(BaseModel):
    """What a report computes for a benchmark; stored with each run."""

    metrics: list[MetricSpec]
    primary: str
    group_by: list[str] = Field(default_factory=list)
    compare_to_chance: bool = False
    pass_hat_k: list[str] = Field(default_factory=list)  # metrics whose pass^k is reported
    show_rules: bool = False  # print how often each evidence rule is cited (violations by rule)
    # Samples sharing this metadata value are one cluster for bootstrap intervals (TAC: the
    # scenario, whose variants and epochs move together); None: each sample is its own.
    cluster_by: str | None = None
    # Metadata key naming a sample's variant; each variant's choices are compared with the
    # `flip_base` variant's on the same (cluster, condition, epoch). None: no flip rates.
    flip_by: str | None = None
    flip_base: str = "base"

    def metric(self, name: str) -> MetricSpec:
        """The metric called `name` (the primary one, one with a pass^k...)."""
        return next(m for m in self.metrics if m.name == name)
