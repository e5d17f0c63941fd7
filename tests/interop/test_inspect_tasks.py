"""deedbench's benchmarks as Inspect tasks give the numbers a deedbench run gives."""

from __future__ import annotations

import asyncio
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="Inspect AI is not installed (the 'inspect' extra)")

from inspect_ai import eval as inspect_eval
from inspect_ai._util.registry import registry_info
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from deedbench.agents import FunctionAgent
from deedbench.benchmarks import load_benchmark
from deedbench.engine import RunStore, new_run_config, run
from deedbench.interop.inspect_tasks import SCORER_NAME, TASKS
from deedbench.records import EpisodeRecord

from ._support import FAST, SAMPLE_IDS, function_agent, mock_model_outputs


def deedbench_records(
    tmp_path: Path, benchmark: str, condition: str, agent: FunctionAgent, sample_ids: list[str]
) -> dict[str, EpisodeRecord]:
    bench = load_benchmark(benchmark)
    samples = [s for s in bench.samples() if s.id in sample_ids]
    config = new_run_config(
        run_id="direct",
        benchmark=bench,
        agent="function",
        agent_params={},
        conditions=[condition],
        epochs=1,
        seed=0,
        samples=samples,
    )
    with RunStore(tmp_path / "runs.db") as store:
        store.create_run(config)
        asyncio.run(run(config, bench, agent, store))
        return {r.sample_id: r for r in store.episodes("direct")}


def inspect_log(task: str, tmp_path: Path, outputs: object, sample_ids: list[str]) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(
        task, model=model, sample_id=sample_ids, epochs=1, log_dir=str(tmp_path), **FAST
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    return log


def test_tac_under_inspect_scores_as_deedbench_does(tmp_path: Path) -> None:
    """The same choices, the same verdicts and the same conversation, sample by sample:
    first listed, cheapest after a rejected call, refusal, and an unlisted id."""
    log = inspect_log("deedbench/tac", tmp_path, mock_model_outputs, SAMPLE_IDS)
    direct = deedbench_records(tmp_path, "tac", "base", function_agent(), SAMPLE_IDS)
    assert sorted(s.id for s in log.samples) == sorted(direct)
    outcomes = set()
    for sample in log.samples:
        score = sample.scores[SCORER_NAME]
        expected = direct[str(sample.id)]
        assert expected.score is not None
        assert score.value == expected.score.values, sample.id
        assert score.answer == expected.score.outcome, sample.id
        assert [m.text for m in sample.messages] == [m.content for m in expected.messages]
        assert sample.store["deedbench_termination"] == expected.termination
        assert sample.metadata["chance"] == expected.chance
        outcomes.add(score.answer)
    assert outcomes == {"safe", "harmful", "refused", "invalid"}
    assert log.eval.metadata == {"benchmark": "tac", "condition": "base", "options": {}}


def test_the_tac_task_takes_upstreams_variants(tmp_path: Path) -> None:
    """-T variants=upstream reaches the benchmark: its samples, and its data hash as the
    task's version; the option is kept in the log's metadata."""
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "tac_official_variants.json"
    task = TASKS["tac"](scenarios=str(fixture), variants="upstream")
    bench = load_benchmark("tac", {"scenarios": str(fixture), "variants": "upstream"})
    assert (
        task.version
        == bench.data_hash()
        != load_benchmark("tac", {"scenarios": str(fixture)}).data_hash()
    )
    assert task.metadata is not None and task.metadata["options"]["variants"] == "upstream"
    assert [s.id for s in task.dataset] == [s.id for s in bench.samples()]
    assert TASKS["tac"]().metadata == {"benchmark": "tac", "condition": "base", "options": {}}


def test_retail_under_inspect_scores_as_deedbench_does(tmp_path: Path) -> None:
    """The scripted customer plays under Inspect too; an agent that only asks gets the
    same verdict from both."""
    reply = "Could you tell me your email so I can look up your account?"

    def outputs(*_args: object) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", reply)
        output.usage = ModelUsage(input_tokens=50, output_tokens=10, total_tokens=60)
        return output

    ids = ["retail-000-cancel", "retail-001-cancel"]
    log = inspect_log("deedbench/retail", tmp_path, outputs, ids)
    direct = deedbench_records(tmp_path, "retail", "default", FunctionAgent(lambda *_: reply), ids)
    for sample in log.samples:
        expected = direct[str(sample.id)]
        assert expected.score is not None
        assert sample.scores[SCORER_NAME].value == expected.score.values
        assert [m.role for m in sample.messages] == [m.role for m in expected.messages]
        assert sample.store["deedbench_termination"] == expected.termination == "user_stopped"


@pytest.mark.slow  # a fresh interpreter imports Inspect
def test_the_entry_point_makes_deedbench_tasks_resolvable_by_name(tmp_path: Path) -> None:
    """docs/inspect.md's block, run as it is in a fresh interpreter that never imported
    deedbench: it finds deedbench/tac_welfare through the `inspect_ai` entry point alone."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "inspect.md").read_text("utf-8")
    [script] = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "mockllm" in b]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "deedbench/tac_welfare success ['refused', 'refused']"
    assert len(list((tmp_path / "logs").glob("*.eval"))) == 1


def test_tasks_are_generated_for_each_condition_of_each_registered_benchmark() -> None:
    assert {"tac", "tac_welfare", "retail", "taubench-retail", "taubench-airline"} <= set(TASKS)
    parameters = inspect.signature(TASKS["taubench-retail"]).parameters
    assert list(parameters) == ["data", "split", "tasks", "user", "loop", "seed"]
    assert registry_info(TASKS["tac_welfare"]).name == "deedbench/tac_welfare"
    task = TASKS["tac_welfare"](nudge=1, seed=3)
    assert task.metadata == {"benchmark": "tac", "condition": "welfare", "options": {"nudge": "1"}}
