"""The airline database of one episode: retail's copy-on-write view, plus new records.

The airline tools, unlike the retail ones, create records: `book_reservation`
adds a reservation. `AirlineWorld` is a `RetailWorld` (so the scoring helpers
that compare worlds over one shared base work unchanged) that can also hold
records the base does not have; they follow the base's records, in the order
they were added, as in τ-bench's dict.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deedbench.benchmarks.retail.world import RetailWorld, load_tables

__all__ = ["AIRLINE_FILES", "AirlineWorld", "load_airline_data"]

AIRLINE_FILES = ("flights", "reservations", "users")
"""The tables of the airline database, each read from ``<name>.json``, in τ-bench's order."""

Record = dict[str, Any]


class AirlineWorld(RetailWorld):
    """One episode's view of the airline database; `put` adds or replaces a whole record.

    As with `RetailWorld`, never mutate what `get`, `items` or `snapshot` return;
    change a record through `for_update` (which also works for added records).
    """

    __slots__ = ("_added",)

    def __init__(self, base: dict[str, dict[str, Record]]) -> None:
        super().__init__(base)
        self._added: dict[str, list[str]] = {}  # keys not in the base, in the order added

    def put(self, table: str, key: str, record: Record) -> None:
        """Store `record` (now owned by this world) under `key`, replacing any record there."""
        # RetailWorld has no public way to add a record, so this writes to its overlay,
        # which its `get`, `for_update` and `touched` already read.
        self._overlay.setdefault(table, {})[key] = record
        if key not in self.base.get(table, {}):
            added = self._added.setdefault(table, [])
            if key not in added:
                added.append(key)

    def items(self, table: str) -> Iterator[tuple[str, Record]]:
        """Every (key, record) of a table: the base's order, then added records."""
        yield from super().items(table)
        written = self._overlay.get(table, {})
        for key in self._added.get(table, ()):
            yield key, written[key]


def load_airline_data(
    directory: Path, users_file: Path | None = None
) -> dict[str, dict[str, Record]]:
    """Read flights.json, reservations.json and users.json, each a JSON object keyed by id.

    `users_file` replaces ``directory/users.json``: τ-bench changed its users after
    some published trajectories were recorded, while flights and reservations stayed.
    """
    replace = {"users": Path(users_file)} if users_file is not None else None
    return load_tables(Path(directory), AIRLINE_FILES, "airline", replace)
