"""The studies table: a study recorded by name, its first recording's time kept when it is
recorded again."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from deedbench.engine import RunStore
from deedbench.study.store import recorded_study, save_study


def test_a_study_is_recorded_and_replaced_by_name(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with RunStore(path) as store:
        assert recorded_study(store, "paper") is None
        save_study(store, "paper", '{"runs": ["a"]}')
        with closing(sqlite3.connect(path)) as db:
            db.execute("UPDATE studies SET created_at = 'then', updated_at = 'then'")
            db.commit()
        save_study(store, "paper", '{"runs": ["a", "b"]}')
        save_study(store, "other", "{}")
        assert recorded_study(store, "paper") == '{"runs": ["a", "b"]}'
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT name, created_at, updated_at FROM studies ORDER BY name")
        (other, *_), (paper, created, updated) = rows.fetchall()
    assert (other, paper, created) == ("other", "paper", "then") and updated != "then"
