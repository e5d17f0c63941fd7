"""τ²'s NL judge: the prompt deedbench reads from τ²'s source equal to τ²'s own text (as
τ²'s f-string makes it), deedbench's own wording without a source, and the verdicts
carried from the episode's end into τ²'s reward."""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from deedbench.agents.function import FunctionAgent
from deedbench.benchmarks.tau2.judge import judge_messages, parse_verdicts
from deedbench.benchmarks.tau2.source import OWN_PROMPTS, Tau2Source, load_texts
from deedbench.engine import AgentContext, run_episode
from deedbench.errors import InfrastructureError
from deedbench.records import Message, ToolCall

from . import _reference
from .mock_benchmark import MockTau2Benchmark

SOURCE = _reference.SOURCE / "tau2" / "evaluator" / "evaluator_nl_assertions.py"
needs_source = pytest.mark.reference("tau2")


def _tau2_prompts() -> tuple[str, ast.JoinedStr]:
    tree = ast.parse(SOURCE.read_text(encoding="utf-8"))
    system: str | None = None
    user: ast.JoinedStr | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name == "system_prompt" and isinstance(node.value, ast.Constant):
                system = node.value.value
            if name == "user_prompt" and isinstance(node.value, ast.JoinedStr):
                user = node.value
    assert system is not None and user is not None
    return system, user


def _judged(bench: MockTau2Benchmark) -> Any:
    """The mock task with NL assertions, judged on them too (no mock task's basis says so)."""
    task = bench.tasks["create_task_1_nl_eval"]
    assert task.evaluation_criteria is not None and task.evaluation_criteria.nl_assertions
    task.evaluation_criteria.reward_basis.append("NL_ASSERTION")
    assert task.needs_judge
    return next(s for s in bench.samples() if s.id == task.id)


@needs_source
def test_the_prompt_is_tau2s_to_the_character() -> None:
    system, user_template = _tau2_prompts()
    prompts = load_texts(Tau2Source(_reference.SOURCE / "tau2", "given")).prompts
    assert prompts.judge_system == system
    messages = [
        Message(role="assistant", content="Hi! How can I help you today?"),
        Message(role="user", content="Cancel it, please."),
        Message(role="assistant", content="", tool_calls=[ToolCall.decoded("c", "cancel", {})]),
        Message(role="tool", content="done", tool_call_id="c"),
    ]
    assertions = ["The agent cancels the order", "The agent says goodbye"]
    trajectory_str = "\n".join(
        [
            "assistant: Hi! How can I help you today?",
            "user: Cancel it, please.",
            "assistant: None",
            "tool: done",
        ]
    )
    code = compile(ast.Expression(body=user_template), "<τ²>", "eval")
    expected = eval(code, {"trajectory_str": trajectory_str, "nl_assertions": assertions})
    sent = judge_messages(messages, assertions, prompts)
    assert [m.role for m in sent] == ["system", "user"]
    assert sent[0].content == system and sent[1].content == expected
    own = judge_messages(messages, assertions)  # no source: deedbench's own words
    assert own[0].content == OWN_PROMPTS.judge_system != system
    assert "user: Cancel it, please." in own[1].content and str(assertions) in own[1].content


def test_an_answer_not_in_the_format_is_the_judges_failure() -> None:
    good = parse_verdicts(
        json.dumps(
            {"results": [{"expectedOutcome": "x", "reasoning": "r", "metExpectation": False}]}
        ),
        ["x"],
    )
    assert [(c.nl_assertion, c.met, c.justification) for c in good] == [("x", False, "r")]
    with pytest.raises(InfrastructureError, match="not a verdict"):
        parse_verdicts("I think it went well", ["x"])


@pytest.mark.reference("tau2")
@pytest.mark.parametrize("met", [True, False])
def test_the_judges_verdicts_decide_the_reward_and_are_kept(met: bool) -> None:
    bench = MockTau2Benchmark({"data": str(_reference.DATA), "judge": "python/judge:J"})
    asked: list[Sequence[Message]] = []

    sample = _judged(bench)
    criteria = bench.tasks[sample.id].evaluation_criteria
    assert criteria is not None

    def judge(messages: Sequence[Message], tools: Any, context: Any) -> str:
        asked.append(messages)
        rows = [
            {"expectedOutcome": a, "reasoning": "read it", "metExpectation": met}
            for a in criteria.nl_assertions or []
        ]
        return json.dumps({"results": rows})

    bench.use_judge_model(FunctionAgent(judge))
    oracle = bench.baselines()["oracle"]()
    transcript = asyncio.run(
        run_episode(oracle, bench.setup(sample, "default", 0), AgentContext(sample.id, "d", 0, 0))
    )
    assert len(asked) == 1 and asked[0][0].content == _tau2_prompts()[0]
    score = bench.score(sample, transcript)
    assert score.values["reward"] == float(met)
    assert score.values["judged"] == 1.0
    assert score.details is not None
    assert score.details["reward_info"]["nl_assertions"][0]["justification"] == "read it"


@pytest.mark.reference("tau2")
def test_without_a_judge_the_task_needs_one() -> None:
    bench = MockTau2Benchmark({"data": str(_reference.DATA)})
    sample = _judged(bench)
    oracle = bench.baselines()["oracle"]()
    transcript = asyncio.run(
        run_episode(oracle, bench.setup(sample, "default", 0), AgentContext(sample.id, "d", 0, 0))
    )
    score = bench.score(sample, transcript)
    assert score.outcome == "needs_judge"
    assert "reward" not in score.values and score.values["needs_judge"] == 1.0
