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
no model.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence

from deedbench.benchmarks.tau2.reward import NLAssertionCheck
from deedbench.benchmarks.tau2.source.prompts import OWN_PROMPTS, Tau2Prompts
from deedbench.engine import Agent, AgentContext
from deedbench.errors import InfrastructureError
from deedbench.records import Message

__all__ = [
    "DEFAULT_JUDGE",
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
    model: Agent,
    messages: Sequence[Message],
    assertions: list[str],
    context: AgentContext,
    prompts: Tau2Prompts = OWN_PROMPTS,
) -> tuple[list[NLAssertionCheck], Message]:
    """Ask `model` for the verdicts; also the answer, which carries its usage."""
    answer = await model.next_turn(judge_messages(messages, assertions, prompts), [], context)
    return parse_verdicts(answer.content), answer
