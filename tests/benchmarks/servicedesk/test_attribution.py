"""Failure attribution on service desks: injected faults found exactly, clean controls never
blamed, τ-bench's own gpt-4o airline records attributed failure by failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.taubench import rescore_file

from ._faults import cases

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"


@pytest.fixture(scope="module")
def labelled() -> list:
    return cases(tasks=6)


CAUSED = {"early_stop", "refused_wanted", "output_unsupported"}
"""The injected faults that fail the oracle's episode; the others fail nothing."""


def test_every_injected_fault_that_fails_the_episode_is_its_cause(labelled: list) -> None:
    wrong = [
        (c.name, c.task, c.injected, c.found)
        for c in labelled
        if c.found != (c.injected if c.name in CAUSED else set())
    ]
    assert not wrong, wrong
    assert {c.name for c in labelled} >= {"early_stop", "invented_detail", "refused_wanted"}


def test_a_fault_that_fails_nothing_is_seen_and_gives_no_party(labelled: list) -> None:
    harmless = [c for c in labelled if c.injected and c.name not in CAUSED]
    assert {c.name for c in harmless} == {"invented_detail", "gold_raises"}
    assert all(c.party is None and c.injected <= c.seen for c in harmless)


def test_clean_controls_are_never_blamed_on_the_user_or_the_task(labelled: list) -> None:
    controls = [c for c in labelled if not c.injected]
    assert controls and all(c.found == set() for c in controls)
    idle = [c for c in controls if c.name == "idle agent"]
    assert idle and all(c.party == "agent" for c in idle)  # its failure is its own
    assert all(c.party is None for c in controls if c.name == "clean")


def test_a_failure_is_put_on_whoever_is_at_fault(labelled: list) -> None:
    parties = {c.name: c.party for c in labelled if c.party is not None}
    assert parties["early_stop"] == "user" and parties["refused_wanted"] == "user"
    assert parties["output_unsupported"] == "task"
    stopped = next(c for c in labelled if c.name == "early_stop")
    assert stopped.attribution is not None
    fault = next(f for f in stopped.attribution.faults if f.kind == "user.early_stop")
    assert fault.cause and "orders[" in fault.excerpt  # what the stop left different


@pytest.mark.reference("taubench")
def test_every_failure_of_taus_gpt4o_airline_records_is_attributed() -> None:
    report = rescore_file(
        SHARED / "trajectories" / "gpt-4o-airline.json",
        [SHARED / "trajectories" / "airline-2024-11", SHARED / "airline"],
        AIRLINE,
    )
    failed = [v for v in report.verdicts if v.reward_tau == 0.0]
    assert len(failed) == 116 == sum(report.failures.values())
    assert all(v.attribution is not None and v.attribution.party for v in failed)
    for verdict in failed:
        assert verdict.attribution is not None
        causes = [f for f in verdict.attribution.faults if f.cause]
        assert causes and all(f.excerpt for f in causes)
    # a regression figure, not a measure (bench/attribution.py measures it against labels)
    assert report.failures == {"agent": 104, "task": 6, "user": 6}
    passing = [v for v in report.verdicts if v.reward_tau == 1.0]
    assert passing and all(v.attribution is None or v.attribution.party is None for v in passing)
    # issue 38: a made-up email no call used is no cause; nor is task 1's gold cancellation,
    # whose reason (the user is unwell and insured) the policy allows
    assert not any(
        f.cause and f.kind == "user.invented_detail"
        for v in failed
        for f in (v.attribution.faults if v.attribution else [])
    )
    task_1 = [v for v in failed if v.task_id == 1]
    assert task_1 and all(v.attribution and v.attribution.party == "agent" for v in task_1)


@pytest.mark.reference("taubench")
def test_reports_show_both_rates_whose_failure_and_a_comparison_without_the_faults(
    tmp_path: Path,
) -> None:
    """τ-bench's retail test split: 19 tasks carry a gold action that raises. The idle agent
    fails every task that needs a change, and those failures are its own: a raising gold
    action changes nothing the reward reads and excuses nothing (issue 38), so the agent's
    own rate sets nothing aside; the faults found are still counted."""
    import json

    from typer.testing import CliRunner

    from deedbench.cli.main import app

    store = str(tmp_path / "runs.db")
    runner = CliRunner()
    for agent in ("oracle", "idle"):
        done = runner.invoke(
            app,
            ["run", "taubench-retail", "--data", str(SHARED / "retail"), "--agent",
             f"baseline/{agent}", "--run-id", agent, "--store", store, "-q"],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
    report = json.loads(runner.invoke(app, ["report", "idle", "--json", "--store", store]).output)
    overall = report["conditions"][0]["overall"]
    tau, agents = overall["metrics"]["reward_tau"], overall["metrics"]["reward_tau_agent"]
    kinds = overall["fault_kinds"]
    assert kinds["task.gold_raises"] == 19 and kinds["agent.action_not_done"] == 104
    assert tau["n"] == agents["n"] == 115  # nothing set aside: every failure is the agent's
    assert sum(overall["failures"].values()) == tau["n"] - tau["k"]  # every failure attributed
    assert overall["failures"] == {"agent": 108}
    text = " ".join(runner.invoke(app, ["report", "idle", "--store", store]).output.split())
    assert "default whose failure (108 not passing): agent 108" in text
    compared = json.loads(
        runner.invoke(app, ["compare", "oracle", "idle", "--json", "--store", store]).output
    )
    [all_of_them] = compared["versus_first_run"]
    [agents_own] = compared["versus_first_run_agent"]
    assert all_of_them["difference"]["n_shared"] == 115
    # the oracle's one failure (task 64: its scripted customer says no to the gold's change
    # until the steps run out) is set aside as the customer's
    assert agents_own["difference"]["n_shared"] == 114
