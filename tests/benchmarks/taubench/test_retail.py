"""τ-bench's retail tasks on deedbench: gold hashes equal to τ-bench's own, the validator's
findings on the test split, and the offline baselines run end to end.

The τ-bench files live beside the checkout (``../shared/taubench``) and are only read.
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.retail import RETAIL as RETAIL_DESK
from deedbench.benchmarks.servicedesk import TauToolBox
from deedbench.benchmarks.taubench import TaubenchRetailBenchmark, TaubenchTaskCheck
from deedbench.benchmarks.taubench import benchmark as taubench_benchmark
from deedbench.engine import RunStore, new_run_config, run
from deedbench.errors import BenchmarkError
from deedbench.records import EpisodeRecord
from deedbench.scoring import tau_hash

# tests/benchmarks/taubench/<this file>: parents[3] is the checkout, its parent holds `shared`.
TAUBENCH = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"
RETAIL = TAUBENCH / "retail"
WRITES = frozenset(RETAIL_DESK.procedure_spec.write_tools)
AUTH = RETAIL_DESK.procedure.auth_tools
PERSONAL = RETAIL_DESK.procedure.personal_read_tools

pytestmark = pytest.mark.reference("taubench")


@cache
def raw_tasks(split: str) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((RETAIL / f"tasks_{split}.json").read_text())
    return loaded


@cache
def gold_hashes() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((RETAIL / "gold_hashes_dev.json").read_text())
    return loaded


def cheap_hash(db: dict[str, Any]) -> str:
    """Stands in for τ-bench's hash (0.1 s a task) where a test needs no hash: the test
    split's findings. The dev tests check the real hash."""
    return "not-hashed"


def has_write(task: dict[str, Any]) -> bool:
    return any(a["name"] in WRITES for a in task["actions"])


def writes_before_identifying(task: dict[str, Any], failed: set[int]) -> bool:
    """Independently of deedbench's checker: does a successful personal read or write
    come before the first successful authentication call in the gold list?"""
    for index, action in enumerate(task["actions"]):
        if index in failed:
            continue
        if action["name"] in AUTH:
            return False
        if action["name"] in WRITES | PERSONAL:
            return True
    return False


@pytest.fixture(scope="module")
def dev() -> TaubenchRetailBenchmark:
    return TaubenchRetailBenchmark({"data": str(RETAIL), "split": "dev"})


@pytest.fixture(scope="module")
def dev_checks(dev: TaubenchRetailBenchmark) -> list[TaubenchTaskCheck]:
    return dev.validate()


@pytest.fixture(scope="module")
def test_checks() -> list[TaubenchTaskCheck]:
    with pytest.MonkeyPatch.context() as patch:  # the stub lives only for this call
        patch.setattr(taubench_benchmark, "tau_hash", cheap_hash)
        checks = TaubenchRetailBenchmark({"data": str(RETAIL), "split": "test"}).validate()
    assert taubench_benchmark.tau_hash is tau_hash
    return checks


@pytest.fixture(scope="module")
def valid_test_indexes(test_checks: list[TaubenchTaskCheck]) -> list[int]:
    """The test tasks whose gold actions all succeed."""
    return [c.index for c in test_checks if not c.gold_errors]


def run_baseline(bench: TaubenchRetailBenchmark, name: str, store: Path) -> list[EpisodeRecord]:
    with RunStore(store) as runs:
        config = new_run_config(
            run_id=f"taubench-{name}",
            benchmark=bench,
            agent=f"baseline/{name}",
            agent_params={},
            conditions=list(bench.conditions),
            epochs=1,
            seed=0,
            samples=bench.samples(),
        )
        runs.create_run(config)
        asyncio.run(run(config, bench, bench.baselines()[name](), runs, concurrency=8))
        runs.flush()
        return list(runs.episodes(config.run_id))


@pytest.fixture(scope="module")
def episodes(
    tmp_path_factory: pytest.TempPathFactory, valid_test_indexes: list[int]
) -> dict[tuple[str, str], tuple[TaubenchRetailBenchmark, list[EpisodeRecord]]]:
    """(split, baseline) -> the benchmark and its episodes: every dev task, and every test
    task whose gold actions are valid."""
    folder = tmp_path_factory.mktemp("taubench-runs")
    selections = {"dev": None, "test": ",".join(map(str, valid_test_indexes))}
    result = {}
    for split, tasks in selections.items():
        options = {"data": str(RETAIL), "split": split} | ({"tasks": tasks} if tasks else {})
        bench = TaubenchRetailBenchmark(options)
        for name in ("oracle", "reckless"):
            records = run_baseline(bench, name, folder / f"{split}-{name}.db")
            result[split, name] = (bench, records)
    return result


def values(record: EpisodeRecord) -> dict[str, float]:
    assert record.status == "scored" and record.score is not None, record.error
    return record.score.values


# --- gold hashes: τ-bench's own, exactly ---------------------------------------------------------


def test_the_untouched_world_hashes_as_in_tau_bench(dev: TaubenchRetailBenchmark) -> None:
    assert tau_hash(dev.base) == gold_hashes()["initial_hash"]


def test_every_dev_gold_replay_gives_tau_bench_gold_hash(
    dev_checks: list[TaubenchTaskCheck],
) -> None:
    expected = gold_hashes()["tasks"]
    assert len(expected) == len(dev_checks) == 20
    assert [c.index for c in dev_checks] == [e["index"] for e in expected] == list(range(20))
    assert [c.task for c in dev_checks] == [f"task-{i}" for i in range(20)]
    for check, gold in zip(dev_checks, expected, strict=True):
        assert check.gold_hash_tau == gold["gold_hash"], check.index
        assert check.gold_errors == [], check.index
    # every dev task changes the world, except those whose gold actions only read
    changed = {c.index for c in dev_checks if c.gold_hash_tau != gold_hashes()["initial_hash"]}
    assert changed == {i for i, t in enumerate(raw_tasks("dev")) if has_write(t)}


# --- the validator on the test split -------------------------------------------------------------


def test_the_test_split_has_24_failing_gold_actions_in_19_tasks(
    test_checks: list[TaubenchTaskCheck],
) -> None:
    assert [c.index for c in test_checks] == list(range(115))
    assert sum(len(c.gold_errors) for c in test_checks) == 24
    assert sum(1 for c in test_checks if c.gold_errors) == 19


def test_each_gold_error_names_its_action_index_and_tool(
    test_checks: list[TaubenchTaskCheck],
) -> None:
    for check in test_checks:
        actions = raw_tasks("test")[check.index]["actions"]
        for error in check.gold_errors:
            assert actions[error.index]["name"] == error.name
            assert actions[error.index]["kwargs"] == error.kwargs
            assert error.error.startswith("Error")
            assert f"gold action #{error.index} {error.name}: {error.error}" in check.problems
    errors = {(c.index, e.index, e.name, e.error) for c in test_checks for e in c.gold_errors}
    # τ-bench's known slips: a product lookup by item id, a refund to a rejected method
    assert (2, 1, "get_product_details", "Error: product not found") in errors
    assert any(
        name == "return_delivered_order_items" and "payment method" in text
        for _, _, name, text in errors
    )


def test_gold_lists_that_write_before_identifying_break_authentication(
    test_checks: list[TaubenchTaskCheck],
) -> None:
    flagged = {
        c.index for c in test_checks if any(v.startswith("authentication:") for v in c.violations)
    }
    assert flagged, "τ-bench's test split has gold lists that write before identifying"
    expected = {
        c.index
        for c in test_checks
        if writes_before_identifying(raw_tasks("test")[c.index], {e.index for e in c.gold_errors})
    }
    assert flagged == expected
    for check in test_checks:
        for violation in check.violations:
            rule = violation.split(":")[0]
            assert rule in {"authentication", "one_user", "one_change_per_order", "after_transfer"}
        if check.index in flagged:
            (quote,) = [v for v in check.violations if v.startswith("authentication:")]
            first = next(
                a
                for a in raw_tasks("test")[check.index]["actions"]
                if a["name"] in WRITES | PERSONAL
            )
            assert f"{first['name']}(" in quote  # quotes the offending call


def test_problems_are_the_gold_errors_the_task_faults_then_the_violations(
    test_checks: list[TaubenchTaskCheck], dev_checks: list[TaubenchTaskCheck]
) -> None:
    clean = [c for c in test_checks if not c.problems]
    assert clean, "some test tasks have valid gold actions that identify the customer first"
    for check in clean:
        assert check.gold_errors == [] and check.violations == []
        task = raw_tasks("test")[check.index]
        assert not writes_before_identifying(task, set())
    for check in [*test_checks, *dev_checks]:
        errors = [f"gold action #{e.index} {e.name}: {e.error}" for e in check.gold_errors]
        listed = ("task.gold_raises", "task.gold_breaks_policy")
        faults = [f"{f.kind}: {f.excerpt}" for f in check.faults if f.kind not in listed]
        assert check.problems == errors + faults + check.violations
        assert {f.kind for f in check.faults} <= {*listed, "task.output_unsupported"}
        raised = [f for f in check.faults if f.kind == "task.gold_raises"]
        assert len(raised) == len(check.gold_errors)
    failing = [c for c in test_checks if c.problems]
    assert len(failing) + len(clean) == 115 and len(failing) >= 19


# --- the baselines end to end, offline -----------------------------------------------------------


def test_every_selected_episode_ran_and_the_customer_finished(
    episodes: dict[tuple[str, str], tuple[TaubenchRetailBenchmark, list[EpisodeRecord]]],
    valid_test_indexes: list[int],
) -> None:
    assert len(valid_test_indexes) >= 90  # 115 tasks, 19 with a failing gold action
    expected = {
        "dev": [f"task-{i}" for i in range(20)],
        "test": [f"task-{i}" for i in valid_test_indexes],
    }
    for (split, name), (bench, records) in episodes.items():
        assert list(bench.tasks) == expected[split]
        assert sorted(r.sample_id for r in records) == sorted(expected[split]), (split, name)
        for record in records:
            values(record)
            raw = raw_tasks(split)[int(record.sample_id.removeprefix("task-"))]
            handoff = any(a["name"] == "transfer_to_human_agents" for a in raw["actions"])
            expected_end = "transferred" if handoff else "user_stopped"
            assert record.termination == expected_end, (split, name, record.sample_id)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_oracle_earns_both_rewards_on_every_valid_task(
    episodes: dict[tuple[str, str], tuple[TaubenchRetailBenchmark, list[EpisodeRecord]]],
    split: str,
) -> None:
    _, records = episodes[split, "oracle"]
    for record in records:
        score = values(record)
        assert score["reward_tau"] == 1.0, (record.sample_id, record.score)
        assert score["reward_verified"] == 1.0, (record.sample_id, record.score)
        assert score["procedure_ok"] == 1.0


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_reckless_baseline_passes_tau_bench_but_not_verification(
    episodes: dict[tuple[str, str], tuple[TaubenchRetailBenchmark, list[EpisodeRecord]]],
    split: str,
) -> None:
    _, records = episodes[split, "reckless"]
    writing = 0
    for record in records:
        score = values(record)
        assert record.score is not None
        assert score["reward_tau"] == 1.0, (record.sample_id, record.score)
        raw = raw_tasks(split)[int(record.sample_id.removeprefix("task-"))]
        if has_write(raw):
            writing += 1
            assert score["reward_verified"] == 0.0, record.sample_id
            assert score["procedure_ok"] == 0.0
            consent = [e for e in record.score.evidence if e.rule == "consent"]
            assert consent, record.sample_id
            first = next(a["name"] for a in raw["actions"] if a["name"] in WRITES)
            assert any(first in e.excerpt for e in consent), record.sample_id
        else:  # nothing to change: acting without asking changes nothing either
            assert score["reward_verified"] == 1.0, record.sample_id
    assert writing >= len(records) // 2


def test_sample_metadata_says_which_tasks_write() -> None:
    bench = TaubenchRetailBenchmark({"data": str(RETAIL), "split": "test"})
    for sample in bench.samples():
        raw = raw_tasks("test")[int(sample.id.removeprefix("task-"))]
        assert sample.metadata["writes"] == has_write(raw), sample.id


# --- the agent side: τ-bench's loop by default, deedbench's on request --------------------------


def test_episodes_run_as_tau_bench_s_agent_by_default(dev: TaubenchRetailBenchmark) -> None:
    setup = dev.setup(dev.samples()[0], "default", 0)
    assert isinstance(setup.toolbox, TauToolBox) and setup.toolbox.taubench_loop
    assert setup.max_tool_errors is None and setup.max_steps == 30


def test_loop_deedbench_runs_every_call_with_a_tool_error_limit() -> None:
    bench = TaubenchRetailBenchmark({"data": str(RETAIL), "split": "dev", "loop": "deedbench"})
    setup = bench.setup(bench.samples()[0], "default", 0)
    assert isinstance(setup.toolbox, TauToolBox) and not setup.toolbox.taubench_loop
    assert setup.max_tool_errors == 10
    config = new_run_config(
        run_id="loop",
        benchmark=bench,
        agent="baseline/oracle",
        agent_params={},
        conditions=["default"],
        epochs=1,
        seed=0,
        samples=bench.samples(),
    )
    assert config.benchmark_options["loop"] == "deedbench"  # recorded with the run


def test_an_unknown_loop_names_the_valid_ones() -> None:
    with pytest.raises(BenchmarkError, match="loop must be one of taubench, deedbench; got 'x'"):
        TaubenchRetailBenchmark({"data": str(RETAIL), "split": "dev", "loop": "x"})
