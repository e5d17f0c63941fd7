"""The studies table of a run store: what `deedbench study` records of a study, written and
read here, the one place that knows its rows.

A study is one row by name (its file, settings and run ids as JSON, `runner.study_record`);
its runs are rows of the store's own `runs`. The engine makes the table with the rest of the
schema, so a store has one format, and this module reaches it through the store's connection
(`RunStore.reading`, `writing`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from deedbench.engine.store import Readable, RunStore

__all__ = ["recorded_study", "save_study"]


def save_study(store: RunStore, name: str, study_json: str) -> None:
    """Record a study, replacing what an earlier invocation of it recorded (its first
    recording's time is kept)."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with store.writing() as db:
        db.executemany(
            "INSERT INTO studies (name, created_at, updated_at, study_json) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET updated_at = excluded.updated_at, "
            "study_json = excluded.study_json",
            [(name, now, now, study_json)],
        )


def recorded_study(store: Readable, name: str) -> str | None:
    """A recorded study's JSON, or None."""
    with store.reading() as db:
        row = db.execute("SELECT study_json FROM studies WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])
