"""Two transcripts' tool calls side by side, aligned on what was called.

Two episodes of one sample (base and a variant, one model and another) mostly make the
same calls; reading them side by side is easiest when equal calls share a row and a
call only one side made faces a gap. `difflib.SequenceMatcher` over the calls' names
gives that alignment (the longest matching blocks, as a diff of two texts would).
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from itertools import zip_longest
from typing import Any

__all__ = ["CallRef", "align_calls", "calls_of"]

CallRef = tuple[int, int]  # (message index, position of the call in that message)


def calls_of(messages: Sequence[dict[str, Any]]) -> list[tuple[CallRef, str, str]]:
    """Every call of a transcript in the browser's shape (`episode_data`): where it is,
    its name and its arguments, in the order they were made."""
    return [
        ((index, position), call["name"], call["arguments"])
        for index, message in enumerate(messages)
        for position, call in enumerate(message["calls"])
    ]


def align_calls(
    a: Sequence[tuple[CallRef, str, str]], b: Sequence[tuple[CallRef, str, str]]
) -> list[dict[str, Any]]:
    """Rows of (a's call, b's call), either None where the other side made an extra call;
    `same` says whether the two calls are equal, arguments included."""
    matcher = SequenceMatcher(None, [name for _, name, _ in a], [name for _, name, _ in b])
    rows = []
    for _, a0, a1, b0, b1 in matcher.get_opcodes():
        for left, right in zip_longest(a[a0:a1], b[b0:b1]):
            rows.append(
                {
                    "a": None if left is None else list(left[0]),
                    "b": None if right is None else list(right[0]),
                    "same": left is not None and right is not None and left[1:] == right[1:],
                }
            )
    return rows
