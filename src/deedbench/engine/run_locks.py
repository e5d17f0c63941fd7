"""The locks of runs being executed: one process executes a run, and proves it alive.

A run being executed holds a lock row in its store (pid, host, heartbeat): a second
process that would execute it is refused with the holder's name, and a lock whose process
died or whose heartbeat stopped is taken over. `RunStore` holds its locks through
`RunLocks`; `executing` tells any reader (the viewer too) which runs a live process holds.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from deedbench.errors import StoreError

if TYPE_CHECKING:
    from deedbench.engine.store import Readable

__all__ = ["HEARTBEAT_SECONDS", "LIVE_SECONDS", "STALE_SECONDS", "RunLocks", "executing"]

HEARTBEAT_SECONDS = 5.0  # how often the process executing a run proves it is alive
STALE_SECONDS = 60.0  # a lock whose heartbeat is older than this is taken over
LIVE_SECONDS = 3 * HEARTBEAT_SECONDS  # a run whose lock beat this recently is being executed


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


class RunLocks:
    """The run store's locks of runs being executed, on its connection (`_db`)."""

    # the store's: its connection, the runs it holds locked (and how often), its guard
    # turning SQLite's failures into StoreError, its transactions and its writes
    _db: sqlite3.Connection
    _locks: dict[str, int]
    _guard: Callable[[], AbstractContextManager[None]]
    _transaction: Callable[[], AbstractContextManager[None]]
    _write: Callable[[str, Sequence[tuple[object, ...]]], None]

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
