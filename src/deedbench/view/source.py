"""The viewer's only way into a run store: read-only SQL, never a lock, never a write.

Every call opens the file with SQLite's read-only URI (`mode=ro`, `query_only`), so the
viewer can sit beside a run being executed (WAL lets readers read while the one writer
writes) and can never migrate, lock or change the store, whatever a bug asked it to do.

Figures need no transcript, so `light_records` reads the episode summaries the store
keeps beside its records (`engine.store`, format 2: each record with its messages cut to
the role and token usage of each model call): Python parses a transcript only for the
episode a page shows (`episode`). A store of an earlier format, which the viewer never
migrates, has SQLite make the same summaries from its records as they are read.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError

from deedbench.audit import AuditResult
from deedbench.engine import EpisodeKey, EpisodeRecord, RunConfig, StoreError
from deedbench.engine.store import HEARTBEAT_SECONDS, SUMMARY_JSON

__all__ = ["Activity", "StoreReader"]

# A run whose executor sent no heartbeat for three beats is no longer shown as running
# (the store's own takeover rule waits longer, since it must be sure).
LIVE_SECONDS = 3 * HEARTBEAT_SECONDS

_LIGHT = (
    "SELECT e.rowid, s.sample_id, s.condition, s.epoch, s.summary_json "
    "FROM episode_summaries AS s JOIN episodes AS e USING (run_id, sample_id, condition, epoch) "
    "WHERE s.run_id = ? AND e.rowid > ? ORDER BY e.rowid"
)
# A store of an earlier format has no summaries yet: SQLite makes them from the records.
_LIGHT_BEFORE_2 = (
    f"SELECT rowid, sample_id, condition, epoch, {SUMMARY_JSON} FROM episodes "
    "WHERE run_id = ? AND rowid > ? ORDER BY rowid"
)


@dataclass(frozen=True)
class Activity:
    """What changes while a run is executed, read without touching its records."""

    counts: dict[str, int]  # stored episodes by status ("scored", "error")
    last_rowid: int  # grows with every record written (a rewritten one gets a new rowid)
    audits: int
    executor: str | None  # "pid P on host H" while a live process executes the run

    @property
    def version(self) -> str:
        """Changes whenever anything a page shows of the run may have changed."""
        stored = sum(self.counts.values())
        return f"{stored}.{self.last_rowid}.{self.audits}.{int(self.executor is not None)}"


class StoreReader:
    """Reads runs, records and audits from a store file, read-only.

    `on_corrupt` gets a message naming each stored record or configuration that no
    longer parses; readers skip it, as the store's own readers do.
    """

    def __init__(self, path: Path, on_corrupt: Callable[[str], None]) -> None:
        self.path = path
        self._uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        self._on_corrupt = on_corrupt
        # (stamp, counts, last rowids, audits) of the last count of episodes
        self._counted: (
            tuple[tuple[object, ...], dict[str, dict[str, int]], dict[str, int], dict[str, int]]
            | None
        ) = None
        with self._connect() as db:  # fail now, naming the file, if it is no run store
            db.execute("SELECT run_id FROM runs LIMIT 1").fetchall()
            (found,) = db.execute("PRAGMA user_version").fetchone()
        self._light = _LIGHT if found >= 2 else _LIGHT_BEFORE_2

    # --- runs ------------------------------------------------------------------------------

    def run_ids(self) -> list[str]:
        """Every run, newest first."""
        with self._connect() as db:
            rows = db.execute("SELECT run_id FROM runs ORDER BY created_at DESC, run_id DESC")
            return [run_id for (run_id,) in rows]

    def config(self, run_id: str) -> RunConfig | None:
        """A run's configuration; None for no such run, or one that no longer parses."""
        with self._connect() as db:
            row = db.execute("SELECT config_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        try:
            return RunConfig.model_validate_json(row[0])
        except ValidationError as exc:
            self._on_corrupt(
                f"{self.path}: skipped run {run_id!r}, its configuration is corrupt: "
                + exc.errors()[0]["msg"]
            )
            return None

    def activity(self) -> dict[str, Activity]:
        """Every run's counts, last write, audits and executor. Counting episodes reads
        every row (about 0.1 s for 20,000), so the counts are kept until the store's last
        episode or audit rowid moves (a record written or rewritten gets a new one)."""
        with self._connect() as db:
            stamp = (
                db.execute("SELECT MAX(rowid) FROM episodes").fetchone()[0],
                self._optional(db, "SELECT MAX(rowid) FROM audits")[0:1],
            )
            if self._counted is None or self._counted[0] != stamp:
                counts: dict[str, dict[str, int]] = {}
                last: dict[str, int] = {}
                for run_id, status, n, rowid in db.execute(
                    "SELECT run_id, status, COUNT(*), MAX(rowid) FROM episodes "
                    "GROUP BY run_id, status"
                ):
                    counts.setdefault(run_id, {})[status] = n
                    last[run_id] = max(last.get(run_id, 0), rowid)
                audits: dict[str, int] = dict(
                    self._optional(db, "SELECT run_id, COUNT(*) FROM audits GROUP BY run_id")
                )
                self._counted = (stamp, counts, last, audits)
            _, counts, last, audits = self._counted
            locks = self._optional(db, "SELECT run_id, pid, host, heartbeat_at FROM run_locks")
            run_ids = [run_id for (run_id,) in db.execute("SELECT run_id FROM runs")]
        now = time.time()
        executors = {
            run_id: f"pid {pid} on host {host}"
            for run_id, pid, host, beat in locks
            if now - beat <= LIVE_SECONDS
        }
        return {
            run_id: Activity(
                counts.get(run_id, {}),
                last.get(run_id, 0),
                audits.get(run_id, 0),
                executors.get(run_id),
            )
            for run_id in run_ids
        }

    # --- episodes --------------------------------------------------------------------------

    def light_records(self, run_id: str, after: int = 0) -> Iterator[tuple[int, EpisodeRecord]]:
        """The run's episode summaries whose records were written after rowid `after`, in
        the order they were written: each record with its messages cut to their role and
        token usage (costs are counted per call), everything a summary, a filter or a
        pairing reads."""
        with self._connect() as db:
            rows = db.execute(self._light, (run_id, after))
            for rowid, sample_id, condition, epoch, text in rows:
                record = self._parse(text, run_id, sample_id, condition, epoch)
                if record is not None:
                    yield rowid, record

    def episode(self, run_id: str, key: EpisodeKey) -> EpisodeRecord | None:
        """One episode's whole record, transcript and all."""
        with self._connect() as db:
            row = db.execute(
                "SELECT record_json FROM episodes "
                "WHERE run_id = ? AND sample_id = ? AND condition = ? AND epoch = ?",
                (run_id, key.sample_id, key.condition, key.epoch),
            ).fetchone()
        return None if row is None else self._parse(row[0], run_id, *key)

    def stored_in(self, run_ids: Sequence[str], key: EpisodeKey) -> list[str]:
        """Which of these runs hold the episode `key`."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT run_id FROM episodes WHERE sample_id = ? AND condition = ? AND epoch = ? "
                f"AND run_id IN ({', '.join('?' * len(run_ids))})",
                (key.sample_id, key.condition, key.epoch, *run_ids),
            )
            found = {run_id for (run_id,) in rows}
        return [r for r in run_ids if r in found]

    def containing(self, run_id: str, text: str) -> set[EpisodeKey]:
        """The run's episodes with `text` in any string of their messages (contents,
        reasoning, tool names, arguments and outputs); letters A-Z match either case."""
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        # The raw JSON is a fast first sieve, where the text is written there as it is.
        sieve = (
            ""
            if any(c in text for c in '"\\') or not text.isprintable()
            else ("AND record_json LIKE :p ESCAPE '\\' ")
        )
        with self._connect() as db:
            rows = db.execute(
                "SELECT sample_id, condition, epoch FROM episodes WHERE run_id = :run "
                f"{sieve}AND EXISTS (SELECT 1 FROM json_tree(record_json, '$.messages') "
                "WHERE type = 'text' AND atom LIKE :p ESCAPE '\\')",
                {"run": run_id, "p": pattern},
            )
            return {EpisodeKey(s, c, e) for s, c, e in rows}

    def audits(self, run_id: str) -> list[AuditResult]:
        """The run's stored audits, as `deedbench report` reads them."""
        with self._connect() as db:
            rows = self._optional(
                db, "SELECT record_json FROM audits WHERE run_id = ? ORDER BY judge, rowid", run_id
            )
        return [AuditResult.model_validate_json(text) for (text,) in rows]

    # --- plumbing --------------------------------------------------------------------------

    def _parse(
        self, text: str, run_id: str, sample_id: str, condition: str, epoch: int
    ) -> EpisodeRecord | None:
        try:
            return EpisodeRecord.model_validate_json(text)
        except ValidationError as exc:
            self._on_corrupt(
                f"{self.path}: skipped the corrupt record of run {run_id!r}, sample "
                f"{sample_id!r}, condition {condition!r}, epoch {epoch}: {exc.errors()[0]['msg']}"
            )
            return None

    @staticmethod
    def _optional(db: sqlite3.Connection, sql: str, *args: object) -> list[tuple[Any, ...]]:
        """Rows of a table older stores may lack (audits, run locks): none there."""
        try:
            return db.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            with closing(sqlite3.connect(self._uri, uri=True, timeout=10)) as db:
                db.execute("PRAGMA query_only = ON")
                yield db
        except sqlite3.Error as exc:
            raise StoreError(self._explain(exc)) from None

    def _explain(self, exc: sqlite3.Error) -> str:
        text = str(exc)
        if "not a database" in text or "no such table" in text:
            return f"{self.path} is not a run store ({text})"
        if "malformed" in text or "corrupt" in text:
            return f"the run store {self.path} is damaged ({text}): restore it from a copy"
        return f"cannot read the run store {self.path}: {text}"
