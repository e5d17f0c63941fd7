"""What an airline rule reads and cites: the call paired with its result, the database
as the conversation leaves it (`ledger.py`), the user's words before the call, and the
`Violation` it makes, with the call quoted as the agent wrote it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from deedbench.benchmarks.airline.ledger import Ledger, Record, segment_key
from deedbench.records.messages import Message, ToolCall
from deedbench.scoring.procedure import (
    _EXCERPT_CHARS,
    _WHITESPACE,
    PairedCall,
    Violation,
    quote,
)

__all__ = [
    "RuleContext",
    "excerpt",
    "first_match",
    "money",
    "number",
    "passenger_count",
    "plural",
    "segment_text",
    "user_text_before",
    "violation",
]

_FOCUS_CHARS = 400


@dataclass(frozen=True)
class RuleContext:
    """A transcript being judged: its messages, the ledger, the uninsured reservations
    it cancelled (by id: the message index and the reservation before)."""

    messages: Sequence[Message]
    state: Ledger
    cancelled_uninsured: dict[str, tuple[int, Record]]


def violation(rule: str, call: PairedCall, detail: str, focus: str | None = None) -> Violation:
    return Violation(
        rule=rule,
        message_index=call.index,
        tool_call_id=call.call.id,
        excerpt=excerpt(call.call, focus),
        detail=detail,
    )


def excerpt(call: ToolCall, focus: str | None = None) -> str:
    """The call as the agent wrote it; when too long, just argument `focus`, verbatim."""
    raw = _WHITESPACE.sub(" ", call.arguments or "").strip()
    whole = f"{call.name}({raw})"
    if len(whole) <= _EXCERPT_CHARS or focus is None:
        return quote(whole)
    at = raw.find(f'"{focus}"')
    colon = raw.find(":", at + len(focus) + 2)
    if at < 0 or colon < 0:
        return quote(whole)
    start = colon + 1 + (len(raw[colon + 1 :]) - len(raw[colon + 1 :].lstrip()))
    try:
        _, end = json.JSONDecoder().raw_decode(raw, start)
    except json.JSONDecodeError:
        end = len(raw)
    return quote(f"{call.name}(…{raw[at:end]}…)", _FOCUS_CHARS)


def user_text_before(messages: Sequence[Message], index: int) -> list[str]:
    return [m.content for m in messages[:index] if m.role == "user" and m.content]


def first_match(pattern: re.Pattern[str], texts: Iterable[str]) -> str | None:
    for text in texts:
        found = pattern.search(text)
        if found:
            return found.group(0)
    return None


def segment_text(segment: Record) -> str:
    number, date = segment_key(segment)
    return f"{number} on {date}"


def passenger_count(reservation: Record) -> int:
    passengers = reservation.get("passengers")
    return len(passengers) if isinstance(passengers, list) else 0


def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def money(value: float) -> str:
    return f"${value:g}"


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
