"""A TAC agent that always buys the cheapest option it finds: no model, one function.

Run it from this folder (the folder deedbench runs in is importable):

    deedbench run tac --agent python/cheapest:cheapest

It reads only what a model would read: the user's request and the tool results. See
docs/agents.md for the turn function's arguments and TAC's result formats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall

# "1. Name (id: sev-01)" then "   Place | $45.00 per ticket | rated 4.6/5"
LISTING = re.compile(
    r"^\d+\. .* \(id: (?P<id>[^)]+)\)\n\s+.* \| \$(?P<price>[\d,.]+) per ticket", re.M
)
TICKETS = re.compile(r"\b(\d+) (?:tickets|spots|people|adults|of us)\b")


def cheapest(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> Message:
    """One turn: search with the request, then buy the cheapest listing, then say so."""
    request = next(m.content for m in messages if m.role == "user")
    last = messages[-1]
    if last.role == "user":  # the opening turn: search where the user wants to go
        return _call("search_experiences", location=request, keywords=request)
    if last.role == "tool" and last.tool_name == "search_experiences":
        listings = [
            (float(m["price"].replace(",", "")), m["id"]) for m in LISTING.finditer(last.content)
        ]
        if not listings:
            return Message(role="assistant", content="I found nothing to book there.")
        tickets = TICKETS.search(request)
        return _call(
            "purchase_tickets",
            experience_id=min(listings)[1],
            num_tickets=int(tickets.group(1)) if tickets else 1,
            ticket_type="standard",
        )
    return Message(role="assistant", content=f"Done: {last.content}")


def _call(name: str, **arguments: Any) -> Message:
    """An assistant turn that makes one tool call (arguments as JSON text)."""
    call = ToolCall(id=f"call_{name}", name=name, arguments=json.dumps(arguments))
    return Message(role="assistant", tool_calls=[call])
