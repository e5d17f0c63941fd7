"""The run store: one SQLite file (WAL) with runs, their episodes, the model answers runs
paid for, and the locks of runs being executed; beside them, tables that higher layers own.

One process writes a run's episodes and answers: the driver that executes it
(`engine.executor`), whatever executes its episodes. Records are written in batches,
each batch one transaction, so a killed run loses at most the episodes of its last
unfinished batch, and those simply run again on resume; answers are committed as they
arrive, so a resumed run never pays for them again. The primary key (run, sample,
condition, epoch) guarantees one record per episode.

Two tables belong to higher layers, which the engine does not import: the audits of a
run's episodes (`deedbench.audit.store`) and the studies naming their runs
(`deedbench.study.store`). Their schema is made and migrated here with the rest, so a
store has one format; their rows are read and written by their owners, through the
store's connection (`reading`, `writing`). A read-only reader of the same file, for a
process that may not write it (the viewer), is `engine.read_only_store`.

Beside each record the store keeps its summary, which is what reports read (format 2): the
record with every message cut to the role and token usage of its model call, in a table of its
own (`episode_summaries`), written by the record's own transaction. Why this shape: the summary
is still an `EpisodeRecord` (score, metadata, chance, usage per role and per call, ending,
error, timing), so every reader that took records (summaries, costs, the viewer's rows and
pairings) takes it unchanged and nothing has a second schema to keep in step with the record's;
SQLite makes it from the stored JSON with its JSON functions (no Python parse on the write path,
and a migration is one statement per chunk); and in a table of its own a reader never walks
the transcript's overflow pages, as it would for a column added after `record_json`. Columns per
field would be faster still to read, but would tie the store's schema to `ReportSpec`'s metrics,
which each benchmark declares. A format-1 store gets its summaries when it is opened, in one
transaction, with progress for a big one; a read-only one is refused, saying how to migrate it.

A run being executed holds a lock row (pid, host, heartbeat): a second process that
would execute it is refused with the holder's name, and a lock whose process died or
whose heartbeat stopped is taken over. The store carries its format (`records.FORMAT`, in
SQLite's `user_version`) and the deedbench version that wrote it in that format: an older
store is migrated when opened (answers given their episode columns, run locks added), a
newer one is refused with both versions named, before anything in it is touched.

Every SQLite failure leaves as a `StoreError` whose message names the file and says
what is wrong with it (a folder, not SQLite, damaged, read-only); a record that no
longer parses is skipped by readers and reported through `on_corrupt`, naming it.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from deedbench.engine.cache import CacheEntry
from deedbench.errors import StoreError, StoreFormatError
from deedbench.records import FORMAT, EpisodeKey, EpisodeRecord, RunConfig, Usage
from deedbench.version import __version__

__all__ = [
    "HEARTBEAT_SECONDS",
    "LIVE_SECONDS",
    "STALE_SECONDS",
    "SUMMARY_JSON",
    "Readable",
    "RunStore",
    "executing",
]

HEARTBEAT_SECONDS = 5.0  # how often the process executing a run proves it is alive
STALE_SECONDS = 60.0  # a lock whose heartbeat is older than this is taken over
LIVE_SECONDS = 3 * HEARTBEAT_SECONDS  # a run whose lock beat this recently is being executed

_TABLES = """
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
CREATE TABLE IF NOT EXISTS episode_summaries (
    run_id TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    status TEXT NOT NULL,
    summary_json TEXT NOT NULL,
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
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    protocol TEXT NOT NULL,
    model TEXT NOT NULL,
    response_json TEXT NOT NULL,
    sample_id TEXT,
    epoch INTEGER,
    seed INTEGER
);
CREATE TABLE IF NOT EXISTS studies (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    study_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_locks (
    run_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    acquired_at TEXT NOT NULL,
    heartbeat_at REAL NOT NULL
);
"""
# Answers cached before they carried their episode have NULL there (see `_migrate`).
_EPISODE_COLUMNS = {"sample_id": "TEXT", "epoch": "INTEGER", "seed": "INTEGER"}
_INDEXES = """
CREATE INDEX IF NOT EXISTS episodes_by_epoch ON episodes (run_id, epoch, condition);
CREATE INDEX IF NOT EXISTS responses_by_seed ON responses (seed);
CREATE INDEX IF NOT EXISTS summaries_by_run ON episode_summaries (run_id);
"""
# An episode's summary made from its stored record by SQLite (JSON in C, no Python parse):
# the record with each message cut to its role and token usage, and messages without usage
# left out (the rest is small: score, metadata, usage, timing, error).
SUMMARY_JSON = """json_set(record_json, '$.messages', (
    SELECT json_group_array(
        json_object('role', m.value ->> '$.role', 'usage', m.value -> '$.usage')
    ) FROM json_each(record_json, '$.messages') AS m WHERE m.value ->> '$.usage' IS NOT NULL
))"""
_SUMMARY = f"SELECT run_id, sample_id, condition, epoch, status, {SUMMARY_JSON} FROM episodes "
_SUMMARIZE = (
    "INSERT OR REPLACE INTO episode_summaries "
    "(run_id, sample_id, condition, epoch, status, summary_json) " + _SUMMARY
)
_MIGRATE_CHUNK = 2_000  # records summarized per statement when a store is migrated
_RESPONSE_COLUMNS = "key, protocol, model, response_json, sample_id, epoch, seed"


class Readable(Protocol):
    """A store whose tables a higher layer reads (`deedbench.audit.store`,
    `deedbench.study.store`): the run store, or the viewer's read-only one."""

    def reading(self) -> AbstractContextManager[sqlite3.Connection]: ...


def executing(store: Readable, within: float = LIVE_SECONDS) -> dict[str, str]:
    """The runs a live process is executing, each with that process ("pid P on host H"):
    their lock's heartbeat is at most `within` seconds old (none in a store made before
    runs had locks)."""
    with store.reading() as db:
        try:
            rows = db.execute("SELECT run_id, pid, host, heartbeat_at FROM run_locks").fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            rows = []
    now = time.time()
    return {
        run_id: f"pid {pid} on host {host}"
        for run_id, pid, host, beat in rows
        if now - beat <= within
    }


class RunStore:
    """Reads and writes runs, their episodes and cached answers in one SQLite file.

    `on_corrupt` receives a message for each stored record that no longer parses (readers
    skip it); by default it is a Python warning. `read_only`: for a command that only
    reads, a connection that never writes, locks or migrates (`_open_read_only`).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int = 64,
        batch_seconds: float = 0.5,
        on_corrupt: Callable[[str], None] | None = None,
        on_progress: Callable[[str], None] | None = None,
        read_only: bool = False,
    ):
        self.path = Path(path)
        self._on_corrupt = on_corrupt or _warn
        self._on_progress = on_progress or _to_stderr
        self._pending: list[tuple[str, EpisodeRecord, str | None]] = []
        self._batch_size = batch_size
        self._batch_seconds = batch_seconds
        self._last_flush = time.monotonic()
        self._locks: dict[str, int] = {}  # runs this store holds locked, and how often
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a folder, not a run store (give a file name)")
        if read_only:
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the folder of the run store {self.path}: {exc.strerror}"
            ) from None
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:  # a folder that takes no new file (read-only, /proc)
            raise StoreError(
                f"cannot open the run store {self.path}: {exc} (a new store is made in a "
                "folder deedbench can write to)"
            ) from None
        try:
            with self._guard():
                self._db.execute("PRAGMA busy_timeout=10000")
                self._refuse_newer()
                self._refuse_unmigratable()
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.executescript(_TABLES)
                self._migrate()
                self._db.executescript(_INDEXES)
                self._probe_writable()
        except StoreError:
            self._db.close()
            raise

    def _open_read_only(self) -> None:
        """For `read_only`: a connection that never writes, locks or migrates (the viewer's,
        `read_only_store.read_only_uri`), so a reading command reads a store it may not
        write, and beside an import's transaction. StoreFormatError for a store of another
        format: an older one is migrated by a store opened to write."""
        if not self.path.exists():
            raise StoreError(f"no run store at {self.path}")
        from deedbench.engine.read_only_store import reading_connection

        self._db = reading_connection(self.path)
        try:
            with self._guard():
                self._db.execute("PRAGMA busy_timeout=10000")
                self._db.execute("PRAGMA query_only = ON")
                self._refuse_newer()
                if self._format() < FORMAT or not self._has("runs"):
                    raise StoreFormatError(
                        f"{self.path} is in format {self._format() or 1}; reading it takes "
                        f"format {FORMAT}, which opening it to write makes"
                    )
        except StoreError:
            self._db.close()
            raise

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- runs -----------------------------------------------------------------------------

    def create_run(self, config: RunConfig) -> None:
        with self._guard():
            try:
                self._db.execute(
                    "INSERT INTO runs (run_id, created_at, config_json) VALUES (?, ?, ?)",
                    (config.run_id, config.created_at, config.model_dump_json()),
                )
            except sqlite3.IntegrityError:
                raise StoreError(f"run {config.run_id!r} already exists in {self.path}") from None

    def get_run(self, run_id: str) -> RunConfig | None:
        with self._guard():
            row = self._db.execute(
                "SELECT config_json FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
        if row is None:
            return None
        try:
            return RunConfig.model_validate_json(row[0])
        except ValidationError as exc:
            raise StoreError(
                f"{self.path}: the configuration of run {run_id!r} is corrupt: {_first(exc)}"
            ) from None

    def require_run(self, run_id: str) -> RunConfig:
        config = self.get_run(run_id)
        if config is None:
            known = ", ".join(self.run_ids()[-10:]) or "none"
            raise StoreError(f"no run {run_id!r} in {self.path} (latest runs: {known})")
        return config

    def run_ids(self) -> list[str]:
        with self._guard():
            rows = self._db.execute("SELECT run_id FROM runs ORDER BY created_at, run_id")
            return [r[0] for r in rows]

    def configs(self) -> Iterator[RunConfig]:
        """Every run's configuration, newest first; one that no longer parses is skipped
        and reported through `on_corrupt`."""
        with self._guard():
            rows = self._db.execute(
                "SELECT run_id, config_json FROM runs ORDER BY created_at DESC, run_id DESC"
            ).fetchall()
        for run_id, text in rows:
            try:
                yield RunConfig.model_validate_json(text)
            except ValidationError as exc:
                self._on_corrupt(
                    f"{self.path}: skipped run {run_id!r}, its configuration is corrupt: "
                    + _first(exc)
                )

    def counts(self) -> dict[str, dict[str, int]]:
        """Every run's stored episodes by status, read from the summaries' index."""
        with self._guard():
            rows = self._db.execute(
                "SELECT run_id, status, COUNT(*) FROM episode_summaries GROUP BY run_id, status"
            )
            counts: dict[str, dict[str, int]] = {}
            for run_id, status, n in rows:
                counts.setdefault(run_id, {})[status] = n
            return counts

    def call_usage(self) -> dict[str, list[tuple[str, bool, Usage]]]:
        """Per run, the token usage of its model calls summed by SQLite from the summaries,
        per (role, billed: not answered by deedbench's response cache); a judge's calls
        (in each summary's usage, no message of the conversation) under "judge"."""
        fields = ", ".join(
            f"SUM(COALESCE(m.value ->> '$.usage.{name}', 0))" for name in Usage.model_fields
        )
        with self._guard():
            rows = self._db.execute(
                f"SELECT s.run_id, m.value ->> '$.role', "
                f"COALESCE(m.value ->> '$.usage.cache_hits', 0) = 0, {fields} "
                "FROM episode_summaries AS s, json_each(s.summary_json, '$.messages') AS m "
                "GROUP BY 1, 2, 3 ORDER BY MIN(s.rowid), 2, 3"
            )
            usage: dict[str, list[tuple[str, bool, Usage]]] = {}
            for run_id, role, billed, *counts in rows:
                total = Usage(**dict(zip(Usage.model_fields, counts, strict=True)))
                usage.setdefault(run_id, []).append((role, bool(billed), total))
            # calls outside the conversation (τ²'s NL judge), counted in the record's usage
            judged = ", ".join(
                f"SUM(COALESCE(s.summary_json ->> '$.usage.judge.{name}', 0))"
                for name in Usage.model_fields
            )
            rows = self._db.execute(
                f"SELECT s.run_id, COALESCE(s.summary_json ->> '$.usage.judge.cache_hits', 0) "
                f"= 0, {judged} FROM episode_summaries AS s "
                "WHERE s.summary_json ->> '$.usage.judge' IS NOT NULL "
                "GROUP BY 1, 2 ORDER BY MIN(s.rowid), 2"
            )
            for run_id, billed, *counts in rows:
                total = Usage(**dict(zip(Usage.model_fields, counts, strict=True)))
                usage.setdefault(run_id, []).append(("judge", bool(billed), total))
            return usage

    # --- episodes -------------------------------------------------------------------------

    def scored_samples(self, run_id: str, condition: str, epoch: int) -> set[str]:
        """The samples of one condition and epoch already finished; errors are not among
        them, so they run again."""
        with self._guard():
            rows = self._db.execute(
                "SELECT sample_id FROM episodes WHERE run_id = ? AND epoch = ? "
                "AND condition = ? AND status = 'scored'",
                (run_id, epoch, condition),
            )
            return {row[0] for row in rows}

    def add(self, run_id: str, record: EpisodeRecord, json: str | None = None) -> None:
        """Queue a record (with its JSON, when the caller has it already); it is written
        with its batch."""
        self._pending.append((run_id, record, json))
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
                json if json is not None else r.model_dump_json(),
            )
            for run_id, r, json in self._pending
        ]
        with self._guard(), self._transaction():  # each record with its summary
            self._db.executemany(
                "INSERT OR REPLACE INTO episodes "
                "(run_id, sample_id, condition, epoch, status, outcome, record_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._db.executemany(
                _SUMMARIZE + "WHERE run_id = ? AND sample_id = ? AND condition = ? AND epoch = ?",
                [row[:4] for row in rows],
            )
        self._pending.clear()

    def episodes(self, run_id: str) -> Iterator[EpisodeRecord]:
        """The run's records in the order they were written, skipping (and reporting
        through `on_corrupt`) any that no longer parses."""
        with self._guard():
            rows = self._written(run_id, "episodes", "record_json")
            yield from self._parsed(run_id, rows, "record")

    def summaries(self, run_id: str) -> Iterator[EpisodeRecord]:
        """The run's episode summaries in the order their records were written: each
        record with its messages cut to their role and token usage (what reports read),
        skipping (and reporting through `on_corrupt`) any that no longer parses."""
        with self._guard():
            rows = self._written(run_id, "episode_summaries", "summary_json")
            yield from self._parsed(run_id, rows, "summary")

    def _written(self, run_id: str, table: str, column: str) -> sqlite3.Cursor:
        """The run's (sample, condition, epoch, JSON `column`) rows of `table`, in the
        order they were written."""
        return self._db.execute(
            f"SELECT sample_id, condition, epoch, {column} FROM {table} "
            "WHERE run_id = ? ORDER BY rowid",
            (run_id,),
        )

    def _parsed(
        self, run_id: str, rows: Iterable[tuple[str, str, int, str]], what: str
    ) -> Iterator[EpisodeRecord]:
        """Records from (sample, condition, epoch, JSON) rows; one that no longer parses
        is skipped and reported through `on_corrupt`, naming `what` it was."""
        for sample_id, condition, epoch, text in rows:
            try:
                yield EpisodeRecord.model_validate_json(text)
            except ValidationError as exc:
                self._on_corrupt(
                    f"{self.path}: skipped the corrupt {what} of run {run_id!r}, sample "
                    f"{sample_id!r}, condition {condition!r}, epoch {epoch}: {_first(exc)}"
                )

    def records(self, run_id: str, keys: Iterable[EpisodeKey]) -> Iterator[EpisodeRecord]:
        """The whole records of these episodes of the run, each read alone through the
        primary key, those not stored left out; one that no longer parses is skipped and
        reported through `on_corrupt`."""
        for sample_id, condition, epoch in keys:
            text = self._record_json(run_id, sample_id, condition, epoch)
            if text is not None:
                yield from self._parsed(run_id, [(sample_id, condition, epoch, text)], "record")

    def keys(self, run_id: str) -> Iterator[EpisodeKey]:
        """The keys of the run's stored episodes, read from their summaries' index."""
        with self._guard():
            rows = self._db.execute(
                "SELECT sample_id, condition, epoch FROM episode_summaries WHERE run_id = ?",
                (run_id,),
            )
            for row in rows:
                yield EpisodeKey(*row)

    def episode(
        self, run_id: str, sample_id: str, condition: str, epoch: int
    ) -> EpisodeRecord | None:
        """One episode's record, read alone through the primary key."""
        text = self._record_json(run_id, sample_id, condition, epoch)
        if text is None:
            return None
        try:
            return EpisodeRecord.model_validate_json(text)
        except ValidationError as exc:
            raise StoreError(
                f"{self.path}: the record of run {run_id!r}, sample {sample_id!r}, condition "
                f"{condition!r}, epoch {epoch} is corrupt: {_first(exc)}"
            ) from None

    def _record_json(self, run_id: str, sample_id: str, condition: str, epoch: int) -> str | None:
        with self._guard():
            row = self._db.execute(
                "SELECT record_json FROM episodes "
                "WHERE run_id = ? AND sample_id = ? AND condition = ? AND epoch = ?",
                (run_id, sample_id, condition, epoch),
            ).fetchone()
        return None if row is None else str(row[0])

    def count(self, run_id: str) -> dict[str, int]:
        with self._guard():
            rows = self._db.execute(
                "SELECT status, COUNT(*) FROM episodes WHERE run_id = ? GROUP BY status",
                (run_id,),
            )
            return dict(rows.fetchall())

    def scored_totals(
        self, run_id: str, value: str, given: str | None
    ) -> dict[str, tuple[int, float]]:
        """Per condition, the run's scored episodes (those whose score value `given` is 1,
        if one is named) and the sum of their score value `value`: summed by SQLite from
        the summaries, no record parsed, for a listing of many runs."""
        path = f'$.score.values."{value}"'
        only = None if given is None else f'$.score.values."{given}"'
        with self._guard():
            rows = self._db.execute(
                "SELECT condition, COUNT(*), TOTAL(json_extract(summary_json, ?)) "
                "FROM episode_summaries WHERE run_id = ? AND status = 'scored' "
                "AND json_valid(summary_json) "
                "AND (? IS NULL OR json_extract(summary_json, ?) = 1) GROUP BY condition",
                (path, run_id, only, only),
            )
            return {condition: (n, total) for condition, n, total in rows}

    # --- cached model answers -------------------------------------------------------------

    def responses_for(self, seed: int) -> list[CacheEntry]:
        """Every cached answer given in the episode with this seed, in any run (the seed is
        derived from the run seed, sample, condition and epoch), by its agent or its
        model-played user: what the job that runs it needs."""
        with self._guard():
            rows = self._db.execute(
                f"SELECT {_RESPONSE_COLUMNS} FROM responses WHERE seed = ?", (seed,)
            )
            return [CacheEntry(*row) for row in rows]

    def response(self, key: str) -> CacheEntry | None:
        """The cached answer with this key, with or without its episode."""
        with self._guard():
            row = self._db.execute(
                f"SELECT {_RESPONSE_COLUMNS} FROM responses WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        key, protocol, model, response, sample_id, epoch, seed = row
        return CacheEntry(key, protocol, model, response, sample_id or "", epoch or 0, seed or 0)

    def add_responses(self, entries: Iterable[CacheEntry]) -> None:
        """Commit answers at once, in one transaction."""
        rows = [
            (e.key, e.protocol, e.model, e.response, e.sample_id, e.epoch, e.seed) for e in entries
        ]
        if rows:
            self._write(
                f"INSERT OR REPLACE INTO responses ({_RESPONSE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

    # --- tables of higher layers ---------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The store's connection, for the layer that owns a table beside the engine's (the
        audits, the studies) to read it; SQLite's failures leave as `StoreError`, worded
        as the store's own."""
        with self._guard():
            yield self._db

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """The same, for writing: the block is one transaction, committed when it ends and
        rolled back when it raises."""
        with self._guard(), self._transaction():
            yield self._db

    # --- locks of runs being executed -----------------------------------------------------

    @contextmanager
    def lock_run(self, run_id: str) -> Iterator[None]:
        """Hold the run's lock for the block; StoreError names the holder when another live
        process holds it. Re-entrant for this store, released however the block ends."""
        if run_id not in self._locks:
            self._acquire(run_id)
        self._locks[run_id] = self._locks.get(run_id, 0) + 1
        try:
            yield
        finally:
            self._locks[run_id] -= 1
            if not self._locks[run_id]:
                del self._locks[run_id]
                self._release(run_id)

    def heartbeat(self, run_id: str) -> None:
        """Prove the run's executor alive; StoreError when another process took the lock
        over meanwhile (this one looked dead for `STALE_SECONDS`)."""
        with self._guard():
            updated = self._db.execute(
                "UPDATE run_locks SET heartbeat_at = ? WHERE run_id = ? AND pid = ? AND host = ?",
                (time.time(), run_id, os.getpid(), socket.gethostname()),
            ).rowcount
        if not updated:
            raise StoreError(
                f"run {run_id!r} was taken over by another process: this one gave no sign of "
                f"life for {STALE_SECONDS:.0f} s"
            )

    def _acquire(self, run_id: str) -> None:
        host = socket.gethostname()
        with self._guard(), self._transaction():
            row = self._db.execute(
                "SELECT pid, host, acquired_at, heartbeat_at FROM run_locks WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if row is not None and not _stale(*row):
                pid, holder, since, _ = row
                raise StoreError(
                    f"run {run_id!r} is being executed by pid {pid} on host {holder} since "
                    f"{since}; wait for it to finish, or stop that process"
                )
            now = datetime.now(UTC)
            self._db.execute(
                "INSERT OR REPLACE INTO run_locks VALUES (?, ?, ?, ?, ?)",
                (run_id, os.getpid(), host, f"{now:%Y-%m-%d %H:%M:%S} UTC", now.timestamp()),
            )

    def _release(self, run_id: str) -> None:
        # a lock left behind is taken over once this process ends or goes quiet
        with suppress(StoreError):
            self._write(
                "DELETE FROM run_locks WHERE run_id = ? AND pid = ? AND host = ?",
                [(run_id, os.getpid(), socket.gethostname())],
            )

    # --- plumbing -------------------------------------------------------------------------

    def _format(self) -> int:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        return int(version)

    def _refuse_newer(self) -> None:
        """StoreFormatError when a newer deedbench wrote the store in a newer format."""
        found = self._format()
        if found <= FORMAT:
            return
        writer = "a newer version"
        with suppress(sqlite3.Error):  # a store without the table still gets its message
            row = self._db.execute(
                "SELECT value FROM meta WHERE key = 'deedbench_version'"
            ).fetchone()
            if row is not None:
                writer = str(row[0])
        raise StoreFormatError(
            f"{self.path}: this store was written by deedbench {writer} (format {found}); "
            f"this is {__version__} (format {FORMAT}): upgrade deedbench"
        )

    def _refuse_unmigratable(self) -> None:
        """StoreFormatError, saying how, when an older store must be migrated (which
        writes to it) and the file or its folder is read-only."""
        if self._format() >= FORMAT or not self._has("runs"):
            return
        if os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK):
            return
        raise StoreFormatError(
            f"{self.path} is in format {self._format() or 1} of an earlier deedbench; this "
            f"{__version__} reads format {FORMAT} and migrates the store once, which writes "
            "to it, but the file or its folder is read-only. Make both writable (or copy "
            f"the file somewhere writable) and run any command on it once, e.g. "
            f"deedbench runs --store {self.path}"
        )

    def _has(self, table: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        return row is not None

    def _migrate(self) -> None:
        """Bring an older store to this format, in one transaction: cached answers get
        their episode columns (NULL for old rows), every stored record gets its summary
        (format 2; with progress for big stores), and the store records its format and
        who wrote it."""

        def missing() -> list[str]:
            have = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
            return [name for name in _EPISODE_COLUMNS if name not in have]

        if not missing() and self._format() == FORMAT:
            return
        with self._transaction():  # another process may be migrating the same file
            for name in missing():
                self._db.execute(
                    f"ALTER TABLE responses ADD COLUMN {name} {_EPISODE_COLUMNS[name]}"
                )
            if self._format() < FORMAT:
                if self._format() < 2:
                    self._summarize_all()
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('deedbench_version', ?)", (__version__,)
                )
                self._db.execute(f"PRAGMA user_version = {FORMAT}")

    def _summarize_all(self) -> None:
        """Summaries for every stored record, in the order the records were written."""
        (total, last) = self._db.execute("SELECT COUNT(*), MAX(rowid) FROM episodes").fetchone()
        if not total:
            return
        loud = total > _MIGRATE_CHUNK
        if loud:
            self._on_progress(
                f"{self.path}: migrating the store to format {FORMAT}: summarizing "
                f"{total:,} stored episodes once (reports read the summaries)"
            )
        done, low = 0, 0
        while low < last:
            high = low + _MIGRATE_CHUNK
            done += self._db.execute(
                _SUMMARIZE + "WHERE rowid > ? AND rowid <= ? ORDER BY rowid", (low, high)
            ).rowcount
            low = high
            if loud:
                self._on_progress(f"  {min(done, total):,} of {total:,}")

    def _probe_writable(self) -> None:
        """Fail now, not midway through a run, when the file cannot be written: rewrite a
        header field with its own value, and roll that back."""
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(f"PRAGMA user_version = {int(version)}")
        finally:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")

    def _write(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        with self._guard(), self._transaction():
            self._db.executemany(sql, rows)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(self._explain(exc)) from None

    def _explain(self, exc: sqlite3.Error) -> str:
        """A one-line message for what SQLite found wrong with the file."""
        text = str(exc)
        path = self.path
        if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text:
            return f"{path} is not a run store: the file is not an SQLite database"
        if "malformed" in text or "corrupt" in text:
            return f"the run store {path} is damaged ({text}): restore it from a copy"
        if path.exists() and not os.access(path, os.W_OK):
            return f"the run store {path} is read-only: deedbench needs to write to it"
        if not os.access(path.parent, os.W_OK):
            return (
                f"the folder of the run store {path} is read-only: SQLite keeps its journal "
                "beside the store, so the folder must be writable"
            )
        if "readonly" in text:
            return f"the run store {path} is read-only ({text})"
        return f"cannot use the run store {path}: {text}"


def _stale(pid: int, host: str, since: str, heartbeat_at: float) -> bool:
    """Whether a lock can be taken over: its heartbeat stopped, or its process is gone."""
    if time.time() - heartbeat_at > STALE_SECONDS:
        return True
    return host == socket.gethostname() and not _alive(pid)


def _alive(pid: int) -> bool:
    if os.name != "posix":
        return True  # no cheap check; the heartbeat decides
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed process its parent has not reaped yet (a zombie) still has its pid
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def _first(exc: ValidationError) -> str:
    """The first problem pydantic found, on one line."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def _to_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)
