"""A run store read-only: SQL that never locks, migrates or writes, for a process that may not
write the store, or must not (the viewer, `deedbench view`).

Every call opens the file with SQLite's read-only URI (`mode=ro`, `query_only`), so a reader
can sit beside a run being executed (WAL lets readers read while the one writer writes)
and can never migrate, lock or change the store, whatever a bug asked it to do.

A reader of a WAL store needs its `-shm` index beside it, and SQLite makes it (and an
empty `-wal`) when they are missing, even for `mode=ro`. Where this user may not write the
store and its folder (another user's store, a read-only folder or file system), the reader
does not let SQLite make them: it could not (the store would not open), or it would leave
files owned by this user beside someone else's store that their next run cannot write.
There, while no `-wal` exists, nothing is writing the store (a writer makes the log
first), so it is opened `immutable` (no lock, no files); when a `-wal` exists, a writer is
at work or was killed, and the store is read through the writer's own files (`mode=ro`
reads an existing `-shm` it cannot write), so nothing committed is missed. The choice is
made again for every connection, so a writer that starts later is seen.

Lists and figures need no transcript. A run's figures and its episodes' counts read what
the store keeps of each kind of episode (`engine.store_figures`, format 3: each kind once
per run with its count, an (epoch, kind) per episode), so counting a run's episodes, by
outcome or for a filter, costs what its kinds cost, not what its episodes do; a page of
episodes is SQL over the episode summaries (`engine.store`, format 2: each record with its
messages cut to the role and token usage of each model call) that filters and pages them:
a run's size costs the reader no memory. Python parses a transcript only for the episode
asked for (`episode`). A store of an earlier format, which is never migrated here, is read
from its summaries (or, before format 2, its records: the same JSON paths, its summaries
made by SQLite), counted episode by episode.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pydantic import ValidationError

from deedbench.engine import store_figures
from deedbench.engine.store_schema import SUMMARY_JSON
from deedbench.errors import StoreError
from deedbench.records import EpisodeKey, EpisodeRecord, RunConfig, Usage

if TYPE_CHECKING:  # numpy is imported where figures are read
    import numpy as np

__all__ = ["ListedEpisode", "ReadOnlyStore", "Selection", "read_only_uri", "reading_connection"]

# What a list shows of an episode, from its summary's JSON (`l.j`).
_OUTCOME = "l.j ->> '$.score.outcome'"
_SHOWN = f"CASE WHEN l.status = 'error' THEN 'error' ELSE coalesce({_OUTCOME}, '?') END"
_LISTED = (
    f"l.rowid, l.sample_id, l.condition, l.epoch, l.status, {_SHOWN}, l.j ->> '$.score.choice'"
)


@dataclass(frozen=True)
class Selection:
    """Which of a run's episodes a list shows, as SQL tests them: each field None (or
    empty) selects all. `samples` and `metadata` are the sample ids and the metadata
    (JSON as the store renders it) allowed; `counted` selects the scored episodes a rate
    counts: those whose score value `given` is 1, if given; `text` is words in the
    transcript; `fault` is whose failure an episode was (``party:user``) or a kind of fault
    found in it (``fault:task.gold_raises``), as the report's links write them."""

    condition: str | None = None
    samples: Collection[str] | None = None
    metadata: Collection[str] | None = None
    status: str | None = None
    outcome: str | None = None
    counted: bool = False
    given: str | None = None
    text: str = ""
    fault: str | None = None


@dataclass(frozen=True)
class ListedEpisode:
    """One row of a list of episodes."""

    rowid: int
    sample_id: str
    condition: str
    epoch: int
    status: str
    shown: str  # "error", its outcome, or "?"
    choice: str | None


class ReadOnlyStore:
    """Reads runs and records from a store file, read-only.

    `on_corrupt` gets a message naming each stored record or configuration that no
    longer parses, once (readers read the same records again); readers skip it, as the
    run store's own readers do.
    """

    def __init__(self, path: Path, on_corrupt: Callable[[str], None]) -> None:
        self.path = path
        self._file = path.resolve()
        self._on_corrupt = on_corrupt
        self._said: set[str] = set()
        with self.reading() as db:  # fail now, naming the file, if it is no run store
            db.execute("SELECT run_id FROM runs LIMIT 1").fetchall()
            (found,) = db.execute("PRAGMA user_version").fetchone()
        self.format = int(found)  # 3 and up: runs' kinds of episode are kept (`counted`)
        # The episodes as lists read them (`l`: run_id, sample_id, condition, epoch,
        # status, j the summary's JSON) and as figures parse them (`light`).
        if found >= 2:
            self._table = (
                "(SELECT rowid, run_id, sample_id, condition, epoch, status, "
                "summary_json AS j FROM episode_summaries)"
            )
            self._light = "l.j"
        else:  # the record's JSON has the same paths; its summary is made to be parsed
            self._table = (
                "(SELECT rowid, run_id, sample_id, condition, epoch, status, "
                "record_json AS j FROM episodes)"
            )
            self._light = SUMMARY_JSON.replace("record_json", "l.j")

    # --- runs ------------------------------------------------------------------------------

    def run_ids(self) -> list[str]:
        """Every run, newest first."""
        with self.reading() as db:
            rows = db.execute("SELECT run_id FROM runs ORDER BY created_at DESC, run_id DESC")
            return [run_id for (run_id,) in rows]

    def config(self, run_id: str) -> RunConfig | None:
        """A run's configuration; None for no such run, or one that no longer parses."""
        with self.reading() as db:
            row = db.execute("SELECT config_json FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        try:
            return RunConfig.model_validate_json(row[0])
        except ValidationError as exc:
            self.report_corrupt(
                f"{self.path}: skipped run {run_id!r}, its configuration is corrupt: "
                + exc.errors()[0]["msg"]
            )
            return None

    def last_rowid(self) -> int | None:
        """The rowid of the last episode written: it moves with every record written or
        rewritten (a rewritten one gets a new rowid)."""
        with self.reading() as db:
            (rowid,) = db.execute(f"SELECT MAX(rowid) FROM {self._table}").fetchone()
            return None if rowid is None else int(rowid)

    @property
    def counted(self) -> bool:
        """Whether the store keeps its runs' kinds of episode (format 3 and up)."""
        return self.format >= 3

    def episode_counts(self) -> dict[str, tuple[dict[str, int], int]]:
        """Every run's stored episodes by status ("scored", "error"), with the rowid of
        its last one; runs without episodes left out. From the runs' kinds (a store of an
        earlier format: every summary, 0.06 s for 100,000 here)."""
        found: dict[str, tuple[dict[str, int], int]] = {}
        if self.counted:
            with self.reading() as db:
                for run_id, counts in store_figures.counts(db).items():
                    (last,) = db.execute(
                        "SELECT MAX(rowid) FROM episode_summaries WHERE run_id = ?", (run_id,)
                    ).fetchone()
                    found[run_id] = (counts, int(last or 0))
            return found
        with self.reading() as db:
            for run_id, status, n, rowid in db.execute(
                f"SELECT run_id, status, COUNT(*), MAX(rowid) FROM {self._table} "
                "GROUP BY run_id, status"
            ):
                counts, last = found.get(run_id, ({}, 0))
                counts[status] = n
                found[run_id] = (counts, max(last, rowid))
        return found

    # --- episodes --------------------------------------------------------------------------

    def light_records(
        self, run_id: str, *, condition: str | None = None, epoch: int | None = None
    ) -> Iterator[tuple[int, EpisodeRecord]]:
        """The run's episode summaries (of one condition, one epoch, if given) in the
        order they were written: each record with its messages cut to their role and
        token usage (costs are counted per call), everything a summary or a pairing
        reads."""
        where = " AND l.condition = :condition" if condition is not None else ""
        where += " AND l.epoch = :epoch" if epoch is not None else ""
        with self.reading() as db:
            rows = db.execute(
                f"SELECT l.rowid, l.sample_id, l.condition, l.epoch, {self._light} "
                f"FROM {self._table} AS l WHERE l.run_id = :run{where} ORDER BY l.rowid",
                {"run": run_id, "condition": condition, "epoch": epoch},
            )
            for rowid, sample_id, cond, ep, text in rows:
                record = self._parse(text, run_id, sample_id, cond, ep)
                if record is not None:
                    yield rowid, record

    def kinds(self, run_id: str, after: int) -> Iterator[tuple[str, str, str, str | None, int]]:
        """What the run's episodes written after rowid `after` are, each kind once:
        (sample, condition, metadata JSON, outcome, the last rowid of that kind); from
        the run's kinds where the store keeps them (every kind, then; the rowid the
        run's last)."""
        if self.counted:
            with self.reading() as db:
                (last,) = db.execute(
                    "SELECT MAX(rowid) FROM episode_summaries WHERE run_id = ?", (run_id,)
                ).fetchone()
                if last is None or last <= after:
                    return
                yield from (
                    (sample, condition, metadata, outcome, int(last))
                    for sample, condition, metadata, outcome in db.execute(
                        "SELECT kind_json ->> '$.sample_id', kind_json ->> '$.condition', "
                        "kind_json -> '$.metadata', kind_json ->> '$.score.outcome' "
                        "FROM episode_kinds WHERE run_id = ? AND episodes > 0",
                        (run_id,),
                    )
                )
            return
        with self.reading() as db:
            yield from db.execute(
                f"SELECT l.sample_id, l.condition, l.j -> '$.metadata', {_OUTCOME}, "
                f"MAX(l.rowid) FROM {self._table} AS l WHERE l.run_id = ? AND l.rowid > ? "
                "GROUP BY 1, 2, 3, 4",
                (run_id, after),
            )

    def tally(self, run_id: str, chosen: Selection) -> list[tuple[str, str, str, int]]:
        """How many of the chosen episodes each (condition, sample) has, per what a list
        shows of them ("error", an outcome or "?"): from the run's kinds where the store
        keeps them and nothing is searched in transcripts (else episode by episode)."""
        if self.counted and not chosen.text and chosen.metadata is None:
            where, args = _kind_where(run_id, chosen)
            shown = (
                "CASE WHEN k.j ->> '$.status' = 'error' THEN 'error' "
                "ELSE coalesce(k.j ->> '$.score.outcome', '?') END"
            )
            with self.reading() as db:
                return db.execute(
                    f"SELECT k.j ->> '$.condition', k.j ->> '$.sample_id', {shown}, "
                    "SUM(k.episodes) FROM (SELECT run_id, episodes, kind_json AS j "
                    f"FROM episode_kinds) AS k WHERE k.episodes > 0 AND {where} GROUP BY 1, 2, 3",
                    args,
                ).fetchall()
        where, args = self._where(run_id, chosen)
        with self.reading() as db:
            return db.execute(
                f"SELECT l.condition, l.sample_id, {_SHOWN}, COUNT(*) FROM {self._table} AS l "
                f"WHERE {where} GROUP BY 1, 2, 3",
                args,
            ).fetchall()

    def newest(
        self, run_id: str, chosen: Selection, offset: int, limit: int
    ) -> list[ListedEpisode]:
        """A page of the chosen episodes, the last written first."""
        where, args = self._where(run_id, chosen)
        args.update(limit=limit, offset=offset)
        with self.reading() as db:
            rows = db.execute(
                f"SELECT {_LISTED} FROM {self._table} AS l WHERE {where} "
                "ORDER BY l.rowid DESC LIMIT :limit OFFSET :offset",
                args,
            )
            return [ListedEpisode(*row) for row in rows]

    def sliced(
        self, run_id: str, chosen: Selection, slices: Sequence[tuple[str, str, int, int]]
    ) -> list[ListedEpisode]:
        """The chosen episodes of each (condition, sample, offset, limit) slice, by epoch:
        parts of the report's order, whose (condition, sample) buckets the caller ranks."""
        where, args = self._where(run_id, chosen)
        found: list[ListedEpisode] = []
        with self.reading() as db:
            for condition, sample_id, offset, limit in slices:
                rows = db.execute(
                    f"SELECT {_LISTED} FROM {self._table} AS l WHERE {where} "
                    "AND l.condition = :in_condition AND l.sample_id = :in_sample "
                    "ORDER BY l.epoch LIMIT :limit OFFSET :offset",
                    {
                        **args,
                        "in_condition": condition,
                        "in_sample": sample_id,
                        "limit": limit,
                        "offset": offset,
                    },
                )
                found.extend(ListedEpisode(*row) for row in rows)
        return found

    def stored_kinds(self, run_id: str) -> list[tuple[int, int, str]]:
        """The run's kinds of stored episodes (format 3: `engine.store_figures`)."""
        with self.reading() as db:
            return store_figures.kinds(db, run_id)

    def stored_facts(self, run_id: str) -> tuple[np.ndarray, np.ndarray]:
        """The epoch and kind of each of the run's stored episodes, in the order written."""
        with self.reading() as db:
            return store_figures.facts(db, run_id)

    def stored_calls(self, run_id: str) -> list[tuple[str, bool, Usage]]:
        """The run's model calls' token usage per (role, billed)."""
        with self.reading() as db:
            return store_figures.calls(db, run_id)

    def conditions_of(self, run_id: str, sample_id: str, epoch: int) -> list[str]:
        """The conditions in which this sample's epoch is stored."""
        with self.reading() as db:
            rows = db.execute(
                f"SELECT l.condition FROM {self._table} AS l "
                "WHERE l.run_id = ? AND l.sample_id = ? AND l.epoch = ?",
                (run_id, sample_id, epoch),
            )
            return [condition for (condition,) in rows]

    def episode(self, run_id: str, key: EpisodeKey) -> EpisodeRecord | None:
        """One episode's whole record, transcript and all."""
        with self.reading() as db:
            row = db.execute(
                "SELECT record_json FROM episodes "
                "WHERE run_id = ? AND sample_id = ? AND condition = ? AND epoch = ?",
                (run_id, key.sample_id, key.condition, key.epoch),
            ).fetchone()
        return None if row is None else self._parse(row[0], run_id, *key)

    def stored_in(self, run_ids: Sequence[str], key: EpisodeKey) -> list[str]:
        """Which of these runs hold the episode `key`."""
        with self.reading() as db:
            rows = db.execute(
                "SELECT run_id FROM episodes WHERE sample_id = ? AND condition = ? AND epoch = ? "
                f"AND run_id IN ({', '.join('?' * len(run_ids))})",
                (key.sample_id, key.condition, key.epoch, *run_ids),
            )
            found = {run_id for (run_id,) in rows}
        return [r for r in run_ids if r in found]

    def report_corrupt(self, message: str) -> None:
        """Say that a record or configuration no longer parses, once however often it
        is read."""
        if message not in self._said:
            self._said.add(message)
            self._on_corrupt(message)

    # --- the connection --------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection of its own, closed when the block ends; also how the
        layers that own a table of the store read it (`deedbench.audit.store`). SQLite's
        failures leave as `StoreError`, naming the file."""
        try:
            with closing(sqlite3.connect(self._uri(), uri=True, timeout=10)) as db:
                db.execute("PRAGMA query_only = ON")
                yield db
        except sqlite3.Error as exc:
            raise StoreError(self._explain(exc)) from None

    # --- plumbing --------------------------------------------------------------------------

    @staticmethod
    def _where(run_id: str, chosen: Selection) -> tuple[str, dict[str, Any]]:
        """SQL that selects these episodes of the run (of `l`), and its parameters."""
        parts = ["l.run_id = :run"]
        args: dict[str, Any] = {"run": run_id}
        if chosen.condition is not None:
            parts.append("l.condition = :condition")
            args["condition"] = chosen.condition
        for name, column, allowed in (
            ("samples", "l.sample_id", chosen.samples),
            ("metadata", "l.j -> '$.metadata'", chosen.metadata),
        ):
            if allowed is not None:
                parts.append(f"{column} IN (SELECT value FROM json_each(:{name}))")
                args[name] = _json_list(allowed)
        if chosen.status is not None:
            parts.append("l.status = :status")
            args["status"] = chosen.status
        if chosen.outcome is not None:
            parts.append(f"{_OUTCOME} = :outcome")
            args["outcome"] = chosen.outcome
        if chosen.fault is not None:
            kind, _, value = chosen.fault.partition(":")
            args["fault"] = value
            if kind == "party":
                parts.append("l.j ->> '$.score.attribution.party' = :fault")
            else:
                parts.append(
                    "EXISTS (SELECT 1 FROM json_each(l.j, '$.score.attribution.faults') "
                    "WHERE value ->> '$.kind' = :fault)"
                )
                if kind != "fault":
                    args["fault"] = None  # neither: selects nothing
        if chosen.counted:
            parts.append("l.status = 'scored' AND json_type(l.j, '$.score') = 'object'")
            if chosen.given is not None:
                parts.append(
                    "(SELECT value FROM json_each(l.j, '$.score.values') WHERE key = :given) = 1.0"
                )
                args["given"] = chosen.given
        if chosen.text:
            text = chosen.text
            args["pattern"] = (
                "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            )
            # The raw JSON is a fast first sieve, where the text is written there as it is.
            sieve = (
                ""
                if any(c in text for c in '"\\') or not text.isprintable()
                else "AND e.record_json LIKE :pattern ESCAPE '\\' "
            )
            parts.append(
                "EXISTS (SELECT 1 FROM episodes AS e WHERE e.run_id = l.run_id "
                "AND e.sample_id = l.sample_id AND e.condition = l.condition "
                f"AND e.epoch = l.epoch {sieve}AND EXISTS (SELECT 1 FROM "
                "json_tree(e.record_json, '$.messages') WHERE type = 'text' "
                "AND atom LIKE :pattern ESCAPE '\\'))"
            )
        return " AND ".join(parts), args

    def _parse(
        self, text: str, run_id: str, sample_id: str, condition: str, epoch: int
    ) -> EpisodeRecord | None:
        try:
            return EpisodeRecord.model_validate_json(text)
        except ValidationError as exc:
            self.report_corrupt(
                f"{self.path}: skipped the corrupt record of run {run_id!r}, sample "
                f"{sample_id!r}, condition {condition!r}, epoch {epoch}: {exc.errors()[0]['msg']}"
            )
            return None

    def _uri(self) -> str:
        return read_only_uri(self._file)

    def _explain(self, exc: sqlite3.Error) -> str:
        text = str(exc)
        if "not a database" in text or "no such table" in text:
            return f"{self.path} is not a run store ({text})"
        if "malformed" in text or "corrupt" in text:
            return f"the run store {self.path} is damaged ({text}): restore it from a copy"
        return f"cannot read the run store {self.path}: {text}"


def read_only_uri(path: Path) -> str:
    """SQLite's URI to read the store at `path` without writing it: `mode=ro`, or
    `immutable` where SQLite must not make the WAL's files (the module's docstring)."""
    file = path.resolve()
    uri = f"file:{quote(str(file))}?mode=ro"
    if _writable(file) and os.access(file.parent, os.W_OK):
        return uri
    if os.path.exists(f"{file}-wal"):
        return uri
    return uri + "&immutable=1"


def reading_connection(path: Path) -> sqlite3.Connection:
    """One long-lived connection that only reads, for `RunStore(read_only=True)` (what
    reading commands open): the usual one, `query_only`, where this process may write the
    file and its folder (root too: an immutable file refuses it), so that closing it
    checkpoints the log and leaves no -wal beside the store; else SQLite's read-only one
    (`read_only_uri`), which makes no file beside a store it cannot write."""
    try:
        os.close(os.open(path, os.O_RDWR))
        mine = os.access(path.parent, os.W_OK)
    except OSError:
        mine = False
    if mine:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA query_only = ON")
            db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return db
        except sqlite3.Error:  # a folder that takes no -wal after all (immutable, for root)
            db.close()
    try:
        return sqlite3.connect(
            read_only_uri(path), uri=True, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the run store {path}: {exc}") from None


def _writable(file: Path) -> bool:
    """Whether this process may write `file`: asked of the file itself, since root passes
    `os.access` for an immutable one."""
    try:
        os.close(os.open(file, os.O_RDWR))
    except OSError:
        return False
    return True


def _json_list(values: Collection[str]) -> str:
    return json.dumps(sorted(values))


def _kind_where(run_id: str, chosen: Selection) -> tuple[str, dict[str, Any]]:
    """SQL that selects the chosen kinds of the run (of `k`: `j` its JSON, as
    `records.kinds` writes it), and its parameters; no metadata, no transcript text."""
    parts = ["k.run_id = :run"]
    args: dict[str, Any] = {"run": run_id}
    if chosen.condition is not None:
        parts.append("k.j ->> '$.condition' = :condition")
        args["condition"] = chosen.condition
    if chosen.samples is not None:
        parts.append("k.j ->> '$.sample_id' IN (SELECT value FROM json_each(:samples))")
        args["samples"] = _json_list(chosen.samples)
    if chosen.status is not None:
        parts.append("k.j ->> '$.status' = :status")
        args["status"] = chosen.status
    if chosen.outcome is not None:
        parts.append("k.j ->> '$.score.outcome' = :outcome")
        args["outcome"] = chosen.outcome
    if chosen.fault is not None:
        kind, _, value = chosen.fault.partition(":")
        args["fault"] = value if kind in ("party", "fault") else None
        if kind == "party":
            parts.append("k.j ->> '$.score.party' = :fault")
        else:
            parts.append(
                "EXISTS (SELECT 1 FROM json_each(k.j, '$.score.faults') WHERE value = :fault)"
            )
    if chosen.counted:
        parts.append("k.j ->> '$.status' = 'scored' AND json_type(k.j, '$.score') = 'object'")
        if chosen.given is not None:
            parts.append(
                "(SELECT value FROM json_each(k.j, '$.score.values') WHERE key = :given) = 1.0"
            )
            args["given"] = chosen.given
    return " AND ".join(parts), args
