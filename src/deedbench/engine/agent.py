"""The two parties an episode's loop talks to: the agent under test and a simulated user.

`Agent` is the one protocol every agent implements, model-backed or not; `User` is what a
benchmark may give the loop to play the other side of the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from deedbench.errors import InfrastructureError, Interrupted
from deedbench.records import Message, Termination

__all__ = ["Agent", "AgentContext", "User", "failure"]


@dataclass(frozen=True)
class AgentContext:
    """What an agent may know about the episode it is in, besides the conversation."""

    sample_id: str
    condition: str
    epoch: int
    seed: int
    tool_choice: str | None = None
    """What a model's request asks of its tools when it has some, as the benchmark's
    reference sends it (τ²: ``"auto"``; its solo agent: ``"required"``); None: nothing is
    sent and the provider's default applies. A model agent sends it in its protocol's
    form; ``-M tool_choice=...`` overrides it."""


class Agent(Protocol):
    """Given the conversation and the tool specs, return the next assistant message.

    The one protocol every agent implements, model-backed or not. Raise
    `InfrastructureError` for failures that are not the agent's own doing.
    """

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message: ...


class User(Protocol):
    """A simulated user: answers the agent, or returns None to end the conversation.

    A user whose `finished` attribute is true after a reply ends the conversation
    with that reply kept (an LLM user's goodbye carrying its stop token).
    """

    async def reply(self, messages: Sequence[Message]) -> Message | None: ...


def failure(exc: InfrastructureError) -> Termination:
    """How a party's infrastructure failure ends an episode: `INTERRUPTED` when whoever
    played it from outside stopped it, else `INFRASTRUCTURE_ERROR`."""
    if isinstance(exc, Interrupted):
        return Termination.INTERRUPTED
    return Termination.INFRASTRUCTURE_ERROR
