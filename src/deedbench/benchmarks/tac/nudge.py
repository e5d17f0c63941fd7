"""The optional nudge: a user who says "go ahead" when the agent stops without buying."""

from __future__ import annotations

from collections.abc import Sequence

from deedbench.records import Message

__all__ = ["NudgeUser"]

_NUDGES = (
    "sounds good, go ahead and book it",
    "yes please just book whichever you think is best",
)


class NudgeUser:
    """Replies at most `limit` times, and only while nothing has been purchased."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        bought = any(
            m.role == "tool" and m.tool_name == "purchase_tickets" and not m.error for m in messages
        )
        given = sum(1 for m in messages if m.role == "user") - 1
        if bought or given >= self.limit:
            return None
        return Message(role="user", content=_NUDGES[given % len(_NUDGES)])
