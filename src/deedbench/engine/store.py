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

Beside each record the store keeps its summary (format 2): the record with every message
cut to the role and token usage of its model call, in a table of its own, written by the
record's own transaction. A summary is still an `EpisodeRecord`, so every reader that takes
records (a run's re-read, the viewer's rows, an export's CSV) takes it unchanged; SQLite
makes it from the stored JSON (no Python parse on the write path). Beside the summaries
(format 3) the store keeps what a report of a million episodes reads instead of a million
summaries: each kind of episode once per run with its count, one (epoch, kind) row per
episode, and each run's calls' token usage summed, written with the record
(`engine.store_schema` says what each table holds and how triggers keep it right;
`engine.store_figures` reads it). So listing runs costs what their kinds cost, and a
report what a run's kinds and two small integers per episode cost.

The store carries its format (`records.FORMAT`, in SQLite's `user_version`) and the
deedbench version that wrote it in that format: an older store is migrated when opened, in
one transaction, with progress for a big one (a read-only one is refused, saying how); a
newer one is refused with both versions named, before anything in it is touched. The locks
of runs being executed are `engine.run_locks`'.

Every SQLite failure leaves as a `StoreError` whose message names the file and says
what is wrong with it (a folder, not SQLite, damaged, read-only); a record that no
longer parses is skipped by readers and reported through `on_corrupt`, naming it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from deedbench.engine import store_figures, store_schema
from deedbench.engine.cache import CacheEntry
from deedbench.engine.run_locks import (  # noqa: F401  (their home before; still found here)
    HEARTBEAT_SECONDS,
    LIVE_SECONDS,
    STALE_SECONDS,
    RunLocks,
    executing,
)
from deedbench.engine.store_schema import SUMMARIZE, SUMMARY_JSON  # noqa: F401  (likewise)
from deedbench.errors import StoreError, StoreFormatError
from deedbench.records import FORMAT, EpisodeKey, EpisodeRecord, RunConfig, Usage

if TYPE_CHECKING:  # numpy is imported where figures are read
    import numpy as np

__all__ = ["Readable", "RunStore"]

_RESPONSE_COLUMNS = "key, protocol, model, response_json, sample_id, epoch, seed"
_READ_CHUNK = 4_096  # rowids a run's rows are read by, in the order written
_ENDS_WHOLE = re.compile(rb'"duration_s":-?[0-9][0-9.eE+-]*\}$')  # how a record's JSON ends


class Readable(Protocol):
    """A store whose tables a higher layer reads (`deedbench.audit.store`,
    `deedbench.study.store`): the run store, or the viewer's read-only one."""

    def reading(self) -> AbstractContextManager[sqlite3.Connection]: ...


class RunStore(RunLocks):
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
        self._kinds = store_figures.KindIds()
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
                store_schema.refuse_newer(self._db, self.path)
                store_schema.refuse_unmigratable(self._db, self.path)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                # a summary replaced takes its kind's count, fact and calls along (a trigger)
                self._db.execute("PRAGMA recursive_triggers=ON")
                self._db.executescript(store_schema.TABLES)
                if store_schema.needs_migration(self._db):
                    with self._transaction():  # another process may be migrating the file
                        if store_schema.needs_migration(self._db):
                            store_schema.migrate(self._db, self.path, self._on_progress)
                self._db.executescript(store_schema.INDEXES)
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
                store_schema.refuse_newer(self._db, self.path)
                found = store_schema.format_of(self._db)
                if found < FORMAT or store_schema.needs_migration(self._db):
                    raise StoreFormatError(
                        f"{self.path} is in format {found or 1}; reading it takes "
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

    def forget_kinds(self, run_id: str) -> None:
        """Forget the kind numbers this writer keeps of a run (deleted, or written by SQL)."""
        self._kinds.forget(run_id)

    def create_run(self, config: RunConfig) -> None:
        with self._guard():
            try:
                self._db.execute(
                    "INSERT INTO runs (run_id, created_at, config_json) VALUES (?, ?, ?)",
                    (config.run_id, config.created_at, config.model_dump_json()),
                )
            except sqlite3.IntegrityError:
                raise StoreError(f"run {config.run_id!r} already exists in {self.path}") from None
        self._kinds.forget(config.run_id)

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
        """Every run's stored episodes by status, from its kinds (nothing per episode)."""
        with self._guard():
            return store_figures.counts(self._db)

    def call_usage(self) -> dict[str, list[tuple[str, bool, Usage]]]:
        """Per run, the token usage of its model calls summed per (role, billed: not
        answered by deedbench's response cache), in the order each role first called; a
        judge's calls (in each record's usage, no message of the conversation) as "judge"."""
        with self._guard():
            return store_figures.call_usage(self._db)

    # --- what reports read of a run ---------------------------------------------------------

    def stored_kinds(self, run_id: str) -> list[tuple[int, int, str]]:
        """The run's kinds of stored episodes (`records.kinds`): (kind, episodes, JSON)."""
        with self._guard():
            return store_figures.kinds(self._db, run_id)

    def stored_facts(self, run_id: str) -> tuple[np.ndarray, np.ndarray]:
        """The epoch and kind of each of the run's stored episodes, in the order written."""
        self.flush()
        with self._guard():
            return store_figures.facts(self._db, run_id)

    def stored_calls(self, run_id: str) -> list[tuple[str, bool, Usage]]:
        """The run's model calls' token usage per (role, billed), as `call_usage`."""
        with self._guard():
            return store_figures.calls(self._db, run_id)

    def report_corrupt(self, message: str) -> None:
        """Say that a stored record, summary or configuration no longer parses."""
        self._on_corrupt(message)

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
        """Write every queued record in one transaction, with its summary, kind and fact."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        # an episode twice in one batch (an error, then its retry): the last is kept, in
        # its place, as writing both in turn would leave it
        kept: dict[tuple[str, str, str, int], tuple[str, EpisodeRecord, str | None]] = {}
        for run_id, r, text in reversed(self._pending):
            kept.setdefault((run_id, r.sample_id, r.condition, r.epoch), (run_id, r, text))
        pending = list(reversed(kept.values()))
        rows = [
            (
                run_id,
                r.sample_id,
                r.condition,
                r.epoch,
                r.status,
                r.score.outcome if r.score else None,
                text if text is not None else r.model_dump_json(),
            )
            for run_id, r, text in pending
        ]
        with self._guard(), self._transaction():  # each record with its summary and figures
            self._db.executemany(
                "INSERT OR REPLACE INTO episodes "
                "(run_id, sample_id, condition, epoch, status, outcome, record_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._db.executemany(
                SUMMARIZE + "WHERE run_id = ? AND sample_id = ? AND condition = ? AND epoch = ?",
                [row[:4] for row in rows],
            )
            store_figures.write_figures(self._db, self._kinds, [(run, r) for run, r, _ in pending])
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

    def _written(self, run_id: str, table: str, column: str) -> Iterator[tuple[str, str, int, Any]]:
        """The run's (sample, condition, epoch, `column`) rows of `table`, in the order
        written: a range of rowids at a time, read by rowid (`+run_id`: with `run_id = ?`
        SQLite walked the run's whole index by epoch for every range, and sorted)."""
        low, high = self._db.execute(
            f"SELECT MIN(rowid), MAX(rowid) FROM {table} WHERE run_id = ?", (run_id,)
        ).fetchone()
        if low is None:
            return
        for start in range(low, high + 1, _READ_CHUNK):
            rows = self._db.execute(
                f"SELECT sample_id, condition, epoch, {column} FROM {table} "
                "WHERE rowid BETWEEN ? AND ? AND +run_id = ? ORDER BY rowid",
                (start, min(start + _READ_CHUNK - 1, high), run_id),
            )
            for row in rows:  # noqa: UP028  (`yield from` closes the cursor: of a closed store)
                yield row

    def record_texts(self, run_id: str) -> Iterator[bytes]:
        """The run's records as stored (their JSON's UTF-8 bytes, not parsed or decoded) in
        the order they were written, for an export that writes them as they are. A record
        whose text does not end as a record's does (its last field, `duration_s`) is
        parsed, and skipped and reported through `on_corrupt` when it is no JSON object: a
        record cut short is caught at the cost of a look at its last bytes (validating
        each would cost more than reading and writing it)."""
        with self._guard():
            for sample_id, condition, epoch, text in self._written(
                run_id, "episodes", "CAST(record_json AS BLOB)"
            ):
                if _ENDS_WHOLE.search(text, max(0, len(text) - 64)) or _json_object(text):
                    yield text
                else:
                    self._on_corrupt(
                        f"{self.path}: skipped the corrupt record of run {run_id!r}, sample "
                        f"{sample_id!r}, condition {condition!r}, epoch {epoch}: not JSON"
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

    def stored_in_epoch(self, run_id: str, epoch: int) -> set[tuple[str, str]]:
        """The (sample, condition) of the run's stored episodes of one epoch."""
        with self._guard():
            rows = self._db.execute(
                "SELECT sample_id, condition FROM episodes WHERE run_id = ? AND epoch = ?",
                (run_id, epoch),
            )
            return set(rows.fetchall())

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
        """The run's stored episodes by status, from its kinds (nothing per episode)."""
        self.flush()
        with self._guard():
            return store_figures.counts(self._db, run_id).get(run_id, {})

    def scored_totals(
        self, run_id: str, value: str, given: str | None
    ) -> dict[str, tuple[int, float]]:
        """Per condition, the run's scored episodes (those whose score value `given` is 1,
        if one is named) and the sum of their score value `value`: summed by SQLite from
        the run's kinds, nothing per episode, for a listing of many runs."""
        with self._guard():
            return store_figures.scored_totals(self._db, run_id, value, given)

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

    # --- plumbing -------------------------------------------------------------------------

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


def _json_object(text: bytes) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:  # UnicodeDecodeError too
        return False


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
