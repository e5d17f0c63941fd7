"""The retail database of one episode: a copy-on-write view over a shared base.

τ-bench reloads and mutates a fresh copy of its 1,000 orders for every episode.
Here the loaded database is shared by every episode and never changed; a world
keeps only the records its episode wrote. Creating one costs nothing, and a
scorer can compare two worlds by looking only at the records either touched.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from deedbench.engine import BenchmarkError

__all__ = ["RETAIL_FILES", "RetailWorld", "copy_json", "load_retail_data"]

RETAIL_FILES = ("users", "orders", "products")
"""The tables of the retail database, each read from ``<name>.json``."""

Record = dict[str, Any]


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); much faster than
    `copy.deepcopy`, and it keeps ints and floats exactly as they were."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


class RetailWorld:
    """One episode's view of the database: base records until written, then its own copies.

    Callers must never mutate what `get`, `items` or `snapshot` return; a change
    goes through `for_update`, which gives the episode its own copy of one record.
    """

    __slots__ = ("_overlay", "base")

    def __init__(self, base: dict[str, dict[str, Record]]) -> None:
        self.base = base
        self._overlay: dict[str, dict[str, Record]] = {}

    def get(self, table: str, key: str) -> Record | None:
        """The record as this episode sees it, or None when there is none."""
        written = self._overlay.get(table)
        if written is not None and key in written:
            return written[key]
        return self.base.get(table, {}).get(key)

    def for_update(self, table: str, key: str) -> Record:
        """This episode's own, mutable copy of a record (copied on first use)."""
        written = self._overlay.setdefault(table, {})
        record = written.get(key)
        if record is None:
            try:
                original = self.base[table][key]
            except KeyError:
                raise KeyError(f"no record {key!r} in table {table!r}") from None
            record = written[key] = copy_json(original)
        return record

    def items(self, table: str) -> Iterator[tuple[str, Record]]:
        """Every (key, record) of a table as this episode sees it, in the base's order."""
        written = self._overlay.get(table, {})
        for key, record in self.base.get(table, {}).items():
            yield key, written.get(key, record)

    def touched(self) -> dict[str, set[str]]:
        """The keys of the records this episode took for update, by table."""
        return {table: set(keys) for table, keys in self._overlay.items() if keys}

    def snapshot(self) -> dict[str, dict[str, Record]]:
        """The whole merged database as plain dicts (shared records; do not mutate)."""
        return {table: dict(self.items(table)) for table in self.base}


def load_retail_data(directory: Path) -> dict[str, dict[str, Record]]:
    """Read users.json, orders.json and products.json, each a JSON object keyed by id."""
    return load_tables(Path(directory), RETAIL_FILES, "retail")


def load_tables(
    directory: Path, names: Iterable[str], domain: str, replace: Mapping[str, Path] | None = None
) -> dict[str, dict[str, Record]]:
    """Read `<name>.json` for each table name (or the file `replace` gives for it),
    with errors that name the file."""
    if not directory.is_dir():
        raise BenchmarkError(f"{domain} data folder {directory} does not exist")
    replace = replace or {}
    return {
        name: read_table(replace.get(name, directory / f"{name}.json"), domain) for name in names
    }


def read_table(path: Path, domain: str) -> dict[str, Record]:
    """One table file: a JSON object mapping ids to records."""
    if not path.is_file():
        raise BenchmarkError(f"{domain} data file {path} is missing")
    try:
        with path.open(encoding="utf-8") as handle:
            table = json.load(handle)
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{domain} data file {path} is not valid JSON: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{domain} data file {path} cannot be read: {exc}") from None
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise BenchmarkError(
            f"{domain} data file {path} must hold a JSON object mapping ids to records"
        )
    return table
