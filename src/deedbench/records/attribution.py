"""Who failed: an episode's faults, each pinned on the agent, the simulated user or the task.

A τ-style reward says whether an episode succeeded, not whose doing a failure was. A
simulated user that stops early or states a value its instruction contradicts, or a task
whose gold actions cannot reach the reward, fails an episode no agent could have passed.
An `Attribution` records what the checks found (`Fault`s with quoted evidence, by `kind`:
``task.gold_raises``, ``user.early_stop``, ...). The faults the failure follows from are
its causes (`Fault.cause`), each naming what differs from the gold; the party a failure
is put on is theirs (`party_of`):

- the one party all the causes are (``agent``, ``user`` or ``task``);
- ``unclear`` when the causes are several parties';
- ``agent`` when no cause was found.

Only an episode that failed the benchmark's reward has a party; a passing one may still
carry faults that caused nothing (a detail the user made up that no call used, a gold
action that raises and changes nothing), and a procedure rule it broke stays a procedure
verdict. The attribution is kept beside the reward, never folded into it.
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
    cause: bool = False
    """Whether the episode's failure follows from it (a fault found on the way, that
    changed nothing the reward reads, is not a cause)."""

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
        """The episode says something about the agent: it passed, or its failure is the
        agent's (a failure put on the user, the task or on several is set aside)."""
        return self.party in (None, "agent")


def party_of(faults: Iterable[Fault]) -> Party:
    """Whose failure an episode with these faults is.

    With causes marked (`Fault.cause`): the party of the causes and of a judge's faults,
    if one; ``unclear`` for several; ``agent`` for none. Records made before causes were
    marked are read as they were: the task's if only the task is at fault, the user's if
    only the user is, ``unclear`` if both, else the agent's."""
    faults = list(faults)
    if any(f.cause for f in faults):
        causes = {f.party for f in faults if f.cause or f.source == "judge"}
        parties = causes & {"agent", "user", "task"}
        if len(parties) == 1:
            return _one(parties.pop())
        return "unclear" if parties else "agent"
    parties = {f.party for f in faults}
    if "task" in parties and "user" in parties:
        return "unclear"
    if "task" in parties:
        return "task"
    if "user" in parties:
        return "user"
    return "agent"


def _one(party: str) -> Party:
    return "user" if party == "user" else "task" if party == "task" else "agent"
