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


def test_samples_are_chosen_by_id_in_the_benchmarks_order() -> None:
    bench = load_benchmark("tac")
    ids = ["melbourne_cup_base", "seville_bullfight_reversed"]
    config = plan_run(bench, "baseline/random", run_id="r", samples=ids[::-1])
    order = [s.id for s in bench.samples()]
    assert config.sample_ids == sorted(ids, key=order.index)
    with pytest.raises(BenchmarkError, match=r"no sample 'melbourne_cup_bas' in tac .*did you "
                       r"mean 'melbourne_cup_base'"):  # fmt: skip
        plan_run(bench, "baseline/random", samples=["melbourne_cup_bas"])


def test_resume_compares_the_samples_and_each_models_settings_given(tmp_path: Path) -> None:
    from deedbench.agents import ModelChoice, role_settings

    bench = load_benchmark("retail", {"user": "llm:openai/gpt-4o"})
    user = role_settings("user", "openai/gpt-4o", ModelChoice(max_tokens=100))
    config = plan_run(bench, "baseline/oracle", run_id="r", samples=["retail-001-cancel"],
                      user_settings=user)  # fmt: skip
    assert config.user is not None and config.user.settings == user
    with RunStore(tmp_path / "runs.db") as store:
        store.create_run(config)
        same = ModelChoice(max_tokens=100, temperature=0.0).given()
        assert (
            resume_run(store, "r", bench, samples=["retail-001-cancel"], user_settings=same)
            == config
        )
        with pytest.raises(ResumeError) as raised:
            resume_run(
                store, "r", bench, samples=["retail-002-cancel"],
                user_settings=ModelChoice(temperature=0.5).given(),
                judge_settings=ModelChoice(temperature=0.0).given(),
            )  # fmt: skip
    said = str(raised.value)
    assert "samples retail-001-cancel (got retail-002-cancel)" in said
    assert "user temperature 0.0 (got 0.5)" in said
    assert "judge temperature None (got 0.0)" in said  # the run has no judge to set
