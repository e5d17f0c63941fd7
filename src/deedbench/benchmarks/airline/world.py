"""The airline database: τ-bench's three tables, read from their JSON files.

An episode's view of it is the desk's copy-on-write `DeskWorld`, which also
holds the records the airline tools create (`book_reservation` adds a
reservation); they follow the base's records, in the order they were added, as
in τ-bench's dict.
"""

from __future__ import annotations

from pathlib import Path

from deedbench.benchmarks.servicedesk import Tables, load_tables

__all__ = ["AIRLINE_FILES", "load_airline_data"]

AIRLINE_FILES = ("flights", "reservations", "users")
"""The tables of the airline database, each read from ``<name>.json``, in τ-bench's order."""


def load_airline_data(directory: Path, users_file: Path | None = None) -> Tables:
    """Read flights.json, reservations.json and users.json, each a JSON object keyed by id.

    `users_file` replaces ``directory/users.json``: τ-bench changed its users after
    some published trajectories were recorded, while flights and reservations stayed.
    """
    replace = {"users": Path(users_file)} if users_file is not None else None
    return load_tables(Path(directory), AIRLINE_FILES, "airline", replace)
