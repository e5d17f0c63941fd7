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
    # The groupings `deedbench run` prints after a run (`report` prints every one). None:
    # the first of `group_by`. Left out of the stored spec while None, as runs recorded
    # before the field were.
    run_summary_by: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    # The column of a `report --covariate` file that names clusters. None: `cluster_by`,
    # else "scenario". Left out of the stored spec while None.
    covariate_key: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # What readers need of the benchmark's class, recorded with each run so that reading a
    # store imports no code (`Benchmark.recorded_report`): its conditions in its own order
    # (an Inspect task's name: the first is the bare one) and what each baseline is for
    # (the line under a baseline run's summary). Left out while None, as in runs recorded
    # before them, whose readers ask deedbench's own benchmarks and no other.
    conditions: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    baseline_purposes: dict[str, str] | None = Field(default=None, exclude_if=lambda v: v is None)

    def run_summary_groupings(self) -> list[str]:
        """The groupings the run's own summary prints."""
        return self.group_by[:1] if self.run_summary_by is None else list(self.run_summary_by)

    def covariate_column(self) -> str:
        """The covariate file's column naming clusters, unless `--covariate-key` says."""
        return self.covariate_key or self.cluster_by or "scenario"

    def metric(self, name: str) -> MetricSpec:
        """The metric called `name` (the primary one, one with a pass^k...)."""
        return next(m for m in self.metrics if m.name == name)
