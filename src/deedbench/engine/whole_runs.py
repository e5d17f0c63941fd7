"""Runs written or removed whole, each in one transaction of the run store.

`add_runs` records runs made elsewhere (an import of τ²'s result files or of Inspect logs)
with all their episodes at once: every run, every record and its summary in one SQLite
transaction. A reader never sees a run being imported, and an import that fails (bad
input, a full disk) or is killed leaves nothing behind, so the same files can be imported
again. A run executed here is recorded first and its episodes after (`RunStore.add`), since
it may run for days; an import has every record at hand.

`delete_run` removes a run with everything the store keeps of it: its episodes and their
summaries, its audits and user judgments (a table of `deedbench.audit`, whose schema the
engine makes with the rest), its lock. It refuses a run that a live process is executing:
it takes the run's lock first, as a second executor would. The answers the run paid for
stay: they are keyed by episode seed, not by run, and another run with the same seed
reuses them.

Both read and write the store through its connection (`RunStore.writing`), beside the
store's own module, so that the store's methods stay those a run needs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticSerializationError

from deedbench.engine.store import RunStore
from deedbench.engine.store_schema import SUMMARY_JSON, figures_of_run
from deedbench.errors import StoreError
from deedbench.records import EpisodeRecord, RunConfig

__all__ = ["Deleted", "add_runs", "delete_run", "unencodable"]

_SQLITE_MAX = 2**63 - 1  # SQLite's largest integer (an epoch is a column)
_SUMMARIZE_RUN = (
    "INSERT INTO episode_summaries (run_id, sample_id, condition, epoch, status, summary_json) "
    f"SELECT run_id, sample_id, condition, epoch, status, {SUMMARY_JSON} FROM episodes "
    "WHERE run_id = ? ORDER BY rowid"
)
# the tables holding a run's rows, dependents first; `runs` last
# (the summaries' and records' triggers keep the kinds' counts, facts and calls in step;
# the run's kinds go after them)
_RUN_TABLES = (
    "episode_summaries",
    "episodes",
    "episode_facts",
    "episode_kinds",
    "run_calls",
    "audits",
    "run_locks",
    "runs",
)


@dataclass(frozen=True)
class Deleted:
    """What `delete_run` removed of a run."""

    run_id: str
    episodes: int
    audits: int


def add_runs(store: RunStore, runs: Iterable[tuple[RunConfig, Iterable[EpisodeRecord]]]) -> None:
    """Record `runs` (each a configuration and its records) in one transaction: all of
    them, or, if anything fails, none. A run id the store has already is a `StoreError`,
    and so is a record that cannot be stored (named by run, sample, condition and epoch:
    two records of one episode, an epoch beyond SQLite's integers, text that is not
    Unicode). Records are read from their iterables as they are written."""
    with store.writing() as db:
        for config, records in runs:
            _add(db, config, records)


def _add(db: sqlite3.Connection, config: RunConfig, records: Iterable[EpisodeRecord]) -> None:
    run_id = config.run_id
    if db.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone():
        raise StoreError(f"run {run_id!r} already exists in the run store")
    db.execute(
        "INSERT INTO runs (run_id, created_at, config_json) VALUES (?, ?, ?)",
        (run_id, config.created_at, _json(config, f"run {run_id!r}")),
    )
    db.executemany(
        "INSERT INTO episodes (run_id, sample_id, condition, epoch, status, outcome, record_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        _rows(run_id, records),
    )
    db.execute(_SUMMARIZE_RUN, (run_id,))
    figures_of_run(db, run_id)  # what reports read of it: its kinds, facts and calls


def _rows(
    run_id: str, records: Iterable[EpisodeRecord]
) -> Iterator[tuple[str, str, str, int, str, str | None, str]]:
    seen: set[tuple[str, str, int]] = set()
    for r in records:
        where = (
            f"run {run_id!r}, sample {r.sample_id!r}, condition {r.condition!r}, epoch {r.epoch}"
        )
        if not 0 <= r.epoch <= _SQLITE_MAX:
            raise StoreError(f"{where}: the epoch is beyond what the store can hold")
        if (r.sample_id, r.condition, r.epoch) in seen:
            raise StoreError(f"{where}: two records of one episode")
        seen.add((r.sample_id, r.condition, r.epoch))
        outcome = r.score.outcome if r.score else None
        yield (run_id, r.sample_id, r.condition, r.epoch, r.status, outcome, _json(r, where))


def _json(value: EpisodeRecord | RunConfig, where: str) -> str:
    try:
        return value.model_dump_json()
    except (PydanticSerializationError, UnicodeEncodeError, ValueError) as exc:
        found = unencodable(value.model_dump())
        problem = (
            f"field {found[0]} holds text that is not Unicode ({found[1]!a}, a lone surrogate)"
            if found
            else str(exc)
        )
        raise StoreError(f"{where}: cannot be stored: {problem}") from None


def unencodable(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first string inside `value` (dicts, lists and tuples of them) that is not Unicode
    text UTF-8 can encode (a lone surrogate, as JSON's ``"\\udc80"`` decodes to): its path
    ("messages.1.content") and the characters at fault; None when there is none."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return path, value[exc.start : exc.end]
        return None
    items: Iterable[tuple[object, Any]] = ()
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    for key, item in items:
        if isinstance(key, str) and (found := unencodable(key, path)) is not None:
            return found
        found = unencodable(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


def delete_run(store: RunStore, run_id: str) -> Deleted:
    """Remove the run and everything the store keeps of it (its episodes, their
    summaries, its audits, its lock) in one transaction. `StoreError` when there is no
    such run, or when a live process is executing it (naming that process)."""
    store.require_run(run_id)
    with store.lock_run(run_id), store.writing() as db:
        (episodes,) = db.execute(
            "SELECT COUNT(*) FROM episodes WHERE run_id = ?", (run_id,)
        ).fetchone()
        (audits,) = db.execute("SELECT COUNT(*) FROM audits WHERE run_id = ?", (run_id,)).fetchone()
        for table in _RUN_TABLES:
            db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
    store.forget_kinds(run_id)
    return Deleted(run_id, int(episodes), int(audits))
