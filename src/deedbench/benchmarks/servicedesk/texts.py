"""A world's whole database as the text a reference hashes, the base's part written once.

τ² hashes ``json.dumps(db, sort_keys=True, default=str)``; τ-bench hashes
``str(to_hashable(db))`` (dicts as key-sorted tuples of pairs). Either text of a 7 MB
database costs a third of a second to write whole, and an episode writes a handful of
records. Both texts are joins of their entries' texts in sorted key order, so the text of
each base record, and of each table nobody wrote into, is made once per base and kept
(`_BaseText`): a world's text is then the kept parts joined around the records it holds.
The result is exactly the reference's text; `tests/benchmarks/servicedesk/test_world.py`
compares both dialects with writing the snapshot whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deedbench.scoring import to_hashable

if TYPE_CHECKING:
    from deedbench.benchmarks.servicedesk.world import DeskWorld

__all__ = ["JSON", "TAU", "Dialect", "world_text"]


@dataclass(frozen=True)
class Dialect:
    """How one reference writes a database: a value's text, a ``key: value`` pair's text
    from the value's text, and a mapping's text from its pairs' texts (sorted by key)."""

    name: str
    value: Callable[[Any], str]
    pair: Callable[[str, str], str]
    container: Callable[[list[str]], str]

    def entry(self, key: str, value: Any) -> str:
        return self.pair(key, self.value(value))


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _tuple(items: list[str]) -> str:
    """Python's ``repr`` of a tuple whose items' texts are `items` (``(x,)`` for one)."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


JSON = Dialect(
    "json",
    value=_json,
    pair=lambda key, text: f"{_json(key)}: {text}",
    container=lambda items: "{" + ", ".join(items) + "}",
)
TAU = Dialect(
    "tau",
    value=lambda value: repr(to_hashable(value)),
    pair=lambda key, text: f"({key!r}, {text})",
    container=_tuple,
)


def world_text(world: DeskWorld, dialect: Dialect) -> str:
    """The world's whole database (`DeskWorld.snapshot`) as `dialect` writes it."""
    texts = _base_text(world.base, dialect)
    parts = []
    for name in texts.names:
        if not world.is_table(name):
            parts.append(dialect.entry(name, world.peek(name)))
            continue
        written = world.written(name)
        if not written:
            parts.append(texts.whole(name))
            continue
        keys = texts.keys(name)
        added = world.added(name)
        if added:
            keys = sorted(keys + added)
        entries = [
            dialect.entry(key, written[key]) if key in written else texts.entry(name, key)
            for key in keys
        ]
        parts.append(dialect.pair(name, dialect.container(entries)))
    return dialect.container(parts)


class _BaseText:
    """A base's texts in one dialect, made when first asked for; the base never changes,
    so neither do they."""

    def __init__(self, base: Any, dialect: Dialect) -> None:
        self.base = base
        self.dialect = dialect
        self.names = sorted(base)
        self._keys: dict[str, list[str]] = {}
        self._entries: dict[str, dict[str, str]] = {}
        self._wholes: dict[str, str] = {}

    def keys(self, table: str) -> list[str]:
        found = self._keys.get(table)
        if found is None:
            found = self._keys[table] = sorted(self.base[table])
        return found

    def entry(self, table: str, key: str) -> str:
        entries = self._entries.setdefault(table, {})
        found = entries.get(key)
        if found is None:
            found = entries[key] = self.dialect.entry(key, self.base[table][key])
        return found

    def whole(self, table: str) -> str:
        """The top-level entry of a table as the base has it."""
        found = self._wholes.get(table)
        if found is None:
            entries = [self.entry(table, key) for key in self.keys(table)]
            found = self._wholes[table] = self.dialect.pair(table, self.dialect.container(entries))
        return found


_TEXTS: dict[tuple[int, str], _BaseText] = {}
"""Each base's texts by its id and the dialect (the base is kept in them, so its id cannot
be reused while they are)."""
_KEPT = 8


def _base_text(base: Any, dialect: Dialect) -> _BaseText:
    key = (id(base), dialect.name)
    found = _TEXTS.get(key)
    if found is not None and found.base is base:
        return found
    if len(_TEXTS) >= _KEPT:
        _TEXTS.pop(next(iter(_TEXTS)))
    made = _TEXTS[key] = _BaseText(base, dialect)
    return made
