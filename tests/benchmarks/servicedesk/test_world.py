"""The copy-on-write retail world and the loader of τ-bench-shaped data files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deedbench.benchmarks.retail import load_retail_data
from deedbench.benchmarks.servicedesk import DeskWorld, copy_json
from deedbench.errors import BenchmarkError
from deedbench.scoring import tau_hash, to_hashable


def tiny_base() -> dict[str, Any]:
    return {
        "users": {
            "u2": {"name": "Bo", "balance": 10, "orders": ["#W2"]},
            "u1": {"name": "Al", "balance": 5.5, "orders": ["#W1"]},
        },
        "orders": {
            "#W2": {"status": "pending", "items": [{"id": "i1", "price": 100.0}]},
            "#W1": {"status": "delivered", "items": []},
        },
        "products": {"p1": {"name": "Mug", "variants": {"i1": {"price": 100.0}}}},
    }


@pytest.fixture
def base() -> dict[str, Any]:
    return tiny_base()


def exact(value: Any) -> str:
    """Text that tells 100 from 100.0 and keeps key order: stricter than ==."""
    return json.dumps(value)


def test_a_new_world_shares_the_base_records(base: dict[str, Any]) -> None:
    world = DeskWorld(base)
    assert world.get("users", "u1") is base["users"]["u1"]
    assert world.get("users", "nobody") is None
    assert world.get("no_table", "u1") is None
    assert world.touched() == {}


def test_for_update_copies_one_record_once(base: dict[str, Any]) -> None:
    pristine = copy.deepcopy(base)
    world = DeskWorld(base)
    record = world.for_update("orders", "#W2")
    assert record is not base["orders"]["#W2"]
    assert record == base["orders"]["#W2"]
    record["status"] = "cancelled"
    record["items"][0]["price"] = 1.0
    assert world.for_update("orders", "#W2") is record
    assert world.get("orders", "#W2") is record
    assert world.get("orders", "#W1") is base["orders"]["#W1"]
    assert world.touched() == {"orders": {"#W2"}}
    assert exact(base) == exact(pristine)


def test_for_update_of_a_missing_record_is_a_key_error(base: dict[str, Any]) -> None:
    world = DeskWorld(base)
    with pytest.raises(KeyError, match="nobody"):
        world.for_update("users", "nobody")
    assert world.touched() == {}


def test_two_worlds_over_one_base_do_not_see_each_other(base: dict[str, Any]) -> None:
    first, second = DeskWorld(base), DeskWorld(base)
    first.for_update("users", "u1")["name"] = "Changed"
    assert second.get("users", "u1") == {"name": "Al", "balance": 5.5, "orders": ["#W1"]}
    assert second.touched() == {}


def test_items_merge_the_overlay_in_base_order(base: dict[str, Any]) -> None:
    world = DeskWorld(base)
    world.for_update("users", "u1")["name"] = "Changed"
    items = list(world.items("users"))
    assert [key for key, _ in items] == ["u2", "u1"]
    assert items[1][1]["name"] == "Changed"
    assert items[0][1] is base["users"]["u2"]
    assert list(world.items("no_table")) == []


def test_snapshot_equals_the_base_when_nothing_was_written(base: dict[str, Any]) -> None:
    snapshot = DeskWorld(base).snapshot()
    assert exact(snapshot) == exact(base)
    assert list(snapshot) == ["users", "orders", "products"]


def test_snapshot_shows_writes_and_leaves_the_base_alone(base: dict[str, Any]) -> None:
    pristine = copy.deepcopy(base)
    world = DeskWorld(base)
    world.for_update("orders", "#W1")["status"] = "return requested"
    snapshot = world.snapshot()
    assert snapshot["orders"]["#W1"]["status"] == "return requested"
    assert list(snapshot["orders"]) == ["#W2", "#W1"]
    assert snapshot["orders"]["#W2"] is base["orders"]["#W2"]
    assert exact(base) == exact(pristine)


def test_copy_json_is_deep_and_keeps_number_types() -> None:
    value = {"a": [1, 2.0, {"b": [True, None, "x"]}]}
    copied = copy_json(value)
    assert exact(copied) == exact(value)
    assert copied["a"] is not value["a"]
    assert copied["a"][2] is not value["a"][2]
    assert type(copied["a"][0]) is int and type(copied["a"][1]) is float


# --- loading ----------------------------------------------------------------------------------


def write_data(directory: Path, base: dict[str, Any]) -> None:
    for name, table in base.items():
        (directory / f"{name}.json").write_text(json.dumps(table), encoding="utf-8")


def test_load_reads_the_three_tables(tmp_path: Path, base: dict[str, Any]) -> None:
    write_data(tmp_path, base)
    loaded = load_retail_data(tmp_path)
    assert exact(loaded) == exact(base)


def test_load_names_a_missing_file(tmp_path: Path, base: dict[str, Any]) -> None:
    write_data(tmp_path, base)
    (tmp_path / "orders.json").unlink()
    with pytest.raises(BenchmarkError, match=r"orders\.json is missing"):
        load_retail_data(tmp_path)


def test_load_names_a_broken_file(tmp_path: Path, base: dict[str, Any]) -> None:
    write_data(tmp_path, base)
    (tmp_path / "products.json").write_text('{"p1": {', encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"products\.json is not valid JSON"):
        load_retail_data(tmp_path)


def test_load_rejects_a_file_that_is_not_a_table(tmp_path: Path, base: dict[str, Any]) -> None:
    write_data(tmp_path, base)
    (tmp_path / "users.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"users\.json must hold a JSON object"):
        load_retail_data(tmp_path)


def test_load_names_a_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkError, match="nowhere"):
        load_retail_data(tmp_path / "nowhere")


def _listed() -> dict[str, Any]:
    return {"lines": [{"id": "L1", "gb": 1.0}, {"id": "L2", "gb": 2.0}], "phone": {"on": True}}


def test_own_item_copies_one_item_of_a_list_and_leaves_the_others_shared() -> None:
    base = _listed()
    world = DeskWorld(base, tables=())
    first, second = world.peek("lines")
    assert first is base["lines"][0]  # peeking copies nothing
    mine = world.own_item("lines", first)
    mine["gb"] = 9.0
    assert base["lines"][0]["gb"] == 1.0 and world.peek("lines")[0] is mine
    assert world.peek("lines")[1] is second  # the untouched record is still shared
    assert world.own_item("lines", mine) is mine  # owned once
    with pytest.raises(ValueError, match="not an item of 'lines'"):
        world.own_item("lines", first)  # the stale, shared record
    world.append_item("lines", {"id": "L3", "gb": 0.0})
    assert [x["id"] for x in world.peek("lines")] == ["L1", "L2", "L3"]
    assert len(base["lines"]) == 2
    whole = world.value("lines")  # the whole list now: its shared items are copied
    assert whole[0] is mine and whole[1] is not second and whole[1] == second


def test_a_copied_world_shares_its_values_until_either_changes_one() -> None:
    base = _listed()
    world = DeskWorld(base, tables=())
    world.value("phone")["on"] = False
    world.own_item("lines", world.peek("lines")[0])["gb"] = 5.0
    other = world.copy()
    assert other.peek("phone") is world.peek("phone")  # shared, not copied
    other.value("phone")["on"] = "other"
    world.own_item("lines", world.peek("lines")[0])["gb"] = 7.0
    assert world.peek("phone")["on"] is False and other.peek("phone")["on"] == "other"
    assert other.peek("lines")[0]["gb"] == 5.0 and world.peek("lines")[0]["gb"] == 7.0
    assert other.snapshot()["lines"][0]["gb"] == 5.0 and base["lines"][0]["gb"] == 1.0


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["users", "orders", "extra"]),
            st.text(min_size=1, max_size=4),
            st.dictionaries(
                st.text(max_size=3),
                st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
                max_size=3,
            ),
        ),
        max_size=12,
    )
)
def test_the_texts_are_the_snapshot_written_whole(writes: list[tuple[str, str, Any]]) -> None:
    """τ²'s hash reads `json_text`, τ-bench's `tau_text`; each must be the whole snapshot
    as that reference writes it (keys sorted, 100 and 100.0 apart, a one-item table as
    ``(x,)``), before and after writes, with the base's parts kept between calls."""
    base = {
        "users": {"u1": {"name": "Ana", "n": 1}, "ü": {"name": "Zoë", "n": 1.0}},
        "orders": {"o2": {"items": [1, 2]}, "o1": {}},
        "extra": {},
        "single": {"s": {"x": None}},
        "lines": [{"id": "l1", "on": True}],
    }
    tables = ["users", "orders", "extra", "single"]

    def whole(world: DeskWorld) -> tuple[str, str]:
        snapshot = world.snapshot()
        return json.dumps(snapshot, sort_keys=True, default=str), str(to_hashable(snapshot))

    world = DeskWorld(base, tables)
    assert (world.json_text(), world.tau_text()) == whole(world)
    for table, key, record in writes:
        if key in base[table] and record:
            world.for_update(table, key).update(record)
        else:
            world.put(table, key, record)
    world.value("lines").append({"id": "l2"})
    assert (world.json_text(), world.tau_text()) == whole(world)
    assert tau_hash(world) == tau_hash(world.snapshot())
    fresh = DeskWorld(base, tables)
    assert (fresh.json_text(), fresh.tau_text()) == whole(fresh)
