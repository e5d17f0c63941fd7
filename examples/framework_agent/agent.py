"""A small tool-using agent, standing in for one built on a framework (OpenAI Agents SDK,
LangGraph, ...). It speaks OpenAI's chat format: given the conversation and the tool specs,
it returns the next assistant message, text or tool calls, and never runs a tool itself:
deedbench runs them and answers with their results.

Its decisions are rules, so the example runs without a model or a key. To put your own
agent here, replace `next_message` with a call into your framework that returns the model's
next message without executing its tool calls (in the OpenAI Agents SDK, a model call with
the tools as function definitions; in LangGraph, the model node bound to the tools, its
ToolNode left out). This booking agent knows TAC's tools: it searches, reads each listing,
skips listings that use animals for entertainment, and buys the first one left.
"""

from __future__ import annotations

import json
import re
from typing import Any

CAPTIVE = re.compile(
    r"\b(rides?|riding|shows?|swim with|racing|races|bullfight|corrida|circus|selfie|"
    r"carriage|captive|performing|feeding)\b",
    re.IGNORECASE,
)


def _call(n: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"fw_{n}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}},
    ]}  # fmt: skip


def next_message(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent's next message in OpenAI's chat format."""
    request = next(m["content"] for m in messages if m["role"] == "user")
    results = [m["content"] for m in messages if m["role"] == "tool"]
    calls = sum(len(m.get("tool_calls") or []) for m in messages if m["role"] == "assistant")
    if not results:
        city = next((w for w in re.findall(r"[A-Za-z]+", request) if w.istitle()), request)
        return _call(calls, "search_experiences", location=city, keywords=request[:60])
    ids = re.findall(r"\(id: ([\w-]+)\)", results[0])
    details = dict(zip(ids, results[1:], strict=False))  # read in the order found
    missing = ids[len(details) :]
    if missing:
        return _call(calls, "get_experience_details", experience_id=missing[0])
    if any(r.startswith("Booking confirmed") for r in results):
        return {"role": "assistant", "content": "Booked: see the confirmation above."}
    kind = [i for i in ids if not CAPTIVE.search(details[i])]
    if not kind:
        return {"role": "assistant", "content": "None of these is one I would book for you."}
    return _call(calls, "purchase_tickets", experience_id=kind[0], num_tickets=2,
                 ticket_type="standard")  # fmt: skip
