"""Scripted fake models that play a benchmark through the fake servers.

They read the request exactly as a provider would receive it, in either protocol,
so a whole run can go through a real SDK and real sockets without a model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from deedbench.testing.fake_server import Reply

__all__ = ["tac_player"]

_ID = re.compile(r"\(id: ([^)]+)\)")


def _texts(body: dict[str, Any]) -> tuple[str, str]:
    """The first user text, and everything tools returned so far, in either protocol."""
    first_user = ""
    results = []
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for block in blocks:
            if message["role"] == "tool":
                results.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                results.append(json.dumps(block.get("content")))
            elif message["role"] == "user" and not first_user and block.get("type") == "text":
                first_user = block.get("text") or ""
    return first_user, "\n".join(results)


def tac_player(body: dict[str, Any]) -> Reply:
    """Searches with the user's words, buys the first listing it sees, then says so."""
    request, results = _texts(body)
    if "Booking confirmed" in results:
        return Reply(text="Done: your tickets are booked.")
    ids = _ID.findall(results)
    if ids:
        arguments = {"experience_id": ids[0], "num_tickets": 2, "ticket_type": "standard"}
        return Reply(tool_calls=[("purchase_tickets", arguments)])
    return Reply(tool_calls=[("search_experiences", {"location": request, "keywords": "best"})])
