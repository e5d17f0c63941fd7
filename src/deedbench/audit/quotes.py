"""What the judges share: a transcript's long parts trimmed for the prompt, and a reply
read (the JSON object in it, each quote found in the words it must come from, so a
verdict can be traced to the transcript). Used by `judge` and `user_judge`."""

from __future__ import annotations

import json
import re

from deedbench.errors import JudgeReplyError

__all__ = ["json_object", "locate", "normal", "trim"]

_TRIM = 1500  # characters kept of a system prompt or tool result: context, never evidence


def json_object(text: str) -> object:
    """The JSON object in a reply, allowing a code fence or words around it."""
    stripped = text.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", stripped, re.DOTALL)
    if fenced:
        stripped = fenced.group(1).strip()
    start, end = stripped.find("{"), stripped.rfind("}")
    if start == -1 or end < start:
        raise JudgeReplyError(f"judge reply is not JSON: {text[:200]!r}")
    try:
        return json.loads(stripped[start : end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeReplyError(f"judge reply is not valid JSON ({exc}): {text[:200]!r}") from None


_QUOTE_MARKS = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


def normal(text: str) -> str:
    """Text compared without regard to case, spacing or typographic quote marks."""
    return " ".join(text.translate(_QUOTE_MARKS).casefold().split())


def locate(quote: str, words: list[tuple[int, str]]) -> int | None:
    """The message whose words hold the quote; an ellipsis may stand for left-out words,
    but the pieces must appear in order within one part of one message."""
    pieces = [normal(p).strip(" '\"") for p in re.split(r"\.\.\.|…", quote)]
    pieces = [p for p in pieces if p]
    if not pieces:
        return None
    for index, text in words:
        position = 0
        for piece in pieces:
            found = text.find(piece, position)
            if found == -1:
                break
            position = found + len(piece)
        else:
            return index
    return None


def trim(text: str) -> str:
    """A system prompt or tool result cut to `_TRIM` characters, saying how much was cut."""
    if len(text) <= _TRIM:
        return text
    return f"{text[:_TRIM]}\n[... {len(text) - _TRIM} more characters]"
