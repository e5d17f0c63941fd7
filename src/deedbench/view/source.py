"""The viewer's only way into a run store: the engine's read-only store (`ReadOnlyStore`:
read-only SQL, never a lock, never a write), with what the viewer adds to it.

The viewer speaks no SQL of its own: the episodes, runs and run locks are read by the
engine's `ReadOnlyStore`, which the viewer can open beside a run being executed and on a
store it may not write (another user's, a read-only folder); the audits by their owner,
`deedbench.audit.store`, through the same read-only connections. What the viewer adds is
what changes while a run is executed (`Activity`), counted only when the store moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deedbench.audit import AuditResult, load_audits
from deedbench.audit.store import audit_counts, last_audit
from deedbench.engine.read_only_store import ReadOnlyStore
from deedbench.engine.run_locks import executing

__all__ = ["Activity", "StoreReader"]


@dataclass(frozen=True)
class Activity:
    """What changes while a run is executed, read without touching its records."""

    counts: dict[str, int]  # stored episodes by status ("scored", "error")
    last_rowid: int  # grows with every record written (a rewritten one gets a new rowid)
    audits: int
    executor: str | None  # "pid P on host H" while a live process executes the run
    last_audit: int = 0  # the rowid of its last audit written (an audit again: a new one)

    @property
    def stored(self) -> int:
        return sum(self.counts.values())

    @property
    def contents(self) -> str:
        """Changes whenever a record or an audit of the run is written: what its figures
        are computed from."""
        return f"{self.stored}.{self.last_rowid}.{self.audits}.{self.last_audit}"

    @property
    def version(self) -> str:
        """Changes whenever anything a page shows of the run may have changed."""
        return f"{self.contents}.{int(self.executor is not None)}"


class StoreReader(ReadOnlyStore):
    """Reads runs, records and audits from a store file, read-only.

    `on_corrupt` gets a message naming each stored record or configuration that no
    longer parses, once (readers read the same records again); readers skip it, as the
    store's own readers do.
    """

    def __init__(self, path: Path, on_corrupt: Callable[[str], None]) -> None:
        super().__init__(path, on_corrupt)
        # (stamp, stored episodes, audits) of the last count
        self._counted: (
            tuple[
                tuple[object, ...],
                dict[str, tuple[dict[str, int], int]],
                dict[str, tuple[int, int]],
            ]
            | None
        ) = None

    def activity(self) -> dict[str, Activity]:
        """Every run's counts, last write, audits and executor. Counting episodes reads
        every summary, so the counts are kept until the store's last summary or audit
        rowid moves (a record written or rewritten gets a new one)."""
        stamp = (self.last_rowid(), last_audit(self))
        if self._counted is None or self._counted[0] != stamp:
            self._counted = (stamp, self.episode_counts(), audit_counts(self))
        _, stored, audits = self._counted
        executors = executing(self)
        return {
            run_id: Activity(
                stored.get(run_id, ({}, 0))[0],
                stored.get(run_id, ({}, 0))[1],
                audits.get(run_id, (0, 0))[0],
                executors.get(run_id),
                audits.get(run_id, (0, 0))[1],
            )
            for run_id in self.run_ids()
        }

    def audits(self, run_id: str) -> list[AuditResult]:
        """The run's stored eval-awareness audits, as `deedbench report` reads them."""
        return load_audits(self, run_id)
