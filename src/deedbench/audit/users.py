"""How faithful the simulated user was over a run, so a user model is chosen on evidence.

Every scored episode of a service desk carries its `Attribution`: the faults found in
it, the user's among them (made-up details, an early stop, a no to the change it asked
for, a yes to one it never asked for, a device action nobody asked for or one promised
and never done). `user_audit` counts them per user model over the runs given: the share
of episodes with any user fault (with its Wilson interval), the failures put on the user,
and each kind of fault. A run with no model-played user is its scripted user's.

With a judge (`judge_users`, `UserJudge`), each failed episode is also read for the faults
that need reading; its findings join the mechanical ones, and a failure is put on whoever
the faults found together point to (`party_of`). The reward is never touched.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from deedbench.audit.user_judge import UserJudge, UserJudgment
from deedbench.engine.concurrency import gather_or_abort
from deedbench.records import Attribution, EpisodeKey, EpisodeRecord, RunConfig, party_of
from deedbench.stats import Rate, rate

__all__ = ["UserAudit", "failed", "judge_users", "user_audit", "user_model"]

_Judged = Mapping[tuple[str, EpisodeKey], UserJudgment]
"""A judge's verdicts by (run id, episode)."""


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
    """Episodes each kind of user fault was found in (a judge's kinds among them)."""
    judged: int = 0
    """Failures a judge read and answered for (its errors not among them)."""
    judge_errors: int = 0


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

    judged: int = 0
    judge_errors: int = 0

    def add(self, attribution: Attribution, judgment: UserJudgment | None) -> None:
        faults = list(attribution.faults)
        if judgment is not None:
            self.judged += judgment.error is None
            self.judge_errors += judgment.error is not None
            faults += judgment.faults
        kinds = {f.kind for f in faults if f.party == "user"}
        self.episodes += 1
        self.faulty += bool(kinds)
        self.kinds.update(kinds)
        if attribution.party is not None:
            party = party_of(faults) if judgment is not None else attribution.party
            self.failures += 1
            self.user += party == "user"
            self.unclear += party == "unclear"


def failed(record: EpisodeRecord) -> bool:
    """A scored episode that did not succeed: what has an attribution's party to judge."""
    score = record.score
    return (
        record.status == "scored"
        and score is not None
        and score.attribution is not None
        and score.attribution.party is not None
    )


async def judge_users(
    run_id: str,
    records: Iterable[EpisodeRecord],
    instruction: Callable[[str], str | None],
    judge: UserJudge,
    concurrency: int = 16,
    on_result: Callable[[UserJudgment], None] | None = None,
) -> list[UserJudgment]:
    """Have the judge read each failed episode whose sample has a simulated user's
    instruction, `concurrency` calls at a time, in record order. A `RunAborted` (bad
    credentials) stops it; any other failure is recorded per episode."""
    slots = asyncio.Semaphore(max(1, concurrency))

    async def one(record: EpisodeRecord, told: str) -> UserJudgment:
        async with slots:
            judgment = await judge.judge(run_id, record, told)
        if on_result is not None:
            on_result(judgment)
        return judgment

    jobs = []
    for record in records:
        told = instruction(record.sample_id) if failed(record) else None
        if told is not None:
            jobs.append(one(record, told))
    return await gather_or_abort(jobs)


def user_audit(
    runs: Iterable[tuple[RunConfig, Iterable[EpisodeRecord]]], judged: _Judged | None = None
) -> list[UserAudit]:
    """The audit of each user model over the runs given, most faithful first; with a
    judge's verdicts, its findings counted beside the mechanical ones."""
    found: dict[str, _Tally] = {}
    for config, records in runs:
        tally = found.setdefault(user_model(config), _Tally())
        tally.runs.append(config.run_id)
        for record in records:
            attribution = record.score.attribution if record.score is not None else None
            if record.status == "scored" and attribution is not None:
                key = (config.run_id, record.key)
                tally.add(attribution, judged.get(key) if judged else None)
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
            judged=t.judged,
            judge_errors=t.judge_errors,
        )
        for user, t in found.items()
    ]
    return sorted(audits, key=lambda a: (a.faulty.value is None, a.faulty.value or 0.0))
