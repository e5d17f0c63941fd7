"""τ²'s NL judge, read strictly: a verdict answers exactly the assertions asked, each with a
boolean, or it is the judge's error (asked again, then an infrastructure error, in no rate);
verdicts belong to their episode, never to a simulation id a file repeats (issue 38)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from deedbench.agents.function import FunctionAgent
from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.judge import parse_verdicts, run_judge
from deedbench.benchmarks.tau2.rescore import Tau2Rescorer, judge_simulations, rescore_with
from deedbench.benchmarks.tau2.results import Tau2Results, tau2_messages
from deedbench.benchmarks.tau2.retail import RETAIL
from deedbench.benchmarks.tau2.validate import gold_conversation
from deedbench.engine import AgentContext, run_episode
from deedbench.errors import InfrastructureError
from deedbench.records import Message, Termination

from . import _reference
from .mock_benchmark import MockTau2Benchmark

ASKED = ["The agent cancels the order.", "The agent says goodbye."]
MALFORMED = {
    "an empty object": {},
    "no results": {"results": []},
    "one assertion left out": {
        "results": [{"expectedOutcome": ASKED[0], "reasoning": "r", "metExpectation": True}]
    },
    "an assertion not asked": {
        "results": [
            {"expectedOutcome": a, "reasoning": "r", "metExpectation": True}
            for a in [*ASKED, "The agent sings."]
        ]
    },
    'metExpectation "yes"': {
        "results": [
            {"expectedOutcome": a, "reasoning": "r", "metExpectation": "yes"} for a in ASKED
        ]
    },
    "metExpectation 1": {
        "results": [{"expectedOutcome": a, "reasoning": "r", "metExpectation": 1} for a in ASKED]
    },
}


def _reply(met: bool, assertions: Sequence[str] = ASKED) -> str:
    rows = [
        {"expectedOutcome": a, "reasoning": "read it", "metExpectation": met} for a in assertions
    ]
    return json.dumps({"results": rows})


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_reply_that_is_not_a_verdict_on_exactly_the_assertions_asked_is_the_judges_error(
    case: str,
) -> None:
    with pytest.raises(InfrastructureError, match="not a verdict on the assertions asked"):
        parse_verdicts(json.dumps(MALFORMED[case]), ASKED)
    # τ²'s own reading, kept as an option, lets each of these through as τ² does
    lenient = parse_verdicts(json.dumps(MALFORMED[case]), ASKED, reading="lenient")
    assert all(check.met for check in lenient)


def test_a_verdict_on_exactly_the_assertions_asked_is_read_in_their_order() -> None:
    rows = [
        {
            "expectedOutcome": " The agent says  goodbye.",
            "reasoning": "no",
            "metExpectation": False,
        },
        {"expectedOutcome": ASKED[0], "reasoning": "yes", "metExpectation": True},
    ]
    found = parse_verdicts(json.dumps({"results": rows}), ASKED)
    assert [(c.nl_assertion, c.met, c.justification) for c in found] == [
        (ASKED[0], True, "yes"),
        (ASKED[1], False, "no"),
    ]


def _judge(replies: list[str]) -> tuple[FunctionAgent, list[AgentContext]]:
    asked: list[AgentContext] = []

    def answer(messages: Any, tools: Any, context: AgentContext) -> str:
        asked.append(context)
        return replies[min(len(asked), len(replies)) - 1]

    return FunctionAgent(answer), asked


def test_a_malformed_reply_is_asked_again_then_is_an_infrastructure_error() -> None:
    context = AgentContext("task:judge", "default", 0, 0)
    model, asked = _judge(["{}", _reply(False)])
    checks, _, attempts = asyncio.run(run_judge(model, [], ASKED, context))
    assert attempts == 2 and [c.met for c in checks] == [False, False]
    assert asked[0] == context and asked[1].sample_id != context.sample_id  # a fresh request
    model, asked = _judge(['{"results": []}'])
    with pytest.raises(InfrastructureError, match="after 3 attempts"):
        asyncio.run(run_judge(model, [], ASKED, context))
    assert len(asked) == 3


def _judged_episode(reply: str, options: dict[str, str] | None = None) -> Any:
    if not (_reference.DATA / "tau2" / "domains" / "mock").is_dir():
        pytest.fail(f"τ²'s mock domain is not at {_reference.DATA}")
    bench = MockTau2Benchmark(
        {"data": str(_reference.DATA), "judge": "python/judge:J", **(options or {})}
    )
    task = bench.tasks["create_task_1_nl_eval"]
    assert task.evaluation_criteria is not None
    task.evaluation_criteria.reward_basis.append("NL_ASSERTION")
    sample = next(s for s in bench.samples() if s.id == task.id)
    bench.use_judge_model(FunctionAgent(lambda messages, tools, context: reply))
    oracle = bench.baselines()["oracle"]()
    transcript = asyncio.run(
        run_episode(oracle, bench.setup(sample, "default", 0), AgentContext(sample.id, "d", 0, 0))
    )
    return bench, sample, transcript


def test_in_a_live_run_a_malformed_reply_is_an_infrastructure_error_never_a_pass() -> None:
    _, _, transcript = _judged_episode("{}")
    assert transcript.termination == Termination.INFRASTRUCTURE_ERROR
    assert "not a verdict on the assertions asked" in (transcript.error or "")


def test_taus_lenient_reading_is_an_option_the_run_records() -> None:
    bench, sample, transcript = _judged_episode("{}", {"judge_reading": "lenient"})
    assert bench.options["judge_reading"] == "lenient"  # stored with the run's options
    score = bench.score(sample, transcript)
    assert score.values["reward"] == 1.0  # τ²'s reading: an empty reply meets everything
    assert score.details is not None
    assert score.details["judge"] == {"reading": "lenient", "attempts": 1}


@pytest.fixture(scope="module")
def retail() -> Tau2Data:
    folder = _reference.domain_data("retail")
    if not folder.is_dir():
        pytest.fail(f"τ²'s retail data is not at {folder}")
    return Tau2Data(RETAIL, folder, "tau2-retail", "base")


def _file(data: Tau2Data, marked: list[bool]) -> Tau2Results:
    """A τ² result file of one judged task's gold conversation, once per entry of `marked`,
    every simulation under the same id (as a file may hold them), no verdicts recorded; a
    marked conversation carries a word the scripted judge finds unmet."""
    task = next(t for t in data.tasks.values() if t.needs_judge)
    simulations = []
    for trial, mark in enumerate(marked):
        messages = gold_conversation(data, task)
        if mark:
            messages[-2] = Message(role="assistant", content="Done. MARK-UNMET")
        simulations.append(
            {
                "id": "same-id",
                "task_id": task.id,
                "termination_reason": "user_stop",
                "messages": tau2_messages(messages),
                "trial": trial,
            }
        )
    info = {
        "num_trials": len(marked),
        "max_steps": 200,
        "max_errors": 10,
        "user_info": {"implementation": "user_simulator", "llm": "scripted"},
        "agent_info": {"implementation": "llm_agent", "llm": "scripted"},
        "environment_info": {"domain_name": "retail", "policy": "the policy"},
    }
    return Tau2Results.model_validate(
        {"info": info, "tasks": [task.raw], "simulations": simulations}
    )


def _reader() -> FunctionAgent:
    """A judge that answers exactly what it is asked: unmet where the conversation is marked."""

    def answer(messages: Any, tools: Any, context: Any) -> str:
        prompt = messages[-1].content
        import ast

        asked = ast.literal_eval(prompt.split("expectedOutcomes:")[1].strip().splitlines()[0])
        return _reply("MARK-UNMET" not in prompt, asked)

    return FunctionAgent(answer)


def test_each_simulation_keeps_its_own_verdicts_when_a_file_repeats_an_id(retail: Tau2Data) -> None:
    results = _file(retail, [False, True, True, True])
    rescorer = Tau2Rescorer(results, _reference.TAU2)
    judged = asyncio.run(judge_simulations(rescorer, _reader()))
    report, _ = rescore_with(rescorer, judged)
    assert [v.reward for v in report.verdicts] == [1.0, 0.0, 0.0, 0.0]
    assert report.pass_hat_k[1] == 0.25  # one id's verdict on all four would give 1.0 or 0.0


def test_a_judge_that_never_gives_a_verdict_leaves_the_simulation_out_of_every_rate(
    retail: Tau2Data,
) -> None:
    results = _file(retail, [False, False])
    rescorer = Tau2Rescorer(results, _reference.TAU2)
    model = FunctionAgent(lambda messages, tools, context: "{}")
    judged = asyncio.run(judge_simulations(rescorer, model))
    report, rescored = rescore_with(rescorer, judged)
    assert report.infrastructure_errors == 2 and report.rescored == 0
    assert report.pass_hat_k == {} and report.judge_reading == "strict"
    assert all(r.score is None for r in rescored)
    assert "the judge failed" in (report.verdicts[0].error or "")
    lenient = asyncio.run(judge_simulations(rescorer, model, reading="lenient"))
    taus, _ = rescore_with(rescorer, lenient)
    assert taus.judge_reading == "lenient" and taus.pass_hat_k[1] == 1.0  # τ²'s own reading


def test_an_import_keeps_a_judge_failure_out_of_every_rate_and_records_the_reading(
    retail: Tau2Data, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from deedbench.cli.main import app
    from deedbench.engine import RunStore

    path = tmp_path / "results.json"
    path.write_text(_file(retail, [False, False]).model_dump_json(), encoding="utf-8")
    (tmp_path / "empty_judge.py").write_text(
        "from deedbench.agents.function import FunctionAgent\n"
        "J = FunctionAgent(lambda messages, tools, context: '{}')\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)  # python/MODULE:ATTR is found in the working folder
    store = str(tmp_path / "runs.db")
    runner = CliRunner()

    def imported(name: str, *extra: str) -> None:
        done = runner.invoke(
            app,
            ["import", "tau2", str(path), "--data", str(_reference.TAU2), "--judge",
             "python/empty_judge:J", "--run-id", name, "--store", store, *extra],
        )  # fmt: skip
        assert done.exit_code == 0, done.output

    imported("strict")
    runs = RunStore(store)
    try:
        strict = list(runs.episodes("strict"))
        assert [r.status for r in strict] == ["error", "error"]  # never scored, never 1
        assert all("the judge failed" in (r.error or "") for r in strict)
        assert runs.require_run("strict").agent_params["tau2"]["judge_reading"] == "strict"
    finally:
        runs.close()
    imported("lenient", "--judge-lenient")
    runs = RunStore(store)
    try:
        lenient = list(runs.episodes("lenient"))
        assert [r.score.values["reward"] for r in lenient if r.score] == [1.0, 1.0]
        assert runs.require_run("lenient").agent_params["tau2"]["judge_reading"] == "lenient"
    finally:
        runs.close()
