"""State comparison: τ-bench's exact hash rule, the canonical rule, diffs, and worlds."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from deedbench.benchmarks.servicedesk import DeskWorld
from deedbench.scoring import (
    canonical,
    diff,
    records_equal_tau,
    tau_hash,
    to_hashable,
    worlds_diff,
    worlds_equal_canonical,
    worlds_equal_tau,
)

UNORDERED = frozenset({"orders.*.items", "orders.*.payment_history"})

# --- τ-bench's rule ---------------------------------------------------------------------------


def test_to_hashable_follows_tau_bench() -> None:
    value = {"b": [1, {"y": 2, "x": 1}], "a": {3, 1, 2}, "c": "s"}
    assert to_hashable(value) == (
        ("a", (1, 2, 3)),
        ("b", (1, (("x", 1), ("y", 2)))),
        ("c", "s"),
    )
    assert to_hashable(5) == 5 and to_hashable(None) is None


def test_tau_hash_is_sha256_of_str() -> None:
    assert tau_hash({}) == hashlib.sha256(b"()").hexdigest()
    db = {"t": {"k": [1, 2]}}
    assert tau_hash(db) == hashlib.sha256(str((("t", (("k", (1, 2)),)),)).encode()).hexdigest()


def test_tau_hash_tells_100_from_100_0_and_keeps_list_order() -> None:
    assert tau_hash({"a": 100}) != tau_hash({"a": 100.0})
    assert tau_hash({"a": [1, 2]}) != tau_hash({"a": [2, 1]})
    assert tau_hash({"a": 1, "b": 2}) == tau_hash({"b": 2, "a": 1})


def test_records_equal_tau() -> None:
    assert records_equal_tau({"a": 1, "b": [1]}, {"b": [1], "a": 1})
    assert not records_equal_tau({"a": 100}, {"a": 100.0})
    assert not records_equal_tau({"a": [1, 2]}, {"a": [2, 1]})
    assert not records_equal_tau({"a": 1}, None)
    assert records_equal_tau(None, None)


# --- the canonical rule -----------------------------------------------------------------------


def test_canonical_compares_numbers_by_value_and_ignores_key_order() -> None:
    assert canonical({"a": 100, "b": 1.5}) == canonical({"b": 1.5, "a": 100.0})
    assert canonical({"a": 100}) != canonical({"a": 100.5})
    assert canonical(True) != canonical(1)
    assert canonical(None) != canonical(0)
    assert canonical("1") != canonical(1)


def test_canonical_unordered_lists_are_multisets() -> None:
    a = {"items": [{"id": "x"}, {"id": "y"}], "tags": [1, 2]}
    b = {"items": [{"id": "y"}, {"id": "x"}], "tags": [1, 2]}
    assert canonical(a, UNORDERED, "orders.#W1") == canonical(b, UNORDERED, "orders.#W1")
    # the same lists elsewhere, or without the pattern, keep their order
    assert canonical(a, UNORDERED, "users.u1") != canonical(b, UNORDERED, "users.u1")
    assert canonical(a, frozenset(), "orders.#W1") != canonical(b, frozenset(), "orders.#W1")
    # a multiset counts duplicates
    c = {"items": [{"id": "x"}, {"id": "x"}, {"id": "y"}]}
    d = {"items": [{"id": "x"}, {"id": "y"}, {"id": "y"}]}
    assert canonical(c, UNORDERED, "orders.#W1") != canonical(d, UNORDERED, "orders.#W1")


def test_canonical_ordered_lists_keep_order_and_patterns_match_whole_paths() -> None:
    db_a = {"orders": {"#W1": {"items": [1, 2.0], "other": [1, 2]}}}
    db_b = {"orders": {"#W1": {"items": [2, 1], "other": [2, 1]}}}
    assert canonical(db_a["orders"]["#W1"]["items"], UNORDERED, "orders.#W1.items") == canonical(
        db_b["orders"]["#W1"]["items"], UNORDERED, "orders.#W1.items"
    )
    assert canonical(db_a, UNORDERED) != canonical(db_b, UNORDERED)
    db_b["orders"]["#W1"]["other"] = [1, 2]
    assert canonical(db_a, UNORDERED) == canonical(db_b, UNORDERED)


def test_canonical_mixed_multisets_sort_and_hash() -> None:
    value = {"items": [None, "a", 1, {"k": [1]}, True, 2.5]}
    form = canonical(value, frozenset({"items"}))
    shuffled = {"items": [2.5, {"k": [1]}, True, 1.0, "a", None]}
    assert form == canonical(shuffled, frozenset({"items"}))
    assert hash(form) == hash(canonical(shuffled, frozenset({"items"})))


# --- diff -------------------------------------------------------------------------------------


def test_diff_names_the_changed_field() -> None:
    before = {"status": "pending", "items": [{"price": 1.0}]}
    after = {"status": "cancelled", "items": [{"price": 1.0}]}
    assert diff(before, after, "orders['#W1']") == [
        "orders['#W1'].status: 'pending' -> 'cancelled'"
    ]
    assert diff(before, before, "x") == []


def test_diff_reports_added_removed_and_list_changes() -> None:
    before = {"a": 1, "gone": True, "list": [1, 2]}
    after = {"a": 1, "list": [1, 3, 4], "new key": "x"}
    assert diff(before, after) == [
        "gone: True -> (absent)",
        "list[1]: 2 -> 3",
        "list[2]: (absent) -> 4",
        "['new key']: (absent) -> 'x'",
    ]


def test_diff_numbers_by_value_unless_strict() -> None:
    assert diff({"a": 100}, {"a": 100.0}) == []
    assert diff({"a": 100}, {"a": 100.0}, strict=True) == ["a: 100 -> 100.0"]
    assert diff({"a": 1}, {"a": True}) == ["a: 1 -> True"]
    assert diff(1, 2) == ["(root): 1 -> 2"]


def test_diff_shortens_values_and_limits_lines() -> None:
    long = "x" * 200
    (line,) = diff({"a": long}, {"a": "y"})
    assert line.startswith("a: 'xxx") and "..." in line and len(line) < 100
    lines = diff({str(i): i for i in range(30)}, {str(i): -i - 1 for i in range(30)}, limit=5)
    assert len(lines) == 6
    assert lines[-1] == "... and 25 more differences"


# --- worlds over one base ---------------------------------------------------------------------


def tiny_base() -> dict[str, Any]:
    return {
        "users": {"u1": {"balance": 100, "orders": ["#W1"]}},
        "orders": {
            "#W1": {"status": "pending", "items": ["a", "b"], "payment_history": []},
            "#W2": {"status": "delivered", "items": ["c"], "payment_history": []},
        },
    }


def test_untouched_worlds_are_equal() -> None:
    base = tiny_base()
    assert worlds_equal_tau(DeskWorld(base), DeskWorld(base))
    assert worlds_equal_canonical(DeskWorld(base), DeskWorld(base), UNORDERED)


def test_worlds_compare_the_records_either_touched() -> None:
    base = tiny_base()
    a, b = DeskWorld(base), DeskWorld(base)
    a.for_update("orders", "#W1")["status"] = "cancelled"
    assert not worlds_equal_tau(a, b) and not worlds_equal_tau(b, a)
    assert not worlds_equal_canonical(a, b, UNORDERED)
    b.for_update("orders", "#W1")["status"] = "cancelled"
    assert worlds_equal_tau(a, b) and worlds_equal_canonical(a, b, UNORDERED)
    b.for_update("users", "u1")  # taken for update but unchanged
    assert worlds_equal_tau(a, b)


def test_canonical_worlds_forgive_what_tau_bench_does_not() -> None:
    base = tiny_base()
    a, b = DeskWorld(base), DeskWorld(base)
    a.for_update("users", "u1")["balance"] = 100.0
    a.for_update("orders", "#W1")["items"] = ["b", "a"]
    assert not worlds_equal_tau(a, b)
    assert worlds_equal_canonical(a, b, UNORDERED)
    assert not worlds_equal_canonical(a, b, frozenset())


class FakeWorld:
    """A view that lies about untouched records, to show that they are never read."""

    def __init__(self, records: dict[tuple[str, str], Any], touched: dict[str, set[str]]) -> None:
        self.records = records
        self._touched = touched
        self.reads: list[tuple[str, str]] = []

    def get(self, table: str, key: str) -> dict[str, Any] | None:
        self.reads.append((table, key))
        found: dict[str, Any] | None = self.records.get((table, key))
        return found

    def touched(self) -> dict[str, set[str]]:
        return self._touched


def test_worlds_equal_reads_only_touched_records() -> None:
    a = FakeWorld({("orders", "#W1"): {"s": 1}, ("orders", "#W2"): {"s": "a"}}, {"orders": {"#W1"}})
    b = FakeWorld({("orders", "#W1"): {"s": 1}, ("orders", "#W2"): {"s": "b"}}, {})
    assert worlds_equal_tau(a, b)
    assert worlds_equal_canonical(a, b, UNORDERED)
    assert set(a.reads) == set(b.reads) == {("orders", "#W1")}


def test_worlds_over_different_bases_are_refused() -> None:
    with pytest.raises(ValueError, match="different base"):
        worlds_equal_tau(DeskWorld(tiny_base()), DeskWorld(tiny_base()))


def test_worlds_diff_lists_touched_differences() -> None:
    base = tiny_base()
    a, b = DeskWorld(base), DeskWorld(base)
    b.for_update("orders", "#W1")["status"] = "cancelled"
    b.for_update("users", "u1")["balance"] = 150.0
    assert worlds_diff(a, b) == [
        "orders['#W1'].status: 'pending' -> 'cancelled'",
        "users.u1.balance: 100 -> 150.0",
    ]
    assert worlds_diff(a, a) == []
