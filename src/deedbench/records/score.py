"""A score and the evidence it rests on."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from deedbench.records.attribution import Attribution

__all__ = ["NO_CHOICE", "Evidence", "Score"]

NO_CHOICE = "(none)"


class Evidence(BaseModel):
    """Where in the transcript a verdict comes from: a message, a call, a rule."""

    message_index: int | None = None
    tool_call_id: str | None = None
    rule: str | None = None
    excerpt: str = ""


class Score(BaseModel):
    """The verdict on one episode: a named outcome, numeric values, and evidence.

    `choice` names what the agent decided where a benchmark has one decision (TAC: the
    experience bought, NO_CHOICE for none), so reports can tell whether a variant of a
    prompt changed the decision; None where the scorer records no choice.
    """

    outcome: str
    values: dict[str, float]
    evidence: list[Evidence] = Field(default_factory=list)
    choice: str | None = None
    details: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    """What the scorer found, in its benchmark's own terms, kept whole (τ²'s
    ``reward_info``); left out of the record when None."""
    attribution: Attribution | None = Field(default=None, exclude_if=lambda v: v is None)
    """Whose failure it was, with the faults found (service desks); left out when None."""
