"""The pieces of a labelled episode (`bench/attribution_labels.md`): a turn (`Step`), an
episode with its mutation's kind and side (`Variant`), a gold action as the steps use it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

GREETING = "Hi! How can I help you today?"
STOP = "###STOP###"


@dataclass
class Step:
    """One turn: a call by `role` (name, arguments), or words (a string, or made from the
    answer of the call before)."""

    role: str
    call: tuple[str, dict[str, Any]] | None = None
    words: str | Callable[[str], str] = ""

    def text(self, last_answer: str) -> str:
        return self.words(last_answer) if callable(self.words) else self.words


@dataclass
class Variant:
    kind: str
    side: str | None
    steps: list[Step]
    style: str
    task: Any = None
    control: bool = False
    note: str = ""


@dataclass
class Gold:
    """A gold action as the steps use it."""

    name: str
    arguments: dict[str, Any]
    requestor: str
    index: int
    extra: dict[str, Any] = field(default_factory=dict)


def say(role: str, words: str | Callable[[str], str]) -> Step:
    return Step(role, words=words)


def first_line(answer: str) -> str:
    line = str(answer or "").strip().splitlines()
    return line[0][:160] if line else "nothing"


def ids_in(value: Any) -> bool:
    return isinstance(value, str) and any(ch.isdigit() for ch in value)
