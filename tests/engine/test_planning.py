"""Planning and resuming a run from Python, as the command line does."""

from __future__ import annotations

from pathlib import Path

import pytest

from deedbench.benchmarks import load_benchmark
from deedbench.engine import RunStore, plan_run, resume_run
from deedbench.errors import BenchmarkError, ResumeError


def test_plan_fills_in_the_benchmarks_defaults() -> None:
    bench = load_benchmark("tac")
    config = plan_run(bench, "baseline/random", run_id="r")
    assert config.conditions == list(bench.conditions)
    assert config.epochs == bench.default_epochs
    assert config.sample_ids == [s.id for s in bench.samples()]
    limited = plan_run(bench, "baseline/random", run_id="r", conditions=["base", "base"], limit=2)
    assert limited.conditions == ["base"]
    assert len(limited.sample_ids) == 2


def test_an_unknown_condition_is_named() -> None:
    with pytest.raises(BenchmarkError, match=r"unknown condition.*nope.*Valid conditions"):
        plan_run(load_benchmark("tac"), "baseline/random", conditions=["nope"])


def test_resume_returns_the_record_and_names_every_conflict(tmp_path: Path) -> None:
    bench = load_benchmark("tac")
    config = plan_run(bench, "baseline/random", run_id="r", epochs=1, limit=2)
    with RunStore(tmp_path / "runs.db") as store:
        store.create_run(config)
        assert resume_run(store, "r", bench, epochs=1) == config
        with pytest.raises(ResumeError) as raised:
            resume_run(store, "r", bench, agent="baseline/welfare", epochs=3, seed=4)
    assert str(raised.value) == (
        "run 'r' was created with agent 'baseline/random' (got 'baseline/welfare'); "
        "epochs 1 (got 3); seed 0 (got 4). "
        "Resume without those settings, or start a new run id."
    )
