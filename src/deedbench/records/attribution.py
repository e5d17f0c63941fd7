"""Who failed: an episode's faults, each pinned on the agent, the simulated user or the task.

A τ-style reward says whether an episode succeeded, not whose doing a failure was. A
simulated user that stops early or makes up an order id, or a task whose gold actions
raise, fails an episode no agent could have passed. An `Attribution` records what the
checks found (`Fault`s with quoted evidence, by `kind`: ``task.gold_raises``,
``user.early_stop``, ...) and the party a failure is put on (`party_of`):

- ``task`` when the task is at fault (the verdict itself cannot be trusted);
- ``user`` when the user is at fault and the task is not;
- ``unclear`` when both are;
- ``agent`` otherwise: the failing components are the agent's (`agent_faults`).

It is kept beside the reward, never folded into it: the reward stays the benchmark's.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["AGENT_SCOPE", "Attribution", "Fault", "Party", "party_of"]

Party = Literal["agent", "user", "task", "unclear"]

AGENT_SCOPE = "agent_scope"
"""The score value that is 1 when an episode has no user or task fault: the episodes an
agent-attributable rate counts."""


class Fault(BaseModel):
    """One fault found in an episode: its kind (``<party>.<what>``), the quote that shows
    it, where it is, and how it was found."""

    kind: str
    excerpt: str
    message_index: int | None = None
    source: Literal["mechanical", "judge"] = "mechanical"

    @property
    def party(self) -> str:
        return self.kind.partition(".")[0]


class Attribution(BaseModel):
    """An episode's faults and, for an episode that did not succeed, whose failure it is
    (None for a success: nothing to attribute)."""

    party: Party | None = None
    faults: list[Fault] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)
    """The checks that ran (a kind absent from `faults` was looked for and not found)."""

    @property
    def agent_scope(self) -> bool:
        """No user or task fault: the episode says something about the agent alone."""
        return not any(f.party in ("user", "task") for f in self.faults)


def party_of(faults: Iterable[Fault]) -> Party:
    """Whose failure an episode with these faults is."""
    parties = {f.party for f in faults}
    if "task" in parties and "user" in parties:
        return "unclear"
    if "task" in parties:
        return "task"
    if "user" in parties:
        return "user"
    return "agent"
