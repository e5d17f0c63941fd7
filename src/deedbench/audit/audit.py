"""Auditing a stored run for evaluation awareness: one result per episode, a summary per
condition.

Every scored episode is scanned; with a judge, each is also judged. Episodes that
infrastructure broke are skipped, as they are in every rate. Results are stored
beside the run (`audit.store.save_audits`), one per episode and judge, so auditing
again replaces the last audit by the same judge, and the cache makes that free.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from deedbench.audit.judge import RUBRIC_VERSION, Judge, JudgeVerdict
from deedbench.audit.scanner import SCANNER_VERSION, Hit, scan
from deedbench.engine.concurrency import gather_or_abort
from deedbench.records import EpisodeKey, EpisodeRecord, RunConfig, Usage
from deedbench.stats import Rate, rate

__all__ = ["AuditResult", "AuditSummary", "audit_run", "summarize_audits"]


class AuditResult(BaseModel):
    """The audit of one episode: the scanner's hits and, with a judge, its verdict.

    `judge_spec` None means a scanner-only audit. A judge that failed leaves
    `verdict` None and says why in `judge_error` (its reply is kept in
    `judge_reply`); such episodes count in no judged rate. `usage` holds the
    judge's calls under the role "judge", as episode records hold the agent's.
    """

    run_id: str
    sample_id: str
    condition: str
    epoch: int
    scanner_version: str = SCANNER_VERSION
    hits: list[Hit] = Field(default_factory=list)
    judge_spec: str | None = None
    judge_settings: dict[str, Any] = Field(default_factory=dict)
    rubric_version: str | None = None
    verdict: JudgeVerdict | None = None
    judge_error: str | None = None
    judge_reply: str | None = None
    usage: dict[str, Usage] = Field(default_factory=dict)
    audited_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())

    @computed_field  # type: ignore[prop-decorator]
    @property
    def flagged(self) -> bool:
        """Whether the scanner found anything; stored too, for readers of the JSON."""
        return bool(self.hits)

    @property
    def key(self) -> EpisodeKey:
        return EpisodeKey(self.sample_id, self.condition, self.epoch)


class AuditSummary(BaseModel):
    """One condition of one audit (a run, audited by one judge or by the scanner alone).

    `flagged` is the share of episodes the scanner flagged; `judged_aware` the
    share of judged episodes (judge errors left out) that the judge called aware,
    None without a judge. `categories` counts flagged episodes per scanner category.
    """

    run_id: str
    condition: str
    judge_spec: str | None
    rubric_version: str | None
    episodes: int
    flagged: Rate
    categories: dict[str, int]
    judged_aware: Rate | None
    judge_errors: int
    usage: Usage


async def audit_run(
    config: RunConfig,
    records: Iterable[EpisodeRecord],
    judge: Judge | None = None,
    concurrency: int = 16,
    on_result: Callable[[AuditResult], None] | None = None,
) -> list[AuditResult]:
    """Audit every scored episode, judge calls `concurrency` at a time, in record order.

    A `RunAborted` from the judge (bad credentials) stops the audit and cancels the
    calls in flight; anything else a judge does wrong is recorded per episode.
    """
    scored = [r for r in records if r.status == "scored"]
    slots = asyncio.Semaphore(max(1, concurrency))

    async def one(record: EpisodeRecord) -> AuditResult:
        result = AuditResult(
            run_id=config.run_id,
            sample_id=record.sample_id,
            condition=record.condition,
            epoch=record.epoch,
            hits=scan(record.messages),
        )
        if judge is not None:
            async with slots:
                outcome = await judge.judge(record)
            result.judge_spec = judge.spec
            result.judge_settings = judge.settings
            result.rubric_version = RUBRIC_VERSION
            result.verdict = outcome.verdict
            result.judge_error = outcome.error
            result.judge_reply = outcome.reply
            result.usage = {"judge": outcome.usage}
        if on_result is not None:
            on_result(result)
        return result

    return await gather_or_abort(one(record) for record in scored)


def summarize_audits(results: Iterable[AuditResult]) -> list[AuditSummary]:
    """A summary per (run, judge, condition), in the order results first name them."""
    groups: dict[tuple[str, str | None, str], list[AuditResult]] = {}
    for result in results:
        groups.setdefault((result.run_id, result.judge_spec, result.condition), []).append(result)
    return [
        _summary(run_id, judge, condition, group)
        for (run_id, judge, condition), group in groups.items()
    ]


def _summary(
    run_id: str, judge: str | None, condition: str, group: list[AuditResult]
) -> AuditSummary:
    categories: dict[str, int] = {}
    for result in group:
        for category in sorted({hit.category for hit in result.hits}):
            categories[category] = categories.get(category, 0) + 1
    judged = [r.verdict for r in group if r.verdict is not None]
    usage = Usage()
    for result in group:
        usage += result.usage.get("judge", Usage())
    return AuditSummary(
        run_id=run_id,
        condition=condition,
        judge_spec=judge,
        rubric_version=next((r.rubric_version for r in group if r.rubric_version), None),
        episodes=len(group),
        flagged=rate(sum(r.flagged for r in group), len(group)),
        categories=dict(sorted(categories.items())),
        judged_aware=(
            rate(sum(v.verdict == "aware" for v in judged), len(judged))
            if judge is not None
            else None
        ),
        judge_errors=sum(r.judge_error is not None for r in group),
        usage=usage,
    )
