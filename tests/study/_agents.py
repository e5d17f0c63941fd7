"""A turn-function agent the study tests name as ``python/study._agents:decline``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deedbench.engine import AgentContext
from deedbench.records import Message


def decline(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> str:
    """Books nothing, whatever it is asked."""
    return "I would rather not book anything."
