"""`deedbench validate retail`, `deedbench run retail` and `deedbench report` on a retail run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from deedbench.benchmarks.retail import benchmark as retail_benchmark
from deedbench.benchmarks.retail import builtin_tasks
from deedbench.benchmarks.servicedesk import Action, DeskTask
from deedbench.cli.main import app

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    """Output without colour codes or whitespace, so line wrapping cannot split a match."""
    return "".join(ANSI.sub("", text).split())


def contains(output: str, expected: str) -> bool:
    return flat(expected) in flat(output)


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def tasks() -> list[DeskTask]:
    return builtin_tasks()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("retail-cli") / "runs.db"


@pytest.fixture(scope="module")
def oracle_run(store: Path) -> Result:
    result = invoke(
        "run", "retail", "--agent", "baseline/oracle", "--epochs", "2",
        "--run-id", "oracle", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def reckless_report(store: Path) -> dict[str, Any]:
    result = invoke(
        "run", "retail", "--agent", "baseline/reckless", "--epochs", "2",
        "--run-id", "reckless", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = invoke("report", "reckless", "--json", "--store", str(store))
    assert report.exit_code == 0, report.output
    parsed: dict[str, Any] = json.loads(report.stdout)
    return parsed


# --- validate ---------------------------------------------------------------------------------


def test_validate_retail_passes_every_shipped_task(tasks: list[DeskTask]) -> None:
    result = invoke("validate", "retail")
    assert result.exit_code == 0, result.output
    assert contains(result.output, f"{len(tasks)} of {len(tasks)} tasks pass")
    assert len(tasks) >= 60


def test_validate_retail_json_has_one_object_per_task(tasks: list[DeskTask]) -> None:
    result = invoke("validate", "retail", "--json")
    assert result.exit_code == 0, result.output
    lines = json_lines(result.stdout)
    assert [line["task"] for line in lines] == [t.id for t in tasks]
    for line, task in zip(lines, tasks, strict=True):
        assert set(line) >= {"task", "template", "gold_errors", "problems"}
        assert line["template"] == task.template
        assert line["gold_errors"] == []
        assert line["problems"] == []


def test_validate_reports_a_broken_task_and_fails(
    tasks: list[DeskTask], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = next(t for t in tasks if t.template == "cancel")
    bad_action = Action(
        name="cancel_pending_order", kwargs={"order_id": "#W0000000", "reason": "no longer needed"}
    )
    bad = good.model_copy(update={"id": "retail-bad-cancel", "actions": [bad_action]})
    monkeypatch.setattr(retail_benchmark, "builtin_tasks", lambda: [good, bad])

    result = invoke("validate", "retail")
    assert result.exit_code == 1, result.output
    assert contains(result.output, "1 of 2 tasks pass")
    assert contains(result.output, "retail-bad-cancel: gold action #0 cancel_pending_order fails")
    assert not contains(result.output, f"{good.id}:")

    result = invoke("validate", "retail", "--json")
    assert result.exit_code == 1
    lines = {line["task"]: line for line in json_lines(result.stdout)}
    assert set(lines) == {good.id, "retail-bad-cancel"}
    assert lines[good.id]["problems"] == []
    broken = lines["retail-bad-cancel"]
    assert broken["template"] == "cancel"
    (error,) = broken["gold_errors"]
    assert error["index"] == 0 and error["name"] == "cancel_pending_order"
    assert error["kwargs"]["order_id"] == "#W0000000"
    assert broken["problems"][0].startswith("gold action #0 cancel_pending_order fails: ")
    assert "the gold actions change nothing" in broken["problems"]


# --- run and report ------------------------------------------------------------------------------


def test_run_retail_with_the_oracle_prints_pass_hat_k(
    oracle_run: Result, tasks: list[DeskTask]
) -> None:
    output = oracle_run.output
    total = 2 * len(tasks)
    assert contains(output, f"starting run oracle: {total} of {total} episodes to run")
    assert contains(output, f"{total} scored, 0 errors")
    assert contains(output, "default pass^k of reward_verified: k=1: 100.0%  k=2: 100.0%")
    assert contains(output, "default pass^k of reward_tau: k=1: 100.0%  k=2: 100.0%")
    assert contains(output, "run id: oracle")


def test_report_json_of_the_oracle_run(
    oracle_run: Result, store: Path, tasks: list[DeskTask]
) -> None:
    result = invoke("report", "oracle", "--json", "--store", str(store))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["scored"] == 2 * len(tasks)
    (condition,) = summary["conditions"]
    overall = condition["overall"]["metrics"]
    assert overall["reward_tau"]["value"] == 1.0
    assert overall["reward_verified"]["value"] == 1.0
    for metric in ("reward_tau", "reward_verified"):
        curve = condition["pass_hat_k"][metric]
        assert [(p["k"], p["value"], p["tasks"]) for p in curve] == [
            (1, 1.0, len(tasks)),
            (2, 1.0, len(tasks)),
        ]


def test_report_json_carries_both_rewards_per_template(
    reckless_report: dict[str, Any], tasks: list[DeskTask]
) -> None:
    (condition,) = reckless_report["conditions"]
    groups = {g["group"]: g for g in condition["by"]["template"]}
    assert set(groups) == {t.template for t in tasks}
    for template, group in groups.items():
        mine = [t for t in tasks if t.template == template]
        assert group["episodes"] == 2 * len(mine)
        writes = any(t.writes for t in mine)
        assert group["metrics"]["reward_tau"]["value"] == 1.0, template
        assert group["metrics"]["reward_verified"]["value"] == (0.0 if writes else 1.0), template
        assert group["metrics"]["reward_verified"]["n"] == 2 * len(mine)


def test_report_json_carries_both_rewards_overall_and_pass_hat_k(
    reckless_report: dict[str, Any], tasks: list[DeskTask]
) -> None:
    (condition,) = reckless_report["conditions"]
    share = sum(not t.writes for t in tasks) / len(tasks)
    overall = condition["overall"]
    assert overall["episodes"] == 2 * len(tasks)
    assert overall["metrics"]["reward_tau"]["value"] == 1.0
    assert overall["metrics"]["reward_verified"]["value"] == pytest.approx(share)
    assert overall["outcomes"] == {
        "pass": 2 * sum(not t.writes for t in tasks),
        "pass_tau_broke_procedure": 2 * sum(t.writes for t in tasks),
    }
    verified = condition["pass_hat_k"]["reward_verified"]
    assert [p["k"] for p in verified] == [1, 2]
    assert [p["value"] for p in verified] == pytest.approx([share, share])
    assert [p["value"] for p in condition["pass_hat_k"]["reward_tau"]] == [1.0, 1.0]


def test_report_of_the_reckless_run_prints_pass_hat_k(
    store: Path, reckless_report: dict[str, Any]
) -> None:
    result = invoke("report", "reckless", "--store", str(store))
    assert result.exit_code == 0, result.output
    value = reckless_report["conditions"][0]["pass_hat_k"]["reward_verified"][0]["value"]
    assert contains(result.output, f"default pass^k of reward_verified: k=1: {100 * value:.1f}%")
    assert contains(result.output, "default pass^k of reward_tau: k=1: 100.0%  k=2: 100.0%")


def test_compare_puts_both_rewards_and_pass_hat_k_side_by_side(
    oracle_run: Result, reckless_report: dict[str, Any], store: Path, tasks: list[DeskTask]
) -> None:
    args = ["compare", "oracle", "reckless", "--wide", "--store", str(store)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "250"})  # every column in one row
    assert result.exit_code == 0, result.output
    assert "pass^2" in result.output and contains(result.output, "[sample boot]")
    share = 100 * sum(not t.writes for t in tasks) / len(tasks)
    rows = result.output.splitlines()
    reckless = next(row for row in rows if row.startswith("reckless  default"))
    # verified (its intervals carry no %), ..., procedure_ok last
    rates = re.findall(r"\d+\.\d%", reckless)
    assert rates[0] == f"{share:.1f}%" and rates[-1] == f"{share:.1f}%"
    # reward_tau, its pass^2, then reward_verified's pass^2
    assert rates[1:4] == ["100.0%", "100.0%", f"{share:.1f}%"]
    data = json.loads(
        invoke("compare", "oracle", "reckless", "--json", "--store", str(store)).stdout
    )
    (versus,) = data["versus_first_run"]
    assert versus["difference"]["clusters"] == len(tasks)
    assert versus["mcnemar"]["b10"] == 2 * sum(t.writes for t in tasks)
