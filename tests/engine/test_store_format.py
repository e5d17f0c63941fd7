"""The store's format version: an older store migrates, a newer one is refused by name."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from tests.engine.test_store import make_config

from deedbench import __version__
from deedbench.engine import RunStore, StoreFormatError
from deedbench.records import FORMAT


def made_by_this_version(path: Path) -> None:
    with RunStore(path) as store:
        store.create_run(make_config())


def user_version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def test_a_new_store_records_its_format_and_writer(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    made_by_this_version(path)
    assert user_version(path) == FORMAT
    with closing(sqlite3.connect(path)) as db:
        [(writer,)] = db.execute("SELECT value FROM meta WHERE key = 'deedbench_version'")
    assert writer == __version__


def test_a_store_from_before_formats_migrates_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    made_by_this_version(path)
    with closing(sqlite3.connect(path)) as db:  # as 0.1.0 left it: no format, no meta
        db.execute("PRAGMA user_version = 0")
        db.execute("DROP TABLE meta")
        db.commit()
    with RunStore(path) as store:
        assert store.require_run("run-1").run_id == "run-1"
    assert user_version(path) == FORMAT


def test_a_newer_store_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    made_by_this_version(path)
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"PRAGMA user_version = {FORMAT + 1}")
        db.execute("UPDATE meta SET value = '9.9.9' WHERE key = 'deedbench_version'")
        db.commit()
    with pytest.raises(StoreFormatError) as raised:
        RunStore(path)
    assert str(raised.value) == (
        f"{path}: this store was written by deedbench 9.9.9 (format {FORMAT + 1}); "
        f"this is {__version__} (format {FORMAT}): upgrade deedbench"
    )
    assert user_version(path) == FORMAT + 1  # refused before anything was touched
