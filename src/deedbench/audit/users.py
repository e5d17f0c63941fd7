"""How faithful the simulated user was over a run, so a user model is chosen on evidence.

Every scored episode of a service desk carries its `Attribution`: the faults found in
it, the user's among them (made-up details, an early stop, a no to the change it asked
for, a yes to one it never asked for, a device action nobody asked for or one promised
and never done). `user_audit` counts them per user model over the runs given: the share
of episodes with any user fault (with its Wilson interval), the failures put on the user,
and each kind of fault. A run with no model-played user is its scripted user's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from deedbench.records import Attribution, EpisodeRecord, RunConfig
from deedbench.stats import Rate, rate

__all__ = ["UserAudit", "user_audit", "user_model"]


class UserAudit(BaseModel):
    """One user model over the episodes of its runs."""

    user: str
    runs: list[str]
    episodes: int
    """Scored episodes whose faults were looked for."""
    faulty: Rate
    """Episodes with at least one user fault."""
    failures: int
    """Episodes that did not pass."""
    user_failures: int
    """Of those, the ones put on the user (party user; unclear ones are counted apart)."""
    unclear_failures: int
    kinds: dict[str, int] = Field(default_factory=dict)
    """Episodes each kind of user fault was found in."""


def user_model(config: RunConfig) -> str:
    """Who played the user of a run: its model spec, else its benchmark's script (or, for a
    τ² result file imported, the user model the file names)."""
    if config.user is not None:
        return config.user.spec
    return "scripted"


@dataclass
class _Tally:
    runs: list[str] = field(default_factory=list)
    episodes: int = 0
    faulty: int = 0
    failures: int = 0
    user: int = 0
    unclear: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    def add(self, attribution: Attribution) -> None:
        kinds = {f.kind for f in attribution.faults if f.party == "user"}
        self.episodes += 1
        self.faulty += bool(kinds)
        self.kinds.update(kinds)
        if attribution.party is not None:
            self.failures += 1
            self.user += attribution.party == "user"
            self.unclear += attribution.party == "unclear"


def user_audit(runs: Iterable[tuple[RunConfig, Iterable[EpisodeRecord]]]) -> list[UserAudit]:
    """The audit of each user model over the runs given, most faithful first."""
    found: dict[str, _Tally] = {}
    for config, records in runs:
        tally = found.setdefault(user_model(config), _Tally())
        tally.runs.append(config.run_id)
        for record in records:
            attribution = record.score.attribution if record.score is not None else None
            if record.status == "scored" and attribution is not None:
                tally.add(attribution)
    audits = [
        UserAudit(
            user=user,
            runs=t.runs,
            episodes=t.episodes,
            faulty=rate(t.faulty, t.episodes),
            failures=t.failures,
            user_failures=t.user,
            unclear_failures=t.unclear,
            kinds=dict(t.kinds.most_common()),
        )
        for user, t in found.items()
    ]
    return sorted(audits, key=lambda a: (a.faulty.value is None, a.faulty.value or 0.0))
