"""Replaying a list of gold actions on a fresh world, as τ-bench builds its gold state.

Every action except `respond` and `transfer_to_human_agents` runs in order through
the same ToolBox an agent uses; an action that fails returns an error, changes
nothing, and the replay goes on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from deedbench.benchmarks.retail.tasks import Action
from deedbench.benchmarks.retail.world import RetailWorld
from deedbench.engine import Message, Tool, ToolBox, ToolCall

__all__ = ["GoldError", "replay", "replay_transcript"]

SKIPPED = frozenset({"respond", "transfer_to_human_agents"})


class GoldError(BaseModel):
    """A gold action that returned an error, by its position in the task's list."""

    index: int
    name: str
    kwargs: dict[str, Any]
    error: str


def replay(
    base: dict[str, Any],
    actions: Sequence[Action],
    tools: Iterable[Tool],
    world_class: type[RetailWorld] = RetailWorld,
) -> tuple[RetailWorld, list[GoldError]]:
    world, errors, _ = replay_transcript(base, actions, tools, world_class)
    return world, errors


def replay_transcript(
    base: dict[str, Any],
    actions: Sequence[Action],
    tools: Iterable[Tool],
    world_class: type[RetailWorld] = RetailWorld,
) -> tuple[RetailWorld, list[GoldError], list[Message]]:
    """The replay, and the gold actions as a transcript of tool calls and results,
    for checking the procedure rules that need no dialogue."""
    world = world_class(base)
    box = ToolBox(tools, world)
    errors = []
    messages: list[Message] = []
    for index, action in enumerate(actions):
        if action.name == "respond":
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
                GoldError(index=index, name=action.name, kwargs=action.kwargs, error=result.content)
            )
    return world, errors, messages
