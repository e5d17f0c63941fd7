"""`same_db`: τ²'s hash comparison, made on what two worlds over one base changed."""

from __future__ import annotations

from typing import Any

from deedbench.benchmarks.servicedesk import DeskWorld
from deedbench.benchmarks.tau2.environment import db_hash, same_db


def _base() -> dict[str, Any]:
    return {"lines": [{"id": "L1", "gb": 1}, {"id": "L2", "gb": 2.0}], "phone": {"on": True}}


def _pair() -> tuple[DeskWorld, DeskWorld]:
    base = _base()
    return DeskWorld(base, tables=()), DeskWorld(base, tables=())


def test_a_list_compared_item_by_item_agrees_with_the_hash() -> None:
    for change, expected in [
        (lambda r: None, True),  # copied, unchanged
        (lambda r: r.update(gb=1.0), False),  # 1 is not 1.0 in τ²'s JSON
        (lambda r: r.update(gb=True), False),  # nor is True
        (lambda r: r.update(gb=1), True),
    ]:
        a, b = _pair()
        change(a.own_item("lines", a.peek("lines")[0]))
        assert same_db(a, b) is expected
        assert (db_hash(a) == db_hash(b)) is expected


def test_lists_of_different_lengths_differ() -> None:
    a, b = _pair()
    a.append_item("lines", {"id": "L3"})
    assert not same_db(a, b) and db_hash(a) != db_hash(b)


def test_the_memo_of_the_gold_side_is_used_again() -> None:
    a, b = _pair()
    b.own_item("lines", b.peek("lines")[1])["gb"] = 3.0
    known: dict[Any, str] = {}
    assert not same_db(a.copy(), b, known)
    assert ("lines", 1) in known  # the gold record's text, kept
    a.own_item("lines", a.peek("lines")[1])["gb"] = 3.0
    assert same_db(a, b, known) and db_hash(a) == db_hash(b)
