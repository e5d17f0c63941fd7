"""Replaying on a fresh world: a task's gold actions, or the turns of a recorded conversation.

Both run through `TauToolBox`, the toolbox an episode of a τ-style desk uses, so
a replay changes the database exactly as the calls did (or would have) live:

- gold actions, as τ-bench builds its gold state: every action except ``respond``
  and ``transfer_to_human_agents``, in order; an action that fails gives an error
  observation and the replay goes on;
- recorded turns (a τ-bench result file being rescored): each assistant turn is
  taken as an episode takes it, first call only under τ-bench's loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from deedbench.benchmarks.servicedesk.task import Action
from deedbench.benchmarks.servicedesk.tau_toolbox import RESPOND, TRANSFER_TOOL, TauToolBox
from deedbench.benchmarks.servicedesk.world import DeskWorld, Tables
from deedbench.engine import Tool, TurnOutcome
from deedbench.records import Message, ToolCall

__all__ = [
    "SKIPPED",
    "FailedGoldAction",
    "replay",
    "replay_transcript",
    "replay_turns",
]

SKIPPED = frozenset({RESPOND, TRANSFER_TOOL})


class FailedGoldAction(BaseModel):
    """A gold action that returned an error, by its position in the task's list (a record,
    not an exception: the replay goes on)."""

    index: int
    name: str
    kwargs: dict[str, Any]
    error: str


def replay(
    base: Tables, actions: Sequence[Action], tools: Iterable[Tool[..., Any]]
) -> tuple[DeskWorld, list[FailedGoldAction]]:
    world, errors, _ = replay_transcript(base, actions, tools)
    return world, errors


def replay_transcript(
    base: Tables, actions: Sequence[Action], tools: Iterable[Tool[..., Any]]
) -> tuple[DeskWorld, list[FailedGoldAction], list[Message]]:
    """The replay, and the gold actions as a transcript of tool calls and results,
    for checking the procedure rules that need no dialogue."""
    world = DeskWorld(base)
    box = TauToolBox(tools, world)
    errors = []
    messages: list[Message] = []
    for index, action in enumerate(actions):
        if action.name == RESPOND:
            continue
        call = ToolCall(id=f"gold-{index}", name=action.name, arguments=json.dumps(action.kwargs))
        messages.append(Message(role="assistant", tool_calls=[call]))
        if action.name in SKIPPED:  # the hand-off changes nothing and is not replayed
            messages.append(Message(role="tool", tool_call_id=call.id, tool_name=call.name))
            continue
        result = box.call(call)
        messages.append(result)
        if result.error:
            errors.append(
                FailedGoldAction(
                    index=index, name=action.name, kwargs=action.kwargs, error=result.content
                )
            )
    return world, errors, messages


def replay_turns(
    base: Tables,
    messages: Sequence[Message],
    tools: Iterable[Tool[..., Any]],
    *,
    taubench_loop: bool = True,
) -> tuple[DeskWorld, list[Message], list[TurnOutcome]]:
    """Take every assistant turn of a recorded conversation on a fresh world, in order,
    until one ends the episode. Returns the world, the conversation as an episode would
    have recorded it (each turn followed by the results the replay gave; recorded tool
    messages are replaced by them), and what each turn gave. A reply recorded as JSON
    null does not end it: the record shows its run went on."""
    world = DeskWorld(base)
    box = TauToolBox(tools, world, taubench_loop=taubench_loop, user_takes_null=True)
    transcript: list[Message] = []
    outcomes = []
    for message in messages:
        if message.role == "tool":
            continue
        if message.role != "assistant":
            transcript.append(message)
            continue
        outcome = box.take_turn(message)
        outcomes.append(outcome)
        transcript += [outcome.turn, *outcome.results]
        if outcome.ends is not None:
            break
    return world, transcript, outcomes
