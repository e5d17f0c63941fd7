"""τ²'s NL-assertion judge, on any deedbench model: τ²'s prompt, τ²'s reply format.

τ² asks a model (``gpt-4.1-2025-04-14`` at temperature 0 by default) whether the
agent met each of a task's assertions, showing it the whole trajectory as
``role: content`` lines, and reads its JSON answer
(``{"results": [{"expectedOutcome", "reasoning", "metExpectation"}]}``). The prompt
below is τ²'s, character for character (indentation included, which a test checks
against τ²'s source), because the verdict is part of the reward. The judge is asked
once per episode, at its end, through the same client, cache, retries and cost
accounting as the agent; its verdicts are stored with the record, so a rescore asks
no model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from deedbench.benchmarks.tau2.reward import NLAssertionCheck
from deedbench.engine import Agent, AgentContext
from deedbench.errors import InfrastructureError
from deedbench.records import Message

__all__ = [
    "DEFAULT_JUDGE",
    "SYSTEM_PROMPT",
    "judge_messages",
    "parse_verdicts",
    "run_judge",
    "trajectory_text",
]

DEFAULT_JUDGE = "openai/gpt-4.1-2025-04-14"
"""τ²'s own judge model, as a deedbench model spec."""

_PAD = " " * 8
_SYSTEM_LINES = (
    "TASK",
    "- You will be given a list of expected outcomes and a conversation that was collected "
    "during a test case run.",
    "- The conversation is between an agent and a customer.",
    "- Your job is to evaluate whether the agent satisfies each of the expected outcomes.",
    "- Grade each expected outcome individually.",
    None,
    "FORMAT",
    "- Your response should be a JSON object with the following fields:",
    "- `reasoning`: a short explanation for your classification",
    "- `metExpectation`: `true` if the agent satisfies the expected outcomes, `false` otherwise",
    "- `expectedOutcome`: repeat the expectation from the input that you are grading",
    "",
    "Example response structure:",
    "{",
    '    "results": [',
    "        {",
    '            "expectedOutcome": "<one of the expected outcomes from the input>",',
    '            "reasoning": "<reasoning trace>",',
    '            "metExpectation": <false or true>,',
    "        }",
    "    ]",
    "}",
    "",
)
"""The system prompt's lines; None is a line with no indentation at all."""


def _indented(lines: Sequence[str | None]) -> str:
    return "\n" + "\n".join("" if line is None else _PAD + line for line in lines)


SYSTEM_PROMPT = _indented(_SYSTEM_LINES)


def trajectory_text(messages: Sequence[Message]) -> str:
    """The trajectory as τ²'s judge reads it: ``role: content`` per message, a message
    of tool calls only showing ``None`` as its content, as τ²'s does."""
    lines = []
    for message in messages:
        content = message.content if message.content or not message.tool_calls else None
        lines.append(f"{message.role}: {content}")
    return "\n".join(lines)


def judge_messages(messages: Sequence[Message], assertions: list[str]) -> list[Message]:
    """The judge's prompt for one trajectory (τ²'s, word for word)."""
    user = (
        f"\n{_PAD}conversation:\n{_PAD}{trajectory_text(messages)}\n{_PAD}\n"
        f"{_PAD}expectedOutcomes:\n{_PAD}{assertions}\n{_PAD}"
    )
    return [Message(role="system", content=SYSTEM_PROMPT), Message(role="user", content=user)]


def parse_verdicts(text: str) -> list[NLAssertionCheck]:
    """The judge's answer read as τ² reads it; an answer that is no such JSON is the
    judge's failure (an infrastructure error: the episode is judged again on resume)."""
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
        raise InfrastructureError(f"the judge's answer is not τ²'s verdict format: {exc}") from None


async def run_judge(
    model: Agent, messages: Sequence[Message], assertions: list[str], context: AgentContext
) -> tuple[list[NLAssertionCheck], Message]:
    """Ask `model` for the verdicts; also the answer, which carries its usage."""
    answer = await model.next_turn(judge_messages(messages, assertions), [], context)
    return parse_verdicts(answer.content), answer
