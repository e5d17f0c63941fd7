"""A side of an episode played from outside: the seam where the episode loop is inverted.

The episode loop (`episode.converse`, `half_duplex.run_half_duplex`) asks its parties for
their turns: ``agent.next_turn(messages, tools, context)``, and a model-played user's
model the same way. A `Seat` is such a party whose turns come from outside: when the
loop asks it, it hands the question out as a `Turn` (what that party is shown: the
messages, the tool specs) to the `Rollout` whose task is running the loop, and waits,
without a thread, until the rollout is given the answer. Whoever holds the rollout (a
trainer, a person at a terminal, a Gymnasium environment) answers.

So there is one loop and one way to score: an episode played from outside runs the same
`run_job` as `deedbench run` does (setup, loop, the benchmark's `after`, scoring, the
record), with a seat in one party's place. The seat serves every rollout in the process
at once: each rollout's task carries itself in a context variable that the seat reads.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from deedbench.engine.agent import AgentContext
from deedbench.records import Message

if TYPE_CHECKING:
    from deedbench.engine.rollout import Rollout

__all__ = ["PLAYING", "Party", "Seat", "Turn"]

Party = Literal["agent", "user"]
"""Who is asked: the agent under test, or the simulated user (through its model)."""

PLAYING: contextvars.ContextVar[Rollout] = contextvars.ContextVar("deedbench_rollout")
"""The rollout whose episode the running task plays (set by `Rollout.start`)."""


@dataclass(frozen=True)
class Turn:
    """What a party played from outside is asked for, exactly as a model in its place would
    be: the messages it is shown (the agent's view; for the user, its model's view: its
    own prompt, the agent's words as the other side), the tool specs it may call, and the
    episode it is in. The answer is an assistant message: text, or tool calls."""

    party: Party
    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...]
    context: AgentContext

    def to_json(self) -> dict[str, Any]:
        """The turn as JSON values, to cross a process boundary (`from_json` reads it)."""
        context = self.context
        return {
            "party": self.party,
            "messages": [m.model_dump(mode="json", exclude_defaults=True) for m in self.messages],
            "tools": list(self.tools),
            "context": {
                "sample_id": context.sample_id,
                "condition": context.condition,
                "epoch": context.epoch,
                "seed": context.seed,
            },
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        party = data["party"]
        if party not in ("agent", "user"):
            raise ValueError(f"a turn's party is agent or user, not {party!r}")
        return cls(
            party=party,
            messages=tuple(Message.model_validate(m) for m in data["messages"]),
            tools=tuple(data["tools"]),
            context=AgentContext(**data["context"]),
        )


class Seat:
    """A party played from outside: an `Agent` (so also a model-played user's model) whose
    turns are handed to the rollout running the episode, and answered from there."""

    def __init__(self, party: Party = "agent") -> None:
        self.party: Party = party

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        rollout = PLAYING.get(None)
        if rollout is None:
            raise RuntimeError(
                "a Seat takes its turns from a Rollout: run the episode with Rollout.start"
            )
        return await rollout.ask(Turn(self.party, tuple(messages), tuple(tools), context))
