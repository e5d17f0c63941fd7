"""Baselines for τ²'s tasks, which need no model: what each one scores says what the
scoring rewards.

- `Tau2Oracle` follows the task's gold actions in order: its own calls it makes
  (asking the customer to confirm each write first, naming what it changes), the
  customer's it asks the customer to perform on their device, naming the action;
  then it says the task's ``communicate_info`` and stops. In solo mode it makes
  every call itself and ends with the stop tool.
- ``reckless`` is the oracle without the confirmations: τ²'s reward cannot tell
  them apart; the procedure verdicts can.
- `Tau2Idle` says it cannot help, and stops.

Each is an `Agent` that reads its place in the task from the conversation, so a
resumed or replayed episode continues where it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from deedbench.benchmarks.tau2.tasks import GoldAction, Tau2Task
from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall

__all__ = ["AGENT_STOP", "Tau2Idle", "Tau2Oracle"]

AGENT_STOP = "###STOP###"


@dataclass(frozen=True)
class _Step:
    kind: Literal["call", "ask", "request", "say"]
    text: str = ""
    action: GoldAction | None = None


class Tau2Oracle:
    """The gold trajectory, spoken as an agent."""

    def __init__(
        self,
        task_of: Callable[[str], Tau2Task],
        writes: Callable[[str], bool],
        *,
        ask_first: bool = True,
        solo: bool = False,
    ) -> None:
        self.task_of = task_of
        self.writes = writes
        self.ask_first = ask_first
        self.solo = solo

    def plan(self, task: Tau2Task) -> list[_Step]:
        steps: list[_Step] = []
        for action in task.gold:
            if action.requestor == "user" and not self.solo:
                steps.append(
                    _Step(
                        "request",
                        f"Please perform {action.name} on your device"
                        f"{_with(action)}, and tell me what it shows.",
                    )
                )
                continue
            if self.ask_first and not self.solo and self.writes(action.name):
                steps.append(
                    _Step(
                        "ask", f"I am going to run {action.name}{_with(action)}. Shall I proceed?"
                    )
                )
            steps.append(_Step("call", action=action))
        criteria = task.evaluation_criteria
        infos = list(criteria.communicate_info or []) if criteria is not None else []
        closing = " ".join(["All done.", *infos])
        steps.append(_Step("say", f"{closing} {AGENT_STOP}"))
        return steps

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        task = self.task_of(context.sample_id)
        steps = self.plan(task)
        done = sum(1 for m in messages if m.role == "assistant") - _opening(task, self.solo)
        if done >= len(steps):
            return Message(role="assistant", content=AGENT_STOP)
        step = steps[max(done, 0)]
        if step.kind == "call":
            assert step.action is not None
            if self.solo and done == len(steps) - 2:
                pass
            call = ToolCall.decoded(f"oracle_{done}", step.action.name, dict(step.action.arguments))
            return Message(role="assistant", content="", tool_calls=[call])
        if step.kind == "say" and self.solo:
            return Message(
                role="assistant",
                content="",
                tool_calls=[ToolCall.decoded("oracle_done", "done", {})],
            )
        return Message(role="assistant", content=step.text)


def _with(action: GoldAction) -> str:
    if not action.arguments:
        return ""
    named = ", ".join(f"{key}={value!r}" for key, value in action.arguments.items())
    return f" with {named}"


def _opening(task: Tau2Task, solo: bool) -> int:
    """The assistant messages the conversation starts with: the task's own opening, or
    τ²'s fixed greeting."""
    history = task.history()
    if history:
        return sum(1 for m in history if m.role == "assistant")
    return 0 if solo else 1


class Tau2Idle:
    """Never acts: says it cannot help and stops."""

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        return Message(
            role="assistant", content=f"I am sorry, I cannot help with that. {AGENT_STOP}"
        )
