"""Comparing database states: τ-bench's exact rule, a canonical rule, and readable diffs.

τ-bench scores an episode by hashing Python's ``str()`` of its whole database,
so ``100`` and ``100.0`` differ and list order matters. `tau_hash` and
`records_equal_tau` reproduce that rule exactly, for compatibility; `canonical`
is the fairer rule deedbench reports beside it (numbers by value, chosen lists
as multisets). Worlds that share one base database are compared record by
record over what either of them touched, instead of rehashing everything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "OverlayState",
    "TauTextual",
    "canonical",
    "diff",
    "records_equal_tau",
    "tau_hash",
    "to_hashable",
    "world_differences",
    "worlds_diff",
    "worlds_equal_canonical",
    "worlds_equal_tau",
]


class OverlayState(Protocol):
    """A database view over a shared base that knows which records it changed."""

    def get(self, table: str, key: str) -> dict[str, Any] | None: ...

    def touched(self) -> dict[str, set[str]]: ...


# --- τ-bench's rule ---------------------------------------------------------------------------


def to_hashable(value: Any) -> Any:
    """τ-bench's conversion: dicts to key-sorted tuples of pairs, lists to tuples, sets sorted."""
    if isinstance(value, dict):
        return tuple((key, to_hashable(item)) for key, item in sorted(value.items()))
    if isinstance(value, list):
        return tuple(to_hashable(item) for item in value)
    if isinstance(value, set):
        return tuple(sorted(to_hashable(item) for item in value))
    return value


@runtime_checkable
class TauTextual(Protocol):
    """A database that writes its own ``str(to_hashable(...))`` text (a desk's world does,
    without writing its shared base's records again)."""

    def tau_text(self) -> str: ...


def tau_hash(db: Mapping[str, Any] | TauTextual) -> str:
    """τ-bench's database hash: sha256 of ``str(to_hashable(db))``."""
    text = db.tau_text() if isinstance(db, TauTextual) else str(to_hashable(db))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def records_equal_tau(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether two records are the same under τ-bench's hash rule (``str`` equality)."""
    return a is b or str(to_hashable(a)) == str(to_hashable(b))


# --- the canonical rule -----------------------------------------------------------------------

_Path = tuple[str, ...]


def canonical(value: Any, unordered: frozenset[str] = frozenset(), path: str = "") -> Any:
    """A comparable, hashable form of JSON-like data in which only meaning counts.

    Numbers compare by value (``100 == 100.0``), booleans stay distinct from
    numbers, dict key order is ignored, and a list whose dotted path matches a
    pattern in `unordered` (``*`` matches one key or list index, as in
    ``"orders.*.items"``) compares as a multiset; every other list keeps its order.
    `path` is where `value` sits in the database, e.g. ``"orders.#W0000001"``.
    """
    return _canonical(value, _patterns(unordered), tuple(path.split(".")) if path else ())


@lru_cache(maxsize=64)
def _patterns(unordered: frozenset[str]) -> tuple[_Path, ...]:
    return tuple(tuple(pattern.split(".")) for pattern in sorted(unordered))


def _matches(patterns: tuple[_Path, ...], where: _Path) -> bool:
    return any(
        len(pattern) == len(where)
        and all(p == "*" or p == w for p, w in zip(pattern, where, strict=True))
        for pattern in patterns
    )


def _canonical(value: Any, patterns: tuple[_Path, ...], where: _Path) -> Any:
    # Each form starts with a tag, so forms of different kinds sort without errors.
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, Mapping):
        pairs = ((str(k), _canonical(v, patterns, (*where, str(k)))) for k, v in value.items())
        return ("d", tuple(sorted(pairs)))
    if isinstance(value, list | tuple):
        items = [_canonical(v, patterns, (*where, str(i))) for i, v in enumerate(value)]
        if patterns and _matches(patterns, where):
            return ("m", tuple(sorted(items)))
        return ("l", tuple(items))
    if isinstance(value, set | frozenset):
        return ("m", tuple(sorted(_canonical(v, patterns, (*where, "*")) for v in value)))
    return ("o", repr(value))


# --- comparing worlds over one base -----------------------------------------------------------


def worlds_equal_tau(a: OverlayState, b: OverlayState) -> bool:
    """τ-bench's verdict (equal database hashes) for two worlds over the same base,
    computed only over the records either world touched."""
    return all(
        records_equal_tau(a.get(table, key), b.get(table, key)) for table, key in _touched(a, b)
    )


def worlds_equal_canonical(a: OverlayState, b: OverlayState, unordered: frozenset[str]) -> bool:
    """Whether two worlds over the same base mean the same database (see `canonical`)."""
    patterns = _patterns(unordered)
    return all(
        _canonical(a.get(table, key), patterns, (table, key))
        == _canonical(b.get(table, key), patterns, (table, key))
        for table, key in _touched(a, b)
    )


def worlds_diff(
    a: OverlayState, b: OverlayState, *, limit: int = 20, strict: bool = False
) -> list[str]:
    """The differences between two worlds over the same base, as `diff` lines."""
    lines: list[str] = []
    for table, key in _touched(a, b):
        _collect(
            a.get(table, key), b.get(table, key), _child(_child("", table), key), lines, strict
        )
    return _truncate(lines, limit)


def world_differences(a: Any, b: Any, *, label: str = "", strict: bool = True) -> list[str]:
    """Every difference between two worlds over one base, ``a`` the episode's and ``b`` the
    gold's, as ``table['key'].field: <a's value> (gold: <b's value>)``: the records either
    changed, and the entries that are whole values (a world's `values_reached`). Numbers
    differ by type too unless not `strict` (τ²'s hash tells 100 from 100.0)."""
    lines: list[tuple[str, Any, Any]] = []
    for table, key in _touched(a, b):
        _pairs(
            a.get(table, key), b.get(table, key), _child(_child(label, table), key), lines, strict
        )
    reached_a: dict[str, Any] = getattr(a, "values_reached", dict)()
    reached_b: dict[str, Any] = getattr(b, "values_reached", dict)()
    for name in sorted(reached_a.keys() | reached_b.keys()):
        left = reached_a.get(name, a.base[name]) if name in a.base else _ABSENT
        right = reached_b.get(name, b.base[name]) if name in b.base else _ABSENT
        if left is not right:
            _pairs(left, right, _child(label, name), lines, strict)
    return [f"{path}: {_show(x)} (gold: {_show(y)})" for path, x, y in lines]


def _pairs(a: Any, b: Any, path: str, lines: list[tuple[str, Any, Any]], strict: bool) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in _keys(a, b):
            _pairs(a.get(key, _ABSENT), b.get(key, _ABSENT), _child(path, key), lines, strict)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            left = a[i] if i < len(a) else _ABSENT
            right = b[i] if i < len(b) else _ABSENT
            _pairs(left, right, f"{path}[{i}]", lines, strict)
    elif not _same(a, b, strict):
        lines.append((path or "(root)", a, b))


def _touched(a: OverlayState, b: OverlayState) -> list[tuple[str, str]]:
    """Every (table, key) either world wrote, in a stable order."""
    base_a, base_b = getattr(a, "base", None), getattr(b, "base", None)
    if base_a is not None and base_b is not None and base_a is not base_b:
        raise ValueError(
            "these worlds have different base databases; comparing only their touched "
            "records is valid for worlds over one shared base"
        )
    seen: set[tuple[str, str]] = set()
    for world in (a, b):
        for table, keys in world.touched().items():
            seen.update((table, key) for key in keys)
    return sorted(seen)


# --- readable differences ---------------------------------------------------------------------


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT: Any = _Absent()
_MAX_SHOWN = 60


def diff(a: Any, b: Any, path: str = "", *, limit: int = 20, strict: bool = False) -> list[str]:
    """Readable differences from `a` to `b`: ``orders['#W1'].status: 'pending' -> 'cancelled'``.

    Dicts are compared key by key and lists position by position. Numbers compare
    by value unless `strict` (τ-bench's rule, where ``100`` and ``100.0`` differ).
    At most `limit` lines are returned, then one line saying how many more there were.
    """
    lines: list[str] = []
    _collect(a, b, path, lines, strict)
    return _truncate(lines, limit)


def _collect(a: Any, b: Any, path: str, lines: list[str], strict: bool) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in _keys(a, b):
            _collect(a.get(key, _ABSENT), b.get(key, _ABSENT), _child(path, key), lines, strict)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            left = a[i] if i < len(a) else _ABSENT
            right = b[i] if i < len(b) else _ABSENT
            _collect(left, right, f"{path}[{i}]", lines, strict)
    elif not _same(a, b, strict):
        lines.append(f"{path or '(root)'}: {_show(a)} -> {_show(b)}")


def _keys(a: dict[Any, Any], b: dict[Any, Any]) -> Iterable[Any]:
    yield from a
    yield from (key for key in b if key not in a)


def _same(a: Any, b: Any, strict: bool) -> bool:
    numbers = (int, float)
    if (
        not strict
        and isinstance(a, numbers)
        and isinstance(b, numbers)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _child(path: str, key: Any) -> str:
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}" if path else key
    return f"{path}[{key!r}]"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _truncate(lines: list[str], limit: int) -> list[str]:
    if len(lines) <= limit:
        return lines
    more = len(lines) - limit
    return [*lines[:limit], f"... and {more} more difference{'s' if more > 1 else ''}"]
