"""The run store: one SQLite file (WAL), a row per run and a row per episode.

Records are written in batches, each batch one transaction, so a killed run
loses at most the episodes of its last unfinished batch, and those simply run
again on resume. The primary key (run, sample, condition, epoch) guarantees one
record per episode. Audits of a run (`deedbench audit`) sit beside its episodes,
one per episode and judge, so auditing again with the same judge replaces them.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from deedbench.engine.records import EpisodeRecord, RunConfig
from deedbench.engine.sample import EpisodeKey

__all__ = ["AuditRecord", "RunStore", "StoreError"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    config_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT,
    record_json TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, condition, epoch)
);
CREATE TABLE IF NOT EXISTS audits (
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    judge TEXT NOT NULL,
    record_json TEXT NOT NULL,
    PRIMARY KEY (run_id, sample_id, condition, epoch, judge)
);
"""


class AuditRecord(Protocol):
    """What the store needs of an episode's audit (`deedbench.audit.AuditResult`), which
    the engine cannot import: its episode, its judge (None: the scanner alone), its JSON."""

    sample_id: str
    condition: str
    epoch: int
    judge_spec: str | None

    def model_dump_json(self) -> str: ...


class StoreError(Exception):
    """A problem with the store or a run in it, with a message for the user."""


class RunStore:
    """Reads and writes runs and their episodes in one SQLite file."""

    def __init__(self, path: str | Path, *, batch_size: int = 64, batch_seconds: float = 0.5):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.executescript(_SCHEMA)
        self._pending: list[tuple[str, EpisodeRecord]] = []
        self._batch_size = batch_size
        self._batch_seconds = batch_seconds
        self._last_flush = time.monotonic()

    def close(self) -> None:
        self.flush()
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_run(self, config: RunConfig) -> None:
        try:
            self._db.execute(
                "INSERT INTO runs (run_id, created_at, config_json) VALUES (?, ?, ?)",
                (config.run_id, config.created_at, config.model_dump_json()),
            )
        except sqlite3.IntegrityError:
            raise StoreError(f"run {config.run_id!r} already exists in {self.path}") from None

    def get_run(self, run_id: str) -> RunConfig | None:
        row = self._db.execute(
            "SELECT config_json FROM runs WHERE run_id = ?", (run_id,)
        ).fetchone()
        return RunConfig.model_validate_json(row[0]) if row else None

    def require_run(self, run_id: str) -> RunConfig:
        config = self.get_run(run_id)
        if config is None:
            known = ", ".join(self.run_ids()[-10:]) or "none"
            raise StoreError(f"no run {run_id!r} in {self.path} (latest runs: {known})")
        return config

    def run_ids(self) -> list[str]:
        rows = self._db.execute("SELECT run_id FROM runs ORDER BY created_at, run_id")
        return [r[0] for r in rows]

    def scored_keys(self, run_id: str) -> set[EpisodeKey]:
        """Episodes already finished; errors are not among them, so they run again."""
        rows = self._db.execute(
            "SELECT sample_id, condition, epoch FROM episodes "
            "WHERE run_id = ? AND status = 'scored'",
            (run_id,),
        )
        return {EpisodeKey(*row) for row in rows}

    def add(self, run_id: str, record: EpisodeRecord) -> None:
        """Queue a record; it is written with its batch."""
        self._pending.append((run_id, record))
        now = time.monotonic()
        if len(self._pending) >= self._batch_size or now - self._last_flush >= self._batch_seconds:
            self.flush()

    def flush(self) -> None:
        """Write every queued record in one transaction."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        rows = [
            (
                run_id,
                r.sample_id,
                r.condition,
                r.epoch,
                r.status,
                r.score.outcome if r.score else None,
                r.model_dump_json(),
            )
            for run_id, r in self._pending
        ]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany(
                "INSERT OR REPLACE INTO episodes "
                "(run_id, sample_id, condition, epoch, status, outcome, record_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._pending.clear()

    def episodes(self, run_id: str) -> Iterator[EpisodeRecord]:
        rows = self._db.execute(
            "SELECT record_json FROM episodes WHERE run_id = ? ORDER BY rowid", (run_id,)
        )
        for (text,) in rows:
            yield EpisodeRecord.model_validate_json(text)

    def count(self, run_id: str) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT status, COUNT(*) FROM episodes WHERE run_id = ? GROUP BY status", (run_id,)
        )
        return dict(rows.fetchall())

    def save_audits(self, run_id: str, audits: Iterable[AuditRecord]) -> None:
        """Write a run's audits in one transaction, replacing earlier ones by the same judge."""
        rows = [
            (run_id, a.sample_id, a.condition, a.epoch, a.judge_spec or "", a.model_dump_json())
            for a in audits
        ]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.executemany(
                "INSERT OR REPLACE INTO audits "
                "(run_id, sample_id, condition, epoch, judge, record_json) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def audits(self, run_id: str) -> list[str]:
        """A run's stored audits as JSON (`deedbench.audit.load_audits` reads them), the
        scanner-only audit first, then each judge's, in the order they were written."""
        rows = self._db.execute(
            "SELECT record_json FROM audits WHERE run_id = ? ORDER BY judge, rowid", (run_id,)
        )
        return [text for (text,) in rows]
