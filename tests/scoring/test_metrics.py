"""`ReportSpec`'s contract fields: which groupings a run's summary prints, and which column
of a covariate file names clusters; unset, they keep what runs recorded before them."""

from __future__ import annotations

import json

from deedbench.benchmarks.retail.benchmark import RetailBenchmark
from deedbench.benchmarks.tac import TacBenchmark
from deedbench.records import MetricSpec, ReportSpec


def _spec(**fields: object) -> ReportSpec:
    return ReportSpec(metrics=[MetricSpec(name="m", value="m")], primary="m", **fields)  # type: ignore[arg-type]


def test_unset_fields_default_to_the_first_grouping_and_the_cluster_key() -> None:
    assert TacBenchmark.report.run_summary_groupings() == ["category"]
    assert RetailBenchmark.report.run_summary_groupings() == ["template"]
    assert TacBenchmark.report.covariate_column() == "scenario"  # its cluster_by
    assert RetailBenchmark.report.covariate_column() == "scenario"  # no clusters: as before
    assert _spec().run_summary_groupings() == []


def test_set_fields_say_what_the_summary_and_the_covariate_use() -> None:
    spec = _spec(group_by=["a", "b"], run_summary_by=["b"], covariate_key="site")
    assert spec.run_summary_groupings() == ["b"]
    assert spec.covariate_column() == "site"


def test_unset_fields_are_not_stored_so_earlier_runs_serialise_unchanged() -> None:
    stored = json.loads(TacBenchmark.report.model_dump_json())
    assert "run_summary_by" not in stored and "covariate_key" not in stored
    assert ReportSpec.model_validate(stored) == TacBenchmark.report
    chosen = json.loads(_spec(run_summary_by=["x"], covariate_key="k").model_dump_json())
    assert chosen["run_summary_by"] == ["x"] and chosen["covariate_key"] == "k"
