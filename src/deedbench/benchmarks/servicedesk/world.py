"""A desk's database in one episode: a copy-on-write view over a shared base.

τ-bench reloads and mutates a fresh copy of its database (1,000 retail orders) for
every episode. Here the loaded database is shared by every episode and never
changed; a world keeps only the records its episode wrote or added. Creating one
costs nothing, and a scorer can compare two worlds by looking only at the records
either touched. A domain's data is a set of tables, each read from one JSON file
(`load_tables`). A database may also hold entries that are not tables of records
(τ²'s telecom keeps lists of lines and one phone): a world names its tables, and
every other entry is a value, which the episode copies whole the first time it
reaches it (such databases are small), and a copied world again only when it
reaches it. `session` holds what an episode's tools
remember outside the database (τ³'s unlocked tools), which no comparison sees.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from deedbench.errors import BenchmarkError
from deedbench.files import parse_json, read_text

__all__ = ["DeskWorld", "Record", "Table", "Tables", "copy_json", "load_tables", "read_table"]

Record = dict[str, Any]
Tables = dict[str, dict[str, Record]]
"""A desk's database: each table maps record ids to records."""


def copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); much faster than
    `copy.deepcopy`, and it keeps ints and floats exactly as they were."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value


class DeskWorld:
    """One episode's view of the database: base records until written, then its own copies.

    Callers must never mutate what `get`, `items` or `snapshot` return; a change
    goes through `for_update`, which gives the episode its own copy of one record,
    or `put`, which adds or replaces a whole record. ``world["orders"]`` is the
    table as τ-bench's tools see their ``data["orders"]`` (see `Table`).
    """

    __slots__ = (
        "_added", "_inherited", "_overlay", "_partial", "_tables", "_values", "base", "session"
    )  # fmt: skip

    def __init__(self, base: Mapping[str, Any], tables: Iterable[str] | None = None) -> None:
        """`tables`: the entries of `base` that are tables of records (None: all of them)."""
        self.base: Any = base
        self._tables = frozenset(base) if tables is None else frozenset(tables)
        self._overlay: dict[str, dict[str, Record]] = {}
        self._added: dict[str, list[str]] = {}  # keys not in the base, in the order added
        self._values: dict[str, Any] = {}  # this episode's copies of the entries that are values
        self._inherited: dict[str, Any] = {}  # values as the world copied from left them: shared
        self._partial: dict[str, set[int]] = {}  # lists of _values whose other items are shared
        self.session: dict[str, Any] = {}

    def __getitem__(self, table: str) -> Table:
        if table not in self.base or table not in self._tables:
            raise KeyError(table)
        return Table(self, table)

    def value(self, name: str) -> Any:
        """This episode's own copy of an entry that is not a table (copied on first use);
        change it in place."""
        if name not in self._values:
            self._values[name] = copy_json(self._source(name))
        elif name in self._partial:  # items of a list still shared: copy them now
            owned, items = self._partial.pop(name), self._values[name]
            items[:] = [item if id(item) in owned else copy_json(item) for item in items]
        return self._values[name]

    def _source(self, name: str) -> Any:
        if name not in self.base or name in self._tables:
            raise KeyError(name)
        return self._inherited.get(name, self.base[name])

    def own_item(self, name: str, item: Any) -> Any:
        """This episode's own copy of `item`, one item (as `peek` showed it) of the entry
        `name`, a list, put in its place: a tool about to change one record of a list
        copies that record, not the whole list. Change the returned copy, not `item`."""
        items = self._own_list(name)
        index = next((i for i, x in enumerate(items) if x is item), None)
        if index is None:
            raise ValueError(f"not an item of {name!r} as this episode sees it")
        owned = self._partial.get(name)
        if owned is None or id(item) in owned:
            return item
        copied = items[index] = copy_json(item)
        owned.add(id(copied))
        return copied

    def append_item(self, name: str, item: Any) -> None:
        """Add `item` (now owned by this world) at the end of the entry `name`, a list."""
        self._own_list(name).append(item)
        owned = self._partial.get(name)
        if owned is not None:
            owned.add(id(item))

    def _own_list(self, name: str) -> list[Any]:
        if name not in self._values:
            found = self._values[name] = list(self._source(name))
            self._partial[name] = set()
        found = self._values[name]
        if not isinstance(found, list):
            raise TypeError(f"{name!r} is not a list")
        return found

    def peek(self, name: str) -> Any:
        """An entry that is not a table as this episode sees it, without copying it: shared
        with the base or the world this one was copied from, so read it, never change it."""
        if name in self._values:
            return self._values[name]
        return self._source(name)

    def set_value(self, name: str, value: Any) -> None:
        """Replace an entry that is not a table."""
        if name not in self.base or name in self._tables:
            raise KeyError(name)
        self._values[name] = value
        self._partial.pop(name, None)

    def values_reached(self) -> dict[str, Any]:
        """The entries that are values this episode has reached (and may have changed),
        those of the world it was copied from included (shared: do not mutate)."""
        if not self._inherited:
            return self._values
        return {**self._inherited, **self._values}

    def copy(self) -> DeskWorld:
        """An independent world in this one's state, over the same base (the records the
        episode wrote are copied, the base is shared).

        Values are copied on write, not here: both worlds keep the values reached so far
        as a shared, frozen layer and copy one again when a tool next reaches it, so a
        value handed out by `value` before the copy must be fetched again to change it.
        """
        other = DeskWorld(self.base, self._tables)
        other._overlay = {
            t: {k: copy_json(r) for k, r in written.items()} for t, written in self._overlay.items()
        }
        other._added = {t: list(keys) for t, keys in self._added.items()}
        if self._values:
            self._inherited = {**self._inherited, **self._values}
            self._values, self._partial = {}, {}
        other._inherited = self._inherited
        other.session = copy_json(self.session)
        return other

    def get(self, table: str, key: str) -> Record | None:
        """The record as this episode sees it, or None when there is none."""
        written = self._overlay.get(table)
        if written is not None and key in written:
            return written[key]
        found: Record | None = self.base.get(table, {}).get(key)
        return found

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

    def put(self, table: str, key: str, record: Record) -> None:
        """Store `record` (now owned by this world) under `key`, replacing any record there.

        A key the base does not have is a new record: it follows the base's records,
        in the order records were added, as a new key does in a dict.
        """
        self._overlay.setdefault(table, {})[key] = record
        if key not in self.base.get(table, {}):
            added = self._added.setdefault(table, [])
            if key not in added:
                added.append(key)

    def items(self, table: str) -> Iterator[tuple[str, Record]]:
        """Every (key, record) of a table as this episode sees it: the base's order,
        then added records."""
        written = self._overlay.get(table, {})
        for key, record in self.base.get(table, {}).items():
            yield key, written.get(key, record)
        for key in self._added.get(table, ()):
            yield key, written[key]

    def touched(self) -> dict[str, set[str]]:
        """The keys of the records this episode changed or added, by table.

        A record a tool looked up holds a copy here even when nothing changed it (a
        tool may change what it looks up, as τ-bench's do), so a record counts as
        touched only when it differs from the base, types included (100 is not 100.0).
        """
        changed: dict[str, set[str]] = {}
        for table, written in self._overlay.items():
            base = self.base.get(table, _EMPTY)
            keys = {
                key
                for key, record in written.items()
                if key not in base or not _identical(record, base[key])
            }
            if keys:
                changed[table] = keys
        return changed

    def snapshot(self) -> dict[str, Any]:
        """The whole merged database as plain dicts, in the base's order (shared records;
        do not mutate)."""
        return {
            name: dict(self.items(name)) if name in self._tables else self.peek(name)
            for name in self.base
        }

    def json_text(self) -> str:
        """The snapshot as ``json.dumps(snapshot, sort_keys=True, default=str)`` writes it
        (τ²'s database hash is its sha256), the base's part written once (`texts.py`)."""
        from deedbench.benchmarks.servicedesk.texts import JSON, world_text

        return world_text(self, JSON)

    def tau_text(self) -> str:
        """The snapshot as ``str(to_hashable(snapshot))`` writes it (τ-bench's database
        hash is its sha256), the base's part written once (`texts.py`)."""
        from deedbench.benchmarks.servicedesk.texts import TAU, world_text

        return world_text(self, TAU)

    def is_table(self, name: str) -> bool:
        """Whether the base's entry `name` is a table of records (else it is a value)."""
        return name in self._tables

    def written(self, table: str) -> Mapping[str, Record]:
        """The records of `table` this episode holds copies of (changed or not), by key."""
        return self._overlay.get(table, _EMPTY)

    def added(self, table: str) -> list[str]:
        """The keys this episode added to `table` that the base does not have, in order."""
        return self._added.get(table, [])


class Table:
    """One table of a world, used the way τ-bench's tools use a table of their ``data``.

    ``key in table`` and iteration see what the episode sees; ``table[key]`` gives
    the episode's own copy of the record (a tool may change it in place, as
    τ-bench's tools change their data), and ``table[key] = record`` adds or
    replaces one. Unknown and unhashable keys fail exactly as on a dict, so a
    tool reached with malformed arguments raises what τ-bench's would. Records
    reached by iteration are shared: read them, never change them.
    """

    __slots__ = ("_name", "_world")

    def __init__(self, world: DeskWorld, name: str) -> None:
        self._world = world
        self._name = name

    def __contains__(self, key: object) -> bool:
        written = self._world._overlay.get(self._name, _EMPTY)
        return key in written or key in self._world.base[self._name]

    def __getitem__(self, key: str) -> Record:
        if key not in self:
            raise KeyError(key)
        return self._world.for_update(self._name, key)

    def __setitem__(self, key: str, record: Record) -> None:
        self._world.put(self._name, key, record)

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._world.items(self._name))

    def __len__(self) -> int:
        return len(self._world.base[self._name]) + len(self._world._added.get(self._name, ()))

    def items(self) -> Iterator[tuple[str, Record]]:
        return self._world.items(self._name)

    def values(self) -> Iterator[Record]:
        return (record for _, record in self._world.items(self._name))


_EMPTY: dict[str, Record] = {}


def _identical(a: Any, b: Any) -> bool:
    """Equal JSON values of equal types all the way down (key order aside)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and _identical(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def load_tables(
    directory: Path, names: Iterable[str], domain: str, replace: Mapping[str, Path] | None = None
) -> Tables:
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
    if not path.exists():
        raise BenchmarkError(f"{domain} data file {path} is missing")
    try:
        table = parse_json(read_text(path))  # a FIFO, a device, over the cap: a UsageError
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{domain} data file {path} is not valid JSON: {exc}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BenchmarkError(f"{domain} data file {path} cannot be read: {exc}") from None
    if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
        raise BenchmarkError(
            f"{domain} data file {path} must hold a JSON object mapping ids to records"
        )
    return table
