"""Running an agent's turn as τ-bench does: its environment's `step` and its tool-calling agent.

τ-bench's tool-calling agent turns each model message into one action: the first
tool call, or, without one, a reply (``respond``) with the message's text. Its
environment runs the action on whatever arguments came:

- a tool is called as ``invoke(data=data, **arguments)``, and any exception it
  raises becomes the observation ``Error: <message>``;
- an unknown name gives ``Unknown action <name>``;
- a call named ``respond`` is a reply to the user (its ``content``);
- ``transfer_to_human_agents`` ends the episode whenever it is called, with valid
  arguments or not;
- arguments that are not a JSON object, a reply without text, or a tool that
  returns something other than text make τ-bench's run fail: the episode ends
  (`Termination.INVALID_ACTION`) and scores 0 under τ-bench's reward;
- so does a message whose text came as JSON null with no tool call (`content_null`):
  τ-bench's agent sends None to its user as a reply, and a model-played user's API
  refuses it. A recorded run that went on past one (its user took the None) is
  replayed with ``user_takes_null``; its reward then fails in τ-bench's outputs
  check instead, where that reply is reached (`tau_replies`).

`TauToolBox` does the same by default. With ``taubench_loop=False`` it keeps
τ-bench's tools and observations but follows deedbench's own loop: every call of
a turn runs, and a malformed call is an error the agent reads instead of the end
of the episode. The calls τ-bench's agent would have dropped stay in the
transcript as the turn's `dropped_tool_calls`, so the procedure rules still see them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Concatenate

from deedbench.benchmarks.servicedesk.task import Action
from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.engine import Tool, ToolBox, TurnOutcome
from deedbench.records import Message, Termination, ToolCall, answered_calls

__all__ = [
    "RESPOND",
    "TRANSFER_TOOL",
    "TauToolBox",
    "agent_replies",
    "conversation",
    "reply_content",
    "tau_replies",
]

RESPOND = "respond"
"""τ-bench's name for a reply; a tool call by that name is a reply too."""

TRANSFER_TOOL = "transfer_to_human_agents"
"""τ-bench's terminating tool."""


class _Fails(Exception):
    """The action makes τ-bench's own run fail; the text says why."""


class TauToolBox(ToolBox[DeskWorld]):
    """The tools of one τ-bench episode, run as τ-bench's environment runs them."""

    def __init__(
        self,
        tools: Iterable[Tool[Concatenate[DeskWorld, ...], Any]],
        state: DeskWorld,
        *,
        taubench_loop: bool = True,
        user_takes_null: bool = False,
    ) -> None:
        super().__init__(tools, state)
        self.taubench_loop = taubench_loop
        self.user_takes_null = user_takes_null

    def take_turn(self, turn: Message) -> TurnOutcome:
        if not turn.tool_calls:
            if self.taubench_loop and turn.content_null and not self.user_takes_null:
                return TurnOutcome(turn, ends=Termination.INVALID_ACTION)
            return TurnOutcome(turn, hands_over=True)
        calls = turn.tool_calls
        if self.taubench_loop and len(calls) > 1:
            turn = turn.model_copy(
                update={"tool_calls": calls[:1], "dropped_tool_calls": calls[1:]}
            )
            calls = calls[:1]
        outcome = TurnOutcome(turn)
        for call in calls:
            try:
                result, replied = self._step(call)
            except _Fails as failure:
                if not self.taubench_loop:
                    outcome.results.append(self._message(call, f"Error: {failure}", error=True))
                    continue
                outcome.results.append(
                    self._message(call, f"Error: {failure}; τ-bench's run stops here", error=True)
                )
                outcome.ends = Termination.INVALID_ACTION
                return outcome
            outcome.results.append(result)
            outcome.hands_over = outcome.hands_over or replied
            if call.name == TRANSFER_TOOL:
                self.ended_by = TRANSFER_TOOL
                outcome.ends = Termination.TRANSFERRED
        return outcome

    def call(self, call: ToolCall) -> Message:
        """One call on its own (a replay of gold actions): its observation, whatever it is."""
        try:
            return self._step(call)[0]
        except _Fails as failure:
            return self._message(call, f"Error: {failure}", error=True)

    def _step(self, call: ToolCall) -> tuple[Message, bool]:
        """The observation of one call, and whether it was a reply to the user."""
        arguments = _decode(call.arguments)
        if call.name == RESPOND:
            content = arguments.get("content")
            if not isinstance(content, str):
                raise _Fails("a reply must carry its text as the string 'content'")
            return self._message(call, "Your reply was sent to the user."), True
        found = self.tools.get(call.name)
        if found is None:
            return self._message(call, f"Unknown action {call.name}", error=True), False
        # by keyword, as τ-bench passes it (an argument named data then fails as it does
        # there); the tool's type only says the world comes first
        invoke: Callable[..., Any] = found.function
        try:
            observation = invoke(data=self.state, **arguments)
        except Exception as exc:  # τ-bench: every exception is the observation "Error: ..."
            return self._message(call, f"Error: {exc}", error=True), False
        if not isinstance(observation, str):
            raise _Fails(f"{call.name} returned {observation!r}, not text")
        return self._message(call, observation, error=observation.startswith("Error")), False

    @staticmethod
    def _message(call: ToolCall, content: str, *, error: bool = False) -> Message:
        return Message(
            role="tool", content=content, tool_call_id=call.id, tool_name=call.name, error=error
        )


def _decode(text: str) -> dict[str, Any]:
    """The arguments as τ-bench's agent reads them: ``json.loads``, which must give an object."""
    try:
        arguments = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise _Fails(f"the arguments are not valid JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise _Fails(f"the arguments must be a JSON object, not {type(arguments).__name__}")
    return arguments


def reply_content(call: ToolCall) -> str | None:
    """The text of a tool call named `respond`, which τ-bench takes for a reply."""
    if call.name != RESPOND:
        return None
    arguments = call.args
    content = arguments.get("content") if arguments is not None else None
    return content if isinstance(content, str) else None


def conversation(messages: Sequence[Message]) -> list[Message]:
    """The conversation as the user saw it: the user's messages and the agent's replies
    (as assistant messages holding only their text), in order.

    A reply is the text of an agent turn without tool calls, or a ``respond`` call
    the toolbox took as one (τ-bench's `respond` action). Text that came with a tool
    call is not a reply: the user never sees it, and τ-bench does not count it. A
    reply sent as JSON null keeps its `content_null`.
    """
    taken = {
        (a.index, a.position)
        for a in answered_calls(messages)
        if a.result is not None and a.result.tool_name == RESPOND and not a.result.error
    }
    seen: list[Message] = []
    for index, message in enumerate(messages):
        if message.role == "user":
            seen.append(message)
        elif message.role == "assistant" and not message.tool_calls:
            seen.append(
                Message(
                    role="assistant",
                    content=message.content,
                    content_null=message.content_null,
                )
            )
        elif message.role == "assistant":
            for position, call in enumerate(message.tool_calls):
                content = reply_content(call) if (index, position) in taken else None
                if content is not None:
                    seen.append(Message(role="assistant", content=content))
    return seen


def agent_replies(messages: Sequence[Message]) -> list[str]:
    """What the agent told the user, in order (see `conversation`)."""
    return [m.content for m in conversation(messages) if m.role == "assistant"]


def tau_replies(messages: Sequence[Message], gold: Sequence[Action]) -> list[str | None]:
    """The replies τ-bench's outputs check reads, in its order: the agent's (None for one
    sent as JSON null), then the ``respond`` actions among the task's gold actions, which
    τ-bench's gold replay takes as the agent's own (`Env.calculate_reward` steps them
    into the same list). A reply that is not text is None: τ-bench's check fails on it."""
    replies: list[str | None] = [
        None if m.content_null else m.content
        for m in conversation(messages)
        if m.role == "assistant"
    ]
    for action in gold:
        if action.name == RESPOND:
            content = action.kwargs.get("content")
            replies.append(content if isinstance(content, str) else None)
    return replies
