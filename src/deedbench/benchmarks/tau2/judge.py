"""τ²'s NL-assertion judge, on any deedbench model: τ²'s prompt, τ²'s reply format.

τ² asks a model (``gpt-4.1-2025-04-14`` at temperature 0 by default) whether the
agent met each of a task's assertions, showing it the whole trajectory as
``role: content`` lines, and reads its JSON answer
(``{"results": [{"expectedOutcome", "reasoning", "metExpectation"}]}``). The prompt is
τ²'s, read from the user's τ² source (`Tau2Prompts`), because the verdict is part of
the reward; without a source, deedbench's own wording asks for the same answer (and
the run says so). The judge is asked
once per episode, at its end, through the same client, cache, retries and cost
accounting as the agent; its verdicts are stored with the record, so a rescore asks
no model. Its reply is read strictly (`parse_verdicts`): exactly the assertions asked,
each with a boolean, or it is asked again and, after `JUDGE_ATTEMPTS`, the episode is an
infrastructure error; τ²'s lenient reading stays an option (`JUDGE_READINGS`).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import replace

from deedbench.benchmarks.tau2.reward import NLAssertionCheck
from deedbench.benchmarks.tau2.source.prompts import OWN_PROMPTS, Tau2Prompts
from deedbench.engine import Agent, AgentContext
from deedbench.errors import InfrastructureError
from deedbench.records import Message, Usage

__all__ = [
    "DEFAULT_JUDGE",
    "JUDGE_ATTEMPTS",
    "JUDGE_READINGS",
    "judge_messages",
    "parse_verdicts",
    "run_judge",
    "trajectory_text",
]

DEFAULT_JUDGE = "openai/gpt-4.1-2025-04-14"
"""τ²'s own judge model, as a deedbench model spec."""


def __getattr__(name: str) -> str:
    """``SYSTEM_PROMPT`` used to hold τ²'s judge prompt: it is read from the user's τ²
    source now (`Tau2Prompts.judge_system`); this gives deedbench's own wording."""
    if name == "SYSTEM_PROMPT":
        warnings.warn(
            "deedbench.benchmarks.tau2.judge.SYSTEM_PROMPT is deprecated and holds "
            "deedbench's own wording: τ²'s is read from the user's τ² source "
            "(Tau2Benchmark.texts.prompts.judge_system)",
            DeprecationWarning,
            stacklevel=2,
        )
        return OWN_PROMPTS.judge_system
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def trajectory_text(messages: Sequence[Message]) -> str:
    """The trajectory as τ²'s judge reads it: ``role: content`` per message, a message
    of tool calls only showing ``None`` as its content, as τ²'s does."""
    lines = []
    for message in messages:
        content = message.content if message.content or not message.tool_calls else None
        lines.append(f"{message.role}: {content}")
    return "\n".join(lines)


def judge_messages(
    messages: Sequence[Message], assertions: list[str], prompts: Tau2Prompts = OWN_PROMPTS
) -> list[Message]:
    """The judge's prompt for one trajectory, in `prompts`' words (τ²'s, read from its
    source, in a run that has it)."""
    system, user = prompts.judge_prompt(trajectory_text(messages), assertions)
    return [Message(role="system", content=system), Message(role="user", content=user)]


JUDGE_READINGS = ("strict", "lenient")
"""How a judge's reply is read. ``strict`` (deedbench's default): the reply must answer
exactly the assertions asked, each once, with a boolean; anything else is the judge's
error. ``lenient``: τ²'s own reading, kept to reproduce τ²'s behaviour: whatever results
the JSON holds, ``metExpectation`` coerced to a boolean by pydantic (``"yes"`` and ``1``
count as met), so that ``{}`` or ``{"results": []}`` meets every assertion."""

JUDGE_ATTEMPTS = 3
"""How often the judge is asked before a reply that is not a verdict makes the episode an
infrastructure error (kept out of every rate, judged again on resume)."""


def parse_verdicts(
    text: str, assertions: Sequence[str], reading: str = "strict"
) -> list[NLAssertionCheck]:
    """The judge's reply read (`reading`: see `JUDGE_READINGS`): the verdicts, in the order
    the `assertions` were asked. A reply that is not a verdict on exactly those assertions
    raises `InfrastructureError`: the judge's failure, never a score."""
    if reading == "lenient":
        return _lenient(text)
    if reading != "strict":
        raise ValueError(f"unknown judge reading {reading!r}: one of {', '.join(JUDGE_READINGS)}")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise _not_verdict(f"it is not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise _not_verdict('it holds no list "results"')
    wanted = {_same(a): a for a in assertions}
    found: dict[str, NLAssertionCheck] = {}
    for number, item in enumerate(data["results"]):
        if not isinstance(item, dict):
            raise _not_verdict(f"result {number} is no object")
        outcome, met = item.get("expectedOutcome"), item.get("metExpectation")
        reasoning = item.get("reasoning", "")
        if not isinstance(outcome, str) or _same(outcome) not in wanted:
            raise _not_verdict(f"result {number} answers {outcome!r}, which was not asked")
        if _same(outcome) in found:
            raise _not_verdict(f"result {number} answers {outcome!r} a second time")
        if not isinstance(met, bool):
            raise _not_verdict(f"result {number} gives metExpectation {met!r}, not true or false")
        if not isinstance(reasoning, str):
            raise _not_verdict(f"result {number} gives reasoning {reasoning!r}, not text")
        found[_same(outcome)] = NLAssertionCheck(
            nl_assertion=wanted[_same(outcome)], met=met, justification=reasoning
        )
    missing = [a for key, a in wanted.items() if key not in found]
    if missing:
        raise _not_verdict(f"it answers none for {missing}")
    return [found[_same(a)] for a in assertions]


def _lenient(text: str) -> list[NLAssertionCheck]:
    """τ²'s reading (``evaluator_nl_assertions``): every result as it stands."""
    try:
        data = json.loads(text)
        return [
            NLAssertionCheck(
                nl_assertion=item["expectedOutcome"],
                met=item["metExpectation"],
                justification=item["reasoning"],
            )
            for item in data.get("results", [])
        ]
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise _not_verdict(str(exc)) from None


def _same(text: str) -> str:
    """An assertion as a reply may repeat it: its words, whatever the spacing."""
    return " ".join(text.split())


def _not_verdict(why: str) -> InfrastructureError:
    return InfrastructureError(
        f"the judge's answer is not a verdict on the assertions asked: {why}"
    )


async def run_judge(
    model: Agent,
    messages: Sequence[Message],
    assertions: list[str],
    context: AgentContext,
    prompts: Tau2Prompts = OWN_PROMPTS,
    *,
    reading: str = "strict",
    attempts: int = JUDGE_ATTEMPTS,
) -> tuple[list[NLAssertionCheck], Usage | None, int]:
    """Ask `model` for the verdicts, again (a fresh request each time) while its reply is
    not a verdict, at most `attempts` times; the verdicts, the usage of every attempt, and
    how many were made. After the last, `InfrastructureError`."""
    prompt = judge_messages(messages, assertions, prompts)
    usage: Usage | None = None
    for attempt in range(1, attempts + 1):
        asked = (
            context
            if attempt == 1
            else replace(context, sample_id=f"{context.sample_id}:again{attempt}")
        )
        answer = await model.next_turn(prompt, [], asked)
        if answer.usage is not None:
            usage = answer.usage if usage is None else usage + answer.usage
        try:
            return parse_verdicts(answer.content, assertions, reading), usage, attempt
        except InfrastructureError as exc:
            if attempt == attempts:
                raise InfrastructureError(f"{exc} (after {attempts} attempts)") from None
    raise AssertionError("unreachable")
