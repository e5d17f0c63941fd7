"""The audits table of a run store: eval-awareness audits and user judgments, written and read
here, the one place that knows their rows.

The table sits in the run store beside the episodes it audits (the engine makes it with the
rest of the schema, so a store has one format), and is reached through the store's connection
(`RunStore.reading` and `writing`; the viewer's `ReadOnlyStore.reading`). One row per
episode and judge, so auditing again with the same judge replaces the last audit by it. A
user judge's verdicts (`UserJudgment`) share the table, their judge column prefixed with
`_USER_JUDGE`, so each reader keeps to its own. An older store that the viewer reads without
migrating it may lack the table: it has no audits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from deedbench.audit.audit import AuditResult
from deedbench.audit.user_judge import UserJudgment
from deedbench.engine.store import Readable, RunStore

__all__ = [
    "audit_counts",
    "last_audit",
    "load_audits",
    "load_user_judgments",
    "save_audits",
    "save_user_judgments",
]

_USER_JUDGE = "users/"  # the judge column's prefix for a user judge's verdicts
_INSERT = (
    "INSERT OR REPLACE INTO audits (run_id, sample_id, condition, epoch, judge, record_json) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)


def save_audits(store: RunStore, run_id: str, audits: Iterable[AuditResult]) -> None:
    """Write a run's audits in one transaction, replacing earlier ones by the same judge."""
    rows = [
        (run_id, a.sample_id, a.condition, a.epoch, a.judge_spec or "", a.model_dump_json())
        for a in audits
    ]
    with store.writing() as db:
        db.executemany(_INSERT, rows)


def load_audits(store: Readable, run_id: str) -> list[AuditResult]:
    """The audits stored for a run, the scanner-only audit first, then each judge's, in
    the order written."""
    rows = _rows(
        store,
        "SELECT record_json FROM audits WHERE run_id = ? AND judge NOT LIKE ? "
        "ORDER BY judge, rowid",
        run_id,
        f"{_USER_JUDGE}%",
    )
    return [AuditResult.model_validate_json(text) for (text,) in rows]


def save_user_judgments(store: RunStore, run_id: str, judgments: Iterable[UserJudgment]) -> None:
    """Write a user judge's verdicts beside the audits, replacing earlier ones by the same
    judge."""
    rows = [
        (
            run_id,
            j.sample_id,
            j.condition,
            j.epoch,
            f"{_USER_JUDGE}{j.judge_spec or ''}",
            j.model_dump_json(),
        )
        for j in judgments
    ]
    with store.writing() as db:
        db.executemany(_INSERT, rows)


def load_user_judgments(store: Readable, run_id: str) -> list[UserJudgment]:
    """A run's stored user judgments, each judge's in the order written."""
    rows = _rows(
        store,
        "SELECT record_json FROM audits WHERE run_id = ? AND judge LIKE ? ORDER BY judge, rowid",
        run_id,
        f"{_USER_JUDGE}%",
    )
    return [UserJudgment.model_validate_json(text) for (text,) in rows]


def last_audit(store: Readable) -> int | None:
    """The rowid of the last audit or judgment written, of any run: auditing again writes
    a new one."""
    rows = _rows(store, "SELECT MAX(rowid) FROM audits")
    last = rows[0][0] if rows else None
    return None if last is None else int(last)


def audit_counts(store: Readable) -> dict[str, tuple[int, int]]:
    """Per run with audits or judgments: how many, and the rowid of the last written."""
    rows = _rows(store, "SELECT run_id, COUNT(*), MAX(rowid) FROM audits GROUP BY run_id")
    return {run_id: (n, rowid) for run_id, n, rowid in rows}


def _rows(store: Readable, sql: str, *args: object) -> list[tuple[Any, ...]]:
    """The rows of a query of the audits table; none from a store without it."""
    with store.reading() as db:
        try:
            return db.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise
