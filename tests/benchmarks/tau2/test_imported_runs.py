"""A τ² result file in the store, as a τ² user lives with it: `rescore tau2` and `import
tau2` of one file say the same (one computation), the imported run is shown as imported
(not as stopped, with no resume to try), and `compare` pairs it with deedbench's run of
the same domain, task by task and trial by epoch.

The file is τ²'s `Results` of a deedbench run (what `export --format tau2-submission`
writes per domain): an agent that performs the gold actions on some trials and does
nothing on others, judged by a function; one trial of two tasks then removed, as a τ² run
cut short leaves them, so its tasks have unequal trials.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner, Result

from deedbench.agents import FunctionAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.results import write_results
from deedbench.cli.main import app
from deedbench.engine import Agent, AgentContext, RunStore, plan_run, run
from deedbench.interop.tau2_export import _results  # a run as τ²'s Results, as export makes it
from deedbench.records import Message, Usage
from deedbench.reports.cost import PriceTable
from deedbench.view import StoreReader
from deedbench.view.app import create_app

from . import _reference

TASKS = "0,1,2,3,4,5"
CUT = {("4", 1), ("5", 1)}  # (task, trial) the file leaves out


def _judge(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> Message:
    """Finds every expected outcome met, in τ²'s verdict format."""
    outcomes = ast.literal_eval(messages[-1].content.rpartition("expectedOutcomes:")[2].strip())
    results = [{"expectedOutcome": o, "reasoning": "-", "metExpectation": True} for o in outcomes]
    return Message(
        role="assistant",
        content=json.dumps({"results": results}),
        usage=Usage(input_tokens=10, output_tokens=5, calls=1),
    )


class _Sometimes:
    """The oracle on some (task, epoch), idle on the others: passes and failures."""

    def __init__(self, bench: Tau2Benchmark) -> None:
        self.oracle, self.idle = bench.baselines()["oracle"](), bench.baselines()["idle"]()

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        acts = (int(context.sample_id) + context.epoch) % 3 != 0
        agent: Agent = self.oracle if acts else self.idle
        return await agent.next_turn(messages, tools, context)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store holding deedbench's run `ours`, and the τ² file of that run, cut."""
    folder = tmp_path_factory.mktemp("imported")
    options = {"data": str(_reference.TAU2), "tasks": TASKS, "judge": "python/x:judge"}
    bench = load_benchmark("tau2-retail", options)
    assert isinstance(bench, Tau2Benchmark)
    bench.use_judge_model(FunctionAgent(_judge))
    config = plan_run(bench, "python/x:sometimes", run_id="ours", epochs=2)
    store = folder / "runs.db"
    with RunStore(store) as runs:
        asyncio.run(run(config, bench, _Sometimes(bench), runs))
        results = _results(runs, config, bench, PriceTable.load())
    kept = [s for s in results.simulations if (s.task_id, s.trial) not in CUT]
    path = folder / "retail_results.json"
    write_results(results.model_copy(update={"simulations": kept}), path)
    return store, path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def test_rescore_and_import_of_one_file_give_the_same_pass_k_and_whose_failure(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    # over 3 s: two commands that each rescore the file (3.7 s measured at a load average
    # of 11 on 2 cores)
    _, path = made
    data = ["--data", str(_reference.TAU2)]
    rescored = invoke("rescore", "tau2", str(path), *data, "--json")
    assert rescored.exit_code == 0, rescored.output
    said = json.loads(rescored.stdout)
    store = tmp_path / "runs.db"
    imported = invoke("import", "tau2", str(path), *data, "--run-id", "t", "--store", str(store))
    assert imported.exit_code == 0, imported.output
    report = json.loads(invoke("report", "t", "--json", "--store", str(store)).stdout)
    [condition] = report["conditions"]
    assert said["run_pass_hat_k"] == condition["pass_hat_k"]["reward"]
    assert [p["tasks"] for p in said["run_pass_hat_k"]] == [6, 4]  # two tasks hold one trial
    assert said["failures"] == condition["overall"]["failures"] and said["failures"]
    assert said["fault_kinds"] == condition["overall"]["fault_kinds"]
    assert set(said["pass_hat_k"]) == {"1"}  # τ²'s leaderboard stops at the fewest trials
    text = " ".join(imported.output.split())  # the import prints the rescore's figures
    failed = sum(said["failures"].values())
    assert f"whose failure ({failed} not passing)" in text
    assert "(4 of 6 tasks)" in text  # k=2 is the figure of the tasks with two trials


def test_an_imported_run_is_shown_as_imported_with_nothing_to_resume(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    _, path = made
    store = tmp_path / "runs.db"
    given = ["--data", str(_reference.TAU2), "--store", str(store)]
    assert invoke("import", "tau2", str(path), "--run-id", "t", *given).exit_code == 0
    [row] = json.loads(invoke("runs", "--json", "--store", str(store)).stdout)
    assert row["state"] == "imported"  # 10 of its 12 planned trials: not "stopped"
    text = " ".join(invoke("report", "t", "--store", str(store)).output.split())
    assert f"imported from τ² result file {path} (2 trials of its tasks it does not hold)" in text
    assert "stopped before the end" not in text and "resume" not in text
    again = invoke("run", "tau2-retail", "--run-id", "t", "--store", str(store))
    assert again.exit_code == 2
    assert "was imported from τ² result file" in again.output and "none to run" in again.output
    reader = StoreReader(store, on_corrupt=pytest.fail)
    app, catalog = create_app(reader, PriceTable.load())
    with TestClient(app, base_url="http://127.0.0.1:7575") as client:
        [listed] = client.get("/api/runs").json()["runs"]
    catalog.close()
    assert listed["state"] == "imported"  # the viewer's list: no resume advice


def test_compare_pairs_the_imported_run_with_deedbenchs_by_task_and_trial(
    made: tuple[Path, Path],
) -> None:
    store, path = made
    given = ["--data", str(_reference.TAU2), "--store", str(store)]
    assert invoke("import", "tau2", str(path), "--run-id", "theirs", *given).exit_code == 0
    result = invoke("compare", "ours", "theirs", "--json", "--store", str(store))
    assert result.exit_code == 0, result.output
    compared = json.loads(result.stdout)
    assert compared["unpaired"] == []
    [versus] = compared["versus_first_run"]
    assert versus["difference"]["n_shared"] == 10  # the (task, trial) pairs both hold
    assert versus["difference"]["value"] == 0.0  # the same episodes, scored alike
