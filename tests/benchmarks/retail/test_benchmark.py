"""The retail benchmark end to end: validation of every shipped task, and the three
baselines run over every task through the real runner, store and report."""

from __future__ import annotations

import asyncio
from collections import defaultdict

import pytest

from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.retail import RetailBenchmark, builtin_tasks
from deedbench.benchmarks.servicedesk import TaskCheck
from deedbench.engine import RunStore, new_run_config, run
from deedbench.errors import BenchmarkError
from deedbench.records import EpisodeRecord, RunConfig
from deedbench.reports import summarize

Run = tuple[RunConfig, list[EpisodeRecord]]
EPOCHS = {"oracle": 3, "reckless": 3, "idle": 1}


@pytest.fixture(scope="module")
def bench() -> RetailBenchmark:
    return RetailBenchmark()


@pytest.fixture(scope="module")
def checks(bench: RetailBenchmark) -> list[TaskCheck]:
    return bench.validate()


@pytest.fixture(scope="module")
def runs(bench: RetailBenchmark, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    folder = tmp_path_factory.mktemp("retail-runs")
    result = {}
    with RunStore(folder / "runs.db") as store:
        for name, epochs in EPOCHS.items():
            config = new_run_config(
                run_id=f"retail-{name}",
                benchmark=bench,
                agent=f"baseline/{name}",
                agent_params={},
                conditions=list(bench.conditions),
                epochs=epochs,
                seed=0,
                samples=bench.samples(),
            )
            store.create_run(config)
            agent = bench.baselines()[name]()
            asyncio.run(run(config, bench, agent, store, concurrency=8))
            store.flush()
            result[name] = (config, list(store.episodes(config.run_id)))
    return result


def by_task(records: list[EpisodeRecord]) -> dict[str, list[EpisodeRecord]]:
    grouped: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        grouped[record.sample_id].append(record)
    return grouped


# --- the benchmark ------------------------------------------------------------------------------


def test_the_benchmark_is_registered_and_lists_its_samples(bench: RetailBenchmark) -> None:
    loaded = load_benchmark("retail")
    assert isinstance(loaded, RetailBenchmark)
    samples = bench.samples()
    tasks = builtin_tasks()
    assert [s.id for s in samples] == [t.id for t in tasks]
    for sample, task in zip(samples, tasks, strict=True):
        assert sample.input == task.instructions.wants[0].say
        assert sample.metadata["template"] == task.template
        assert sample.metadata["writes"] == task.writes
    assert set(bench.baselines()) >= {"oracle", "reckless", "idle"}
    assert bench.report.pass_hat_k == ["reward_tau", "reward_verified"]
    assert "template" in bench.report.group_by


def test_unknown_options_are_refused() -> None:
    with pytest.raises(BenchmarkError, match="unknown retail option"):
        RetailBenchmark({"colour": "blue"})
    with pytest.raises(BenchmarkError, match="user"):
        RetailBenchmark({"user": "telepathic"})


def test_the_data_hash_depends_on_the_tasks(bench: RetailBenchmark) -> None:
    tasks = builtin_tasks()
    assert RetailBenchmark().data_hash() == bench.data_hash()
    assert RetailBenchmark(tasks=tasks[:-1]).data_hash() != bench.data_hash()


def test_each_episode_starts_from_a_fresh_world(bench: RetailBenchmark) -> None:
    sample = bench.samples()[0]
    one, two = bench.setup(sample, "default", 0), bench.setup(sample, "default", 0)
    assert one.toolbox.state is not two.toolbox.state
    assert one.toolbox.state.touched() == {}
    assert one.user is not None and one.user is not two.user
    assert [m.role for m in one.messages] == ["system"]  # the customer opens


# --- validation --------------------------------------------------------------------------------


def test_every_shipped_task_passes_validation(
    bench: RetailBenchmark, checks: list[TaskCheck]
) -> None:
    assert [c.task for c in checks] == list(bench.tasks)
    failing = {c.task: c.problems for c in checks if not c.ok}
    assert failing == {}
    assert all(c.gold_errors == [] for c in checks)
    assert all(c.template == bench.tasks[c.task].template for c in checks)


# --- the baselines over every task --------------------------------------------------------------


def test_every_episode_ran_and_was_scored(bench: RetailBenchmark, runs: dict[str, Run]) -> None:
    for name, (_, records) in runs.items():
        assert len(records) == EPOCHS[name] * len(bench.tasks), name
        assert all(r.status == "scored" and r.score is not None for r in records), name
        grouped = by_task(records)
        assert set(grouped) == set(bench.tasks)
        assert all(len(v) == EPOCHS[name] for v in grouped.values())


def test_the_oracle_scores_one_on_every_task(bench: RetailBenchmark, runs: dict[str, Run]) -> None:
    for record in runs["oracle"][1]:
        assert record.score is not None
        values = record.score.values
        assert values["reward_tau"] == 1.0, (record.sample_id, record.score.evidence)
        assert values["reward_verified"] == 1.0, (record.sample_id, record.score.evidence)
        assert values["procedure_ok"] == 1.0 and values["violations"] == 0.0
        assert values["outcome_canonical"] == values["outcome_tau"] == 1.0
        assert values["outputs_strict"] == values["outputs_compat"] == 1.0
        assert record.score.outcome == "pass"
        assert record.score.evidence == []
        task = bench.tasks[record.sample_id]
        expected = "transferred" if task.must_transfer else "user_stopped"
        assert record.termination == expected, record.sample_id


def test_the_reckless_agent_passes_tau_but_not_verified_on_writes(
    bench: RetailBenchmark, runs: dict[str, Run]
) -> None:
    writes = 0
    for record in runs["reckless"][1]:
        assert record.score is not None
        task = bench.tasks[record.sample_id]
        values = record.score.values
        assert values["reward_tau"] == 1.0, record.sample_id
        assert values["outcome_canonical"] == 1.0, record.sample_id
        if not task.writes:
            assert values["reward_verified"] == 1.0, record.sample_id
            continue
        writes += 1
        assert values["reward_verified"] == 0.0, record.sample_id
        assert record.score.outcome == "pass_tau_broke_procedure"
        consent = [e for e in record.score.evidence if e.rule == "consent"]
        assert len(consent) == len(task.actions), record.sample_id
        for evidence, action in zip(consent, task.actions, strict=True):
            assert evidence.excerpt.endswith(")")
            assert f"{action.name}(" in evidence.excerpt
            for value in action.kwargs.values():
                if isinstance(value, str):
                    assert value in evidence.excerpt, (record.sample_id, value)
            call = next(
                c for m in record.messages for c in m.tool_calls if c.id == evidence.tool_call_id
            )
            assert call.name == action.name
            assert record.messages[evidence.message_index or 0].tool_calls[0] == call
    assert writes == EPOCHS["reckless"] * sum(t.writes for t in bench.tasks.values())


def test_the_idle_agent_scores_zero_on_every_write_task(
    bench: RetailBenchmark, runs: dict[str, Run]
) -> None:
    for record in runs["idle"][1]:
        assert record.score is not None
        task = bench.tasks[record.sample_id]
        # The customer gives up on an idle agent: no episode runs into the step limit.
        assert record.termination == "user_stopped", record.sample_id
        assert record.steps < 30
        needs_something = task.writes or task.must_transfer or task.outputs
        if needs_something:
            assert record.score.values["reward_tau"] == 0.0, record.sample_id
            assert record.score.values["reward_verified"] == 0.0, record.sample_id
            assert record.score.outcome == "fail"
        if task.writes:
            assert any(e.rule == "outcome" for e in record.score.evidence), record.sample_id


def test_rewards_follow_their_definitions(runs: dict[str, Run]) -> None:
    for _, records in runs.values():
        for record in records:
            assert record.score is not None
            v = record.score.values
            assert v["reward_tau"] == v["outcome_tau"] * v["outputs_compat"]
            assert v["reward_verified"] == (
                v["outcome_canonical"] * v["outputs_strict"] * v["procedure_ok"]
            )


def test_scripted_episodes_are_deterministic(runs: dict[str, Run]) -> None:
    for name in ("oracle", "reckless"):
        for sample_id, records in by_task(runs[name][1]).items():
            transcripts = {
                tuple((m.role, m.content, tuple(c.name for c in m.tool_calls)) for m in r.messages)
                for r in records
            }
            assert len(transcripts) == 1, (name, sample_id)


# --- pass^k in the report ------------------------------------------------------------------------


def test_the_oracle_reports_pass_hat_k_of_one(runs: dict[str, Run]) -> None:
    config, records = runs["oracle"]
    condition = summarize(config, records).conditions[0]
    for metric in ("reward_verified", "reward_tau"):
        points = condition.pass_hat_k[metric]
        assert [p.k for p in points] == [1, 2, 3]
        assert [p.value for p in points] == [1.0, 1.0, 1.0]
        assert all(p.tasks == len(config.sample_ids) for p in points)


def test_the_reckless_agent_reports_the_share_of_tasks_without_writes(
    bench: RetailBenchmark, runs: dict[str, Run]
) -> None:
    config, records = runs["reckless"]
    condition = summarize(config, records).conditions[0]
    share = sum(not t.writes for t in bench.tasks.values()) / len(bench.tasks)
    assert 0 < share < 1
    verified = condition.pass_hat_k["reward_verified"]
    assert [p.k for p in verified] == [1, 2, 3]
    assert [p.value for p in verified] == pytest.approx([share] * 3)
    assert [p.value for p in condition.pass_hat_k["reward_tau"]] == [1.0, 1.0, 1.0]
    assert condition.overall.metrics["reward_verified"].value == pytest.approx(share)
    assert condition.overall.metrics["reward_tau"].value == 1.0


def test_the_summary_groups_rewards_by_template(
    bench: RetailBenchmark, runs: dict[str, Run]
) -> None:
    config, records = runs["reckless"]
    groups = {g.group: g for g in summarize(config, records).conditions[0].by["template"]}
    templates = {t.template for t in bench.tasks.values()}
    assert set(groups) == templates
    for template, group in groups.items():
        writes = any(t.writes for t in bench.tasks.values() if t.template == template)
        assert group.metrics["reward_tau"].value == 1.0, template
        assert group.metrics["reward_verified"].value == (0.0 if writes else 1.0), template
