"""What a conversation shows of the simulated user, read without a model: a value they said
first, a stop while the agent was still at work, a user id they said they do not have.

Knows no benchmark. `scoring.causes` reads these to say who answers for a departure from
the gold actions; a benchmark passes its stop token and what a request names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from deedbench.records import Message
from deedbench.scoring.procedure import quote

__all__ = [
    "argument_values",
    "closes",
    "early_stop",
    "in_text",
    "named_values",
    "said_first_by_user",
    "stop_quote",
    "telling",
    "withheld_identity",
]

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")


def _numbers(text: str) -> set[float]:
    found = set()
    for token in _NUMBER.findall(text):
        try:
            found.add(float(token.replace(",", "")))
        except ValueError:
            continue
    return found


def telling(value: Any) -> bool:
    """A value a person could not guess by chance: a number, a code in capitals (``IAH``),
    or a string with a digit, an @ or an underscore, or of six characters or more."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"[A-Z0-9]{3,}", text):
            return True
        return bool(text) and (bool(re.search(r"[\d@_]", text)) or len(text) >= 6)
    return False


def in_text(value: Any, text: str) -> bool:
    """Whether `text` holds `value`: a number by value, a string ignoring case."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return float(value) in _numbers(text)
    if isinstance(value, str):
        if re.fullmatch(r"-?\d[\d,]*(?:\.\d+)?", value.strip()):
            return float(value.replace(",", "")) in _numbers(text)
        return value.lower() in text.lower()
    return False


def said_first_by_user(
    values: Iterable[Any], messages: Sequence[Message], before: int, instruction: str
) -> tuple[Any, int] | None:
    """A value the user brought into the conversation before message `before`: said in one
    of their messages before any agent message held it (the user never sees what a tool
    returns the agent), and not in their instruction. The first such value and the message
    that said it."""
    for value in values:
        if not telling(value) or in_text(value, instruction):
            continue
        for index, message in enumerate(messages[:before]):
            if message.role not in ("user", "assistant") or not message.content:
                continue
            if not in_text(value, message.content):
                continue
            if message.role == "user":
                return value, index
            break  # the agent said it first
    return None


def named_values(arguments: Any) -> list[Any]:
    """The values a request for a call would name: its arguments' numbers and texts (those
    inside a JSON text too), booleans and one-letter texts left out."""
    return [
        v
        for v in argument_values(arguments)
        if not isinstance(v, bool) and (not isinstance(v, str) or len(v.strip()) >= 2)
    ]


def argument_values(arguments: Any) -> list[Any]:
    """Every value of a call's arguments, flattened (a JSON text's inside too)."""
    if isinstance(arguments, dict):
        return [v for value in arguments.values() for v in argument_values(value)]
    if isinstance(arguments, list):
        return [v for value in arguments for v in argument_values(value)]
    if isinstance(arguments, str):
        try:
            inner = json.loads(arguments)
        except ValueError:
            return [arguments]
        if isinstance(inner, dict | list):
            return argument_values(inner)
    return [arguments]


_CLOSING = re.compile(
    r"\b(?:anything else|something else|anything more|further assist|other questions?"
    r"|help you with today|have a (?:great|nice|good|wonderful|safe)|good ?bye|bye\b|take care"
    r"|glad (?:i|to) (?:could )?help|you'?re welcome)",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:shall i|should i|would you like|do you want|go ahead|proceed|confirm|could you"
    r"|can you|would you|please (?:try|run|check|do|toggle|turn|tell|let me know|provide)"
    r"|let me know)\b",
    re.IGNORECASE,
)
_WORKING = re.compile(
    r"\b(?:one moment|just a moment|working on|let me (?:check|look|do|process|update|get)"
    r"|please (?:wait|hold)|i(?:'ll| will) now|i am (?:now )?(?:processing|updating|checking))\b",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:can ?not|can't|unable|not able|not allowed|not permitted|not possible|not eligible"
    r"|against (?:our |the )?policy|(?:i'?m|i am) sorry,? but|won't be able|must decline)\b",
    re.IGNORECASE,
)


_NOT = r"(?:don['’]?t|do not|can['’]?t|cannot|can not|unable to)"
_DENIES = re.compile(
    rf"\b{_NOT}\s+(?:have|remember|recall|find|locate|access)\b[^.?!]{{0,40}}?"
    r"\b(?:user ?id|user name|username)\b|"
    rf"\b(?:user ?id|username)\b[^.?!]{{0,30}}?\b{_NOT}\s+(?:have|remember|recall)\b",
    re.IGNORECASE,
)
_DENIES_ASKED = re.compile(
    rf"\b{_NOT}\s+(?:have|remember|recall)\s+(?:that|those|it|this|them|either)\b",
    re.IGNORECASE,
)
"""A no to the agent's request for the user id, where the request named it."""
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,}\b")


def withheld_identity(messages: Sequence[Message], instruction: str) -> int | None:
    """The user's message saying they do not have, or remember, their user id (or, asked for
    it, that they do not have that), where their instruction gives it and they never said
    it: no agent can look up their account. It answers for what was left undone only where
    the agent changed nothing at all."""
    given = _USER_ID.findall(instruction)
    if not given:
        return None
    said = " ".join(m.content or "" for m in messages if m.role == "user").lower()
    if any(u.lower() in said for u in given):
        return None
    asked = False
    for index, message in enumerate(messages):
        text = message.content or ""
        if message.role == "assistant" and text.strip():
            asked = re.search(r"\buser ?id\b", text, re.IGNORECASE) is not None
        elif message.role == "user" and (
            _DENIES.search(text) or (asked and _DENIES_ASKED.search(text))
        ):
            return index
    return None


def closes(text: str) -> bool:
    """Whether an agent's words wind the conversation up (nothing of theirs is pending)."""
    return _CLOSING.search(text) is not None


def early_stop(
    messages: Sequence[Message],
    stop: str,
    *,
    ended: bool = False,
    names_change: Callable[[str], bool] = lambda text: True,
) -> int | None:
    """The user's stop (their message holding `stop`; or, where `ended` says the user ended
    the episode without one, the transcript's end, given as ``len(messages)``) if it came
    while the agent was still at work: the agent had no turn since the user last spoke or
    acted, or its last turn was a call it had not yet spoken after, or its last words ask
    the user to go on with a change they name (`names_change`: a yes to it, or the user's
    own action), or say it is working without winding up; never after words that turn
    something down. A user who gives up on an agent that never takes their change up is no
    fault."""
    at = next(
        (i for i, m in enumerate(messages) if m.role == "user" and stop in (m.content or "")),
        len(messages) if ended else None,
    )
    if at is None:
        return None
    for message in reversed(messages[:at]):
        if message.role == "tool":
            continue
        if message.role == "user":
            return at  # the agent had no turn since the user last spoke or acted
        if message.role != "assistant":
            return None
        if message.tool_calls and not (message.content or "").strip():
            return at  # mid-work: no word to the user since its call
        text = message.content or ""
        if not text.strip():
            continue
        if _REFUSAL.search(text):
            return None
        if _REQUEST.search(text) and names_change(text):
            return at  # a change it names waits on the user, whatever else it says
        if closes(text):
            return None
        return at if _WORKING.search(text) else None
    return None


def stop_quote(messages: Sequence[Message], at: int) -> str:
    """Where and how the user ended the conversation (`early_stop`'s index)."""
    if at >= len(messages):
        return "with no reply, after the last message"
    return f"message {at}: {quote(messages[at].content or '', 100)}"
