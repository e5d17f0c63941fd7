"""τ²'s simulated users: a model playing the customer by τ²'s guidelines, and a script.

`Tau2LLMUser` is τ²'s user simulator on any deedbench model: its system prompt is
τ²'s (the guidelines file from τ²'s data, the tools variant when the user has
tools, then the task's scenario), it sees the conversation from the customer's
side (the agent's text as the other party's, its own messages and tool calls as
its turns, its tools' results), it may call its own tools, and it ends the
conversation with ``###STOP###``, ``###TRANSFER###`` or ``###OUT-OF-SCOPE###``.

`ScriptedTau2User` plays the customer for the baselines: it states why it called,
agrees when asked to confirm, and performs the task's gold user actions on its
device when the agent names them, one at a time; otherwise it says it is done.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deedbench.benchmarks.tau2.tasks import GoldAction, StructuredInstructions, Tau2Task
from deedbench.engine import Agent, AgentContext, ToolBox
from deedbench.errors import BenchmarkError
from deedbench.files import read_text
from deedbench.records import Message, ToolCall

__all__ = [
    "STOP_TOKENS",
    "USER_STOP",
    "ScriptedTau2User",
    "Tau2LLMUser",
    "guidelines",
    "is_user_stop",
    "user_prompt",
]

USER_STOP = "###STOP###"
STOP_TOKENS = (USER_STOP, "###TRANSFER###", "###OUT-OF-SCOPE###")


def is_user_stop(message: Message) -> bool:
    """τ²'s rule: a user message without tool calls whose text holds a stop token."""
    return not message.tool_calls and any(token in message.content for token in STOP_TOKENS)


def guidelines(data_root: Path, with_tools: bool) -> str:
    """τ²'s user-simulator guidelines, from the ``user_simulator`` folder of τ²'s data."""
    name = "simulation_guidelines_tools.md" if with_tools else "simulation_guidelines.md"
    path = data_root / "user_simulator" / name
    if not path.is_file():
        raise BenchmarkError(
            f"τ²'s user-simulator guidelines are not at {path}: the model-played user needs "
            "τ²'s data folder whole (data/tau2, with user_simulator/ beside domains/)"
        )
    return read_text(path)


def user_prompt(guidelines_text: str, task: Tau2Task) -> str:
    """τ²'s user system prompt: the guidelines (no persona additions), then the scenario."""
    text = guidelines_text.replace("<PERSONA_GUIDELINES>", "")
    return f"{text}\n\n<scenario>\n{task.user_scenario}\n</scenario>"


class Tau2LLMUser:
    """A model playing τ²'s customer; `finished` once it wrote a stop token."""

    def __init__(
        self,
        model: Agent,
        prompt: str,
        context: AgentContext,
        tools: ToolBox[Any] | None = None,
    ) -> None:
        self.model = model
        self.prompt = prompt
        self.context = context
        self.specs = tools.specs() if tools is not None else []
        self.finished = False

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        flipped = [Message(role="system", content=self.prompt)]
        for message in messages:
            if message.role == "assistant" and not message.tool_calls:
                flipped.append(Message(role="user", content=message.content))
            elif message.role == "user":
                flipped.append(
                    Message(
                        role="assistant", content=message.content, tool_calls=message.tool_calls
                    )
                )
            elif message.role == "tool" and message.requestor == "user":
                flipped.append(message.model_copy(update={"requestor": None}))
        turn = await self.model.next_turn(flipped, self.specs, self.context)
        reply = Message(
            role="user",
            content=turn.content,
            tool_calls=turn.tool_calls,
            usage=turn.usage,
            truncated_by=turn.truncated_by,
        )
        self.finished = is_user_stop(reply)
        return reply


def _reason(task: Tau2Task) -> str:
    instructions = task.user_scenario.instructions
    if isinstance(instructions, StructuredInstructions):
        return instructions.reason_for_call.strip().splitlines()[0]
    return str(instructions).strip().splitlines()[0]


class ScriptedTau2User:
    """The baselines' customer: says why it called, confirms, performs its gold actions."""

    def __init__(self, task: Tau2Task) -> None:
        self.task = task
        self.pending: list[GoldAction] = [a for a in task.gold if a.requestor == "user"]
        self.finished = False
        self._calls = 0
        self._opening = 1 + len(task.history())  # the system prompt, the task's own opening

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        last = messages[-1]
        if last.role == "tool":  # the result of the user's own call
            return Message(role="user", content=f"Done. My phone says: {last.content}")
        said = [m for m in messages[self._opening :] if m.role == "user" and not m.tool_calls]
        if not said and not (last.content.rstrip().endswith("?") and self._opening > 1):
            return Message(role="user", content=_reason(self.task))
        if self.pending and self.pending[0].name in last.content:
            return self._act(self.pending.pop(0))
        if last.content.rstrip().endswith("?"):
            return Message(role="user", content="Yes, please go ahead.")
        self.finished = True
        return Message(role="user", content=f"Thank you, that is all. {USER_STOP}")

    def _act(self, action: GoldAction) -> Message:
        self._calls += 1
        call = ToolCall.decoded(f"user_call_{self._calls}", action.name, dict(action.arguments))
        return Message(role="user", content="", tool_calls=[call])
