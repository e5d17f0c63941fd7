"""`deedbench run|validate taubench-retail --data DIR` and `deedbench rescore taubench FILE`.

The τ-bench files live beside the checkout (``../shared/taubench``) and are only read;
broken data folders are copies made in ``tmp_path``.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.taubench import benchmark as taubench_benchmark
from deedbench.benchmarks.taubench.rescore import RescoreReport, rescore_file
from deedbench.cli.main import app
from deedbench.engine import RunStore

# tests/cli/<this file>: parents[2] is the checkout, its parent holds `shared`.
TAUBENCH = Path(__file__).resolve().parents[2].parent / "shared" / "taubench"
RETAIL = TAUBENCH / "retail"
RESULTS = TAUBENCH / "trajectories" / "gpt-4o-airline.json"
FOLDERS = [TAUBENCH / "trajectories" / "airline-2024-11", TAUBENCH / "airline"]
DATA_ARGS = [arg for folder in FOLDERS for arg in ("--data", str(folder))]
COPIED = ("users.json", "orders.json", "products.json", "policy.md", "tasks_dev.json")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

pytestmark = pytest.mark.reference("taubench")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    """Output without colour codes or whitespace, so line wrapping cannot split a match."""
    return "".join(ANSI.sub("", text).split())


def contains(output: str, expected: str) -> bool:
    return flat(expected) in flat(output)


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@cache
def gold_hashes() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((RETAIL / "gold_hashes_dev.json").read_text())
    return loaded


@cache
def records() -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads(RESULTS.read_text())
    return loaded


def cheap_hash(db: dict[str, Any]) -> str:
    """Stands in for τ-bench's hash (0.1 s a task) on the test split, where no gold hash
    is checked; the dev split runs with the real one."""
    return "not-hashed"


def copy_folder(target: Path) -> Path:
    target.mkdir()
    for name in COPIED:
        shutil.copyfile(RETAIL / name, target / name)
    return target


def edit_tasks(folder: Path, change: Callable[[list[dict[str, Any]]], object]) -> None:
    file = folder / "tasks_dev.json"
    tasks = json.loads(file.read_text())
    change(tasks)
    file.write_text(json.dumps(tasks))


@pytest.fixture(autouse=True)
def private_tempdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rescore` merges the --data folders into a temporary folder it never removes;
    keep those out of the system's temporary directory."""
    folder = tmp_path / "tempdir"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))


@pytest.fixture(scope="module")
def library_report(tmp_path_factory: pytest.TempPathFactory) -> RescoreReport:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("tempdir")))
        return rescore_file(RESULTS, FOLDERS, AIRLINE)


# --- run ----------------------------------------------------------------------------------------


def test_run_selects_tasks_and_the_oracle_passes_them(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    result = invoke(
        "run", "taubench-retail", "--data", str(RETAIL), "-T", "split=dev",
        "-T", "tasks=0,5,9-12", "--agent", "baseline/oracle",
        "--run-id", "tau-dev", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert contains(result.output, "starting run tau-dev: 6 of 6 episodes to run")
    with RunStore(store) as runs:
        config = runs.require_run("tau-dev")
        assert config.benchmark_options == {
            "data": str(RETAIL),
            "split": "dev",
            "tasks": "0,5,9-12",
        }
        episodes = list(runs.episodes("tau-dev"))
    assert sorted(e.sample_id for e in episodes) == sorted(
        f"task-{i}" for i in (0, 5, 9, 10, 11, 12)
    )
    for episode in episodes:
        assert episode.status == "scored" and episode.score is not None
        assert episode.score.values["reward_tau"] == 1.0
        assert episode.score.values["reward_verified"] == 1.0


def broken_folders() -> dict[str, tuple[Callable[[Path], None], Callable[[Path], str]]]:
    """name -> (how to break a copied folder, the text the error must contain)."""

    def remove(name: str) -> Callable[[Path], None]:
        return lambda folder: (folder / name).unlink()

    def task(index: int, change: Callable[[dict[str, Any]], object]) -> Callable[[Path], None]:
        return lambda folder: edit_tasks(folder, lambda tasks: change(tasks[index]))

    return {
        "no tasks file": (
            remove("tasks_dev.json"),
            lambda f: f"{f}: no tasks file for split 'dev'",
        ),
        "no users": (remove("users.json"), lambda f: f"{f / 'users.json'} is missing"),
        "no orders": (remove("orders.json"), lambda f: f"{f / 'orders.json'} is missing"),
        "no products": (remove("products.json"), lambda f: f"{f / 'products.json'} is missing"),
        "no policy": (remove("policy.md"), lambda f: f"{f}: no policy.md"),
        "unknown user": (
            task(7, lambda t: t.update(user_id="nobody_0000")),
            lambda f: f"{f / 'tasks_dev.json'}: task 7: field user_id: unknown user 'nobody_0000'",
        ),
        "malformed action": (
            task(4, lambda t: t["actions"][0].pop("name")),
            lambda f: f"{f / 'tasks_dev.json'}: task 4: a malformed action (name",
        ),
    }


@pytest.mark.parametrize("case", list(broken_folders()))
def test_run_reports_a_broken_data_folder_and_exits_2(tmp_path: Path, case: str) -> None:
    folder = copy_folder(tmp_path / "retail")
    breaks, expected = broken_folders()[case]
    breaks(folder)
    store = tmp_path / "runs.db"
    result = invoke(
        "run", "taubench-retail", "--data", str(folder), "-T", "split=dev",
        "--agent", "baseline/oracle", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert contains(result.output, "error:")
    assert contains(result.output, expected(folder)), result.output
    assert "Traceback" not in result.output
    with RunStore(store) as runs:
        assert runs.run_ids() == []  # nothing recorded for a run that never started


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        (
            "18-21",
            f"{RETAIL / 'tasks_dev.json'}: option tasks names [20, 21], but the file has 20 tasks",
        ),
        ("3-1", "taubench-retail option tasks: range '3-1' runs backwards"),
        ("1,two", "option tasks: 'two' is not an index"),
    ],
)
def test_run_refuses_a_bad_task_selection(tmp_path: Path, tasks: str, expected: str) -> None:
    result = invoke(
        "run", "taubench-retail", "--data", str(RETAIL), "-T", "split=dev", "-T", f"tasks={tasks}",
        "--agent", "baseline/oracle", "--store", str(tmp_path / "runs.db"),
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert contains(result.output, expected), result.output


def test_validate_reports_a_broken_data_folder_and_exits_2(tmp_path: Path) -> None:
    folder = copy_folder(tmp_path / "retail")
    edit_tasks(folder, lambda tasks: tasks[9].update(user_id="ghost_1"))
    result = invoke("validate", "taubench-retail", "--data", str(folder), "-T", "split=dev")
    assert result.exit_code == 2, result.output
    assert contains(result.output, f"{folder / 'tasks_dev.json'}: task 9:")


# --- validate -----------------------------------------------------------------------------------


def test_validate_json_gives_tau_bench_gold_hashes_for_the_dev_split() -> None:
    result = invoke(
        "validate", "taubench-retail", "--data", str(RETAIL), "-T", "split=dev", "--json"
    )
    checks = json_lines(result.stdout)
    assert len(checks) == 20
    for check, gold in zip(checks, gold_hashes()["tasks"], strict=True):
        assert {"index", "task", "gold_hash_tau", "gold_errors", "violations"} <= set(check)
        assert check["index"] == gold["index"]
        assert check["gold_hash_tau"] == gold["gold_hash"], check["index"]
        assert check["gold_errors"] == []
    # exit 1 exactly when some task has a problem (dev gold lists skip identification)
    assert result.exit_code == (1 if any(c["problems"] for c in checks) else 0)
    assert any(c["violations"] for c in checks)


@pytest.fixture
def cheap_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(taubench_benchmark, "tau_hash", cheap_hash)


@pytest.mark.usefixtures("cheap_hashing")
def test_validate_json_counts_the_failing_gold_actions_of_the_test_split() -> None:
    result = invoke("validate", "taubench-retail", "--data", str(RETAIL), "--json")
    assert result.exit_code == 1, result.output
    checks = json_lines(result.stdout)
    assert [c["index"] for c in checks] == list(range(115))
    assert sum(len(c["gold_errors"]) for c in checks) == 24
    assert sum(1 for c in checks if c["gold_errors"]) == 19
    for check in checks:
        for error in check["gold_errors"]:
            assert {"index", "name", "kwargs", "error"} <= set(error)
    assert any(v.startswith("authentication:") for c in checks for v in c["violations"])


@pytest.mark.usefixtures("cheap_hashing")
def test_validate_lists_each_failing_task_by_task_and_action() -> None:
    as_json = json_lines(
        invoke("validate", "taubench-retail", "--data", str(RETAIL), "--json").stdout
    )
    result = invoke("validate", "taubench-retail", "--data", str(RETAIL), "-T", "split=test")
    assert result.exit_code == 1, result.output
    failing = [c for c in as_json if c["problems"]]
    assert contains(result.output, f"{115 - len(failing)} of 115 tasks pass")
    for check in failing:
        assert contains(result.output, f"{check['task']}: {check['problems'][0][:80]}")
    assert contains(result.output, "task-2: gold action #1 get_product_details: Error")
    assert contains(result.output, "authentication: write before any successful authentication")
    passing = [c["task"] for c in as_json if not c["problems"]]
    assert passing
    lines = ANSI.sub("", result.output).splitlines()
    assert not any(line.startswith(f"{task}:") for task in passing for line in lines)


# --- rescore ------------------------------------------------------------------------------------


def test_rescore_prints_the_summary_and_a_quote_per_rule(library_report: RescoreReport) -> None:
    result = invoke("rescore", "taubench", str(RESULTS), *DATA_ARGS)
    assert result.exit_code == 0, result.output
    report = library_report
    assert contains(result.output, "200 records: 200 rescored, 0 crashed")
    assert contains(result.output, "equal the record): 200 of 200; 5 never ended")
    assert contains(result.output, "recorded tool outputs given again by the replay: 1164 of 1164")
    assert contains(result.output, "agree on all 16 records of tasks with required outputs")
    assert contains(
        result.output,
        f"{report.passing} passing (recorded reward 1), of which "
        f"{report.passing_with_violations} broke a procedure rule",
    )
    assert report.rules
    for rule, count in report.rules.items():
        assert contains(result.output, f"{rule}: {count} passing trajectories"), rule
        assert contains(result.output, f"e.g. {rule}:"), rule
    assert "differs" not in result.output


def test_rescore_json_matches_the_library(library_report: RescoreReport) -> None:
    result = invoke("rescore", "taubench", str(RESULTS), *DATA_ARGS, "--json")
    assert result.exit_code == 0, result.output
    parsed = json.loads(result.stdout)
    assert parsed == library_report.model_dump(mode="json")
    assert parsed["records"] == parsed["reproduced"] == 200
    assert parsed["passing"] == sum(1 for r in records() if r["reward"] == 1.0)


def test_rescore_reports_a_tampered_record_as_not_reproduced(tmp_path: Path) -> None:
    changed = json.loads(RESULTS.read_text())
    record = next(
        r
        for r in changed
        if ((r["info"].get("reward_info") or {}).get("info") or {}).get("r_actions") == 1.0
    )
    record["info"]["reward_info"]["info"]["r_actions"] = 0.0
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(changed))
    result = invoke("rescore", "taubench", str(path), *DATA_ARGS)
    assert result.exit_code == 0, result.output
    assert contains(result.output, "equal the record): 199 of 200")
    number = changed.index(record)
    assert contains(
        result.output,
        f"differs: record {number} (task {record['task_id']} trial {record['trial']}): r_actions",
    )


def test_rescore_refuses_an_unknown_format() -> None:
    result = invoke("rescore", "webarena", str(RESULTS), *DATA_ARGS)
    assert result.exit_code == 2
    assert contains(result.output, "unknown result format 'webarena'. Valid formats: taubench")


def test_rescore_refuses_a_file_that_is_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"results": records()[:1]}))
    result = invoke("rescore", "taubench", str(path), *DATA_ARGS)
    assert result.exit_code == 2
    assert contains(result.output, f"{path}: expected a JSON list of result records")


def test_rescore_lists_a_record_without_a_trajectory_and_rescores_the_rest(
    tmp_path: Path,
) -> None:
    chosen = json.loads(json.dumps(records()[:4]))
    del chosen[2]["traj"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(chosen))
    result = invoke("rescore", "taubench", str(path), *DATA_ARGS)
    assert result.exit_code == 0, result.output
    assert contains(result.output, "4 records: 3 rescored, 0 crashed (τ-bench's run failed, no")
    assert contains(result.output, "1 unreadable")
    assert contains(result.output, "malformed: record 2: missing field 'traj'")


def test_rescore_refuses_data_of_no_known_domain(tmp_path: Path) -> None:
    result = invoke("rescore", "taubench", str(RESULTS), "--data", str(tmp_path))
    assert result.exit_code == 2
    assert contains(result.output, f"{tmp_path}: no τ-bench retail")
