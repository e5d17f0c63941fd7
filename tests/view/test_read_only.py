"""The viewer reads a store it cannot write, and writes nothing beside it: a store in a
read-only folder, another user's store in a folder everyone may write (such as /tmp),
and another user's store while that user's run writes it.

Permissions do not stop root, so as root the reading is done by a forked child that
became the user nobody (`as_nobody`), whom they do stop: the child first checks that it
cannot write the folder, so each test shows what it claims. As any other user the test
is that user, whom the permissions already stop; a store owned by another user cannot
be made then, and those tests are skipped.
"""

from __future__ import annotations

import os
import pickle
import pwd
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from deedbench.engine import RunStore
from deedbench.engine.read_only_store import Selection
from deedbench.records import EpisodeKey
from deedbench.view import StoreReader
from reports._html_support import Reports

ROOT = os.geteuid() == 0


def as_nobody(work: Callable[[], Any]) -> Any:
    """`work()`'s answer, computed by a forked child as the user nobody (as root), or
    here (as anyone else). Everything `work` imports must be imported already: nobody
    cannot read root's Python installation."""
    if not ROOT:
        return work()
    nobody = pwd.getpwnam("nobody")
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never back into pytest
        answer: tuple[str, Any]
        try:
            os.close(reading)
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            answer = ("answer", work())
        except BaseException as exc:  # said to the parent, whatever it is
            answer = ("error", f"{type(exc).__name__}: {exc}")
        with os.fdopen(writing, "wb") as out:
            pickle.dump(answer, out)
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as into:
        data = into.read()
    os.waitpid(pid, 0)
    kind, value = pickle.loads(data)
    assert kind == "answer", value
    return value


def cannot_write(folder: Path) -> bool:
    try:
        (folder / "probe").touch()
    except PermissionError:
        return True
    (folder / "probe").unlink()
    return False


@pytest.fixture
def folder() -> Iterator[Path]:
    """A folder in /tmp that nobody can reach (pytest's own are root's alone)."""
    made = Path(tempfile.mkdtemp(prefix="deedbench-view-ro-"))
    made.chmod(0o755)
    try:
        yield made
    finally:
        made.chmod(0o700)
        shutil.rmtree(made)


def copy_store(reports: Reports, folder: Path) -> Path:
    """The report tests' store (WAL), copied and closed: no -wal or -shm beside it."""
    path = folder / "runs.db"
    with sqlite3.connect(reports.tac.path.parent / "runs.db") as source:
        copy = sqlite3.connect(path)
        source.backup(copy)
        copy.close()
    return path


def read(path: Path) -> dict[str, Any]:
    """What a page of the viewer reads of the store, and what is beside it after."""
    reader = StoreReader(path, on_corrupt=lambda message: None)
    (first,) = reader.newest("mixed", Selection(), 0, 1)
    return {
        "runs": reader.run_ids(),
        "light": len(list(reader.light_records("mixed"))),
        "counts": reader.activity()["mixed"].counts,
        "scored": sum(n for *_, n in reader.tally("mixed", Selection(status="scored"))),
        "found": len(reader.newest("relevance", Selection(text="corrida"), 0, 100)),
        "opened": reader.episode("mixed", EpisodeKey(first.sample_id, first.condition, first.epoch))
        is not None,
    }


def test_a_store_in_a_read_only_folder_is_read_and_nothing_is_made_there(
    reports: Reports, folder: Path, tmp_path: Path
) -> None:
    expected = read(copy_store(reports, tmp_path))  # a copy this user may write
    assert expected["light"] == 192 and expected["opened"] and expected["found"] == 8
    path = copy_store(reports, folder)
    path.chmod(0o444)
    folder.chmod(0o555)

    def work() -> dict[str, Any]:
        assert cannot_write(folder)
        return read(path)

    assert as_nobody(work) == expected
    assert os.listdir(folder) == ["runs.db"]


@pytest.mark.skipif(not ROOT, reason="a store another user owns needs root to make")
def test_another_users_store_in_a_shared_folder_gets_no_files_beside_it(
    reports: Reports, folder: Path, tmp_path: Path
) -> None:
    """In a folder everyone may write (/tmp), SQLite would make -wal and -shm files owned
    by the reader beside the store, which the owner's next run could not write."""
    expected = read(copy_store(reports, tmp_path))
    path = copy_store(reports, folder)
    folder.chmod(0o1777)

    def work() -> dict[str, Any]:
        assert not os.access(path, os.W_OK)
        return read(path)

    assert as_nobody(work) == expected
    assert os.listdir(folder) == ["runs.db"]


def test_a_store_being_written_is_read_through_its_writers_log(
    reports: Reports, folder: Path
) -> None:
    """While its writer holds the WAL open, what was committed last (still in the log,
    not yet in the file) is read: the store is not opened as if it could not change."""
    path = copy_store(reports, folder)
    with RunStore(reports.tac.path.parent / "runs.db") as source:
        config = source.require_run("mixed")
        records = list(source.episodes("mixed"))[:3]
    with RunStore(path) as writer:
        writer.create_run(config.model_copy(update={"run_id": "live"}))
        for record in records:
            writer.add("live", record)
        writer.flush()
        assert {p.name for p in folder.iterdir()} == {"runs.db", "runs.db-wal", "runs.db-shm"}
        folder.chmod(0o555)

        def work() -> tuple[int, bool]:
            assert cannot_write(folder)
            reader = StoreReader(path, on_corrupt=lambda message: None)
            return len(list(reader.light_records("live"))), "live" in reader.run_ids()

        assert as_nobody(work) == (3, True)
        folder.chmod(0o755)
