"""Scripted fake models that play a benchmark through the fake servers.

They read the request exactly as a provider would receive it, in either protocol,
so a whole run can go through a real SDK and real sockets without a model.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from deedbench.testing.fake_server import Reply

__all__ = ["by_model", "tac_player", "tau2_agent", "tau2_judge", "tau2_user"]

_Player = Callable[[dict[str, Any]], Reply]

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


def by_model(players: Mapping[str, _Player]) -> _Player:
    """One endpoint serving several models, as a local server does: each request is
    answered by the player of the model it names (an agent, a simulated user and a judge
    on one server)."""

    def respond(body: dict[str, Any]) -> Reply:
        model = str(body.get("model"))
        if model not in players:
            return Reply(status=404, error_message=f"no model {model!r} on this server")
        return players[model](body)

    return respond


def tau2_agent(body: dict[str, Any]) -> Reply:
    """A τ² retail agent: looks something up once (a tool every retail task has), then
    says it is done (the customer ends the conversation)."""
    if any(m.get("role") == "tool" for m in body.get("messages", [])):
        return Reply(text="I have looked into it; is there anything else?")
    return Reply(tool_calls=[("list_all_product_types", {})])


def tau2_user(body: dict[str, Any]) -> Reply:
    """τ²'s simulated customer: says why it called, then ends the conversation with τ²'s
    stop token once the agent has answered."""
    spoken = [m for m in body.get("messages", []) if m.get("role") == "assistant"]
    if not spoken:
        return Reply(text="Hi, I would like some help with my order.")
    return Reply(text="Thanks, that is all. ###STOP###")


def tau2_judge(body: dict[str, Any]) -> Reply:
    """τ²'s NL judge: finds every expected outcome met, in τ²'s reply format (the
    outcomes read from the list its prompt ends with)."""
    text = "".join(
        str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "user"
    )
    _, _, rest = text.rpartition("expectedOutcomes:")
    try:
        outcomes = ast.literal_eval(rest.strip())
    except (ValueError, SyntaxError):
        outcomes = []
    results = [
        {"expectedOutcome": str(o), "reasoning": "met", "metExpectation": True}
        for o in (outcomes if isinstance(outcomes, list) else [])
    ]
    return Reply(text=json.dumps({"results": results}))
