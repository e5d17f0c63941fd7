"""The generated retail world: deterministic, consistent, and shaped exactly like τ-bench's."""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

import _shared
from deedbench.benchmarks.retail import generate_world, write_world

TAUBENCH = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"
NAMES = ("users", "orders", "products")
STATUSES = {"pending", "processed", "delivered", "cancelled"}

World = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def world() -> World:
    return generate_world()


@pytest.fixture(scope="module")
def taubench() -> World:
    folder = TAUBENCH / "retail"
    if not all((folder / f"{name}.json").is_file() for name in NAMES):
        _shared.need("taubench")
        pytest.fail(f"τ-bench's retail world is not at {folder}")
    return {name: json.loads((folder / f"{name}.json").read_text()) for name in NAMES}


def _type(value: Any) -> str:
    """A value's JSON-level type, with element types for lists (`list[]` when empty)."""
    if isinstance(value, list):
        return "list[" + "|".join(sorted({_type(item) for item in value})) + "]"
    return type(value).__name__


def _shape(world: World) -> dict[str, tuple[set[tuple[str, ...]], dict[str, set[str]]]]:
    """For each kind of record: the key sequences seen and the types seen under each key."""
    records: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for user in world["users"].values():
        records["user"].append(user)
        records["user.name"].append(user["name"])
        records["address"].append(user["address"])
        for method in user["payment_methods"].values():
            records[f"payment_method.{method['source']}"].append(method)
    for order in world["orders"].values():
        records["order"].append(order)
        records["address"].append(order["address"])
        records["item"].extend(order["items"])
        records["item.options"].extend(item["options"] for item in order["items"])
        records["fulfillment"].extend(order["fulfillments"])
        records["payment_history"].extend(order["payment_history"])
    for product in world["products"].values():
        records["product"].append(product)
        records["variant"].extend(product["variants"].values())
    shape = {}
    for kind, found in records.items():
        keys = {tuple(record) for record in found} if kind != "item.options" else set()
        types: dict[str, set[str]] = defaultdict(set)
        for record in found:
            for key, value in record.items():
                types["*" if kind == "item.options" else key].add(_type(value))
        shape[kind] = (keys, dict(types))
    return shape


def _assert_consistent(world: World) -> None:
    users, orders, products = world["users"], world["orders"], world["products"]
    assert set(world) == set(NAMES)

    method_ids: list[str] = []
    for user_id, user in users.items():
        first, last = user["name"]["first_name"], user["name"]["last_name"]
        assert re.fullmatch(rf"{first.lower()}_{last.lower()}_\d{{4}}", user_id)
        assert re.fullmatch(rf"{first.lower()}\.{last.lower()}\d{{4}}@example\.com", user["email"])
        assert user["payment_methods"], user_id
        for method_id, method in user["payment_methods"].items():
            assert method["id"] == method_id
            assert re.fullmatch(rf"{method['source']}_\d{{7}}", method_id)
            if method["source"] == "credit_card":
                assert re.fullmatch(r"\d{4}", method["last_four"]) and method["brand"]
            elif method["source"] == "gift_card":
                assert type(method["balance"]) is int and method["balance"] >= 0
            else:
                assert method["source"] == "paypal"
            method_ids.append(method_id)
        listed = [order_id for order_id, order in orders.items() if order["user_id"] == user_id]
        assert user["orders"] == listed  # every order listed once, in the file's order
    assert len(method_ids) == len(set(method_ids))

    variants = {}
    for product_id, product in products.items():
        assert re.fullmatch(r"\d{10}", product_id) and product["product_id"] == product_id
        option_names = {tuple(v["options"]) for v in product["variants"].values()}
        assert len(option_names) == 1  # every variant chooses the same options
        combos = [tuple(v["options"].values()) for v in product["variants"].values()]
        assert len(combos) == len(set(combos))
        for item_id, variant in product["variants"].items():
            assert re.fullmatch(r"\d{10}", item_id) and variant["item_id"] == item_id
            assert type(variant["available"]) is bool
            assert (
                type(variant["price"]) is float and round(variant["price"], 2) == variant["price"]
            )
            assert item_id not in variants and item_id not in products
            variants[item_id] = (product, variant)

    tracking_ids = []
    for order_id, order in orders.items():
        assert re.fullmatch(r"#W\d{7}", order_id) and order["order_id"] == order_id
        user = users[order["user_id"]]
        assert order["status"] in STATUSES
        assert order["address"] is not user["address"]  # tools must change one, not both
        item_ids = [item["item_id"] for item in order["items"]]
        assert item_ids and len(item_ids) == len(set(item_ids))
        for item in order["items"]:
            product, variant = variants[item["item_id"]]
            assert item["product_id"] == product["product_id"] and item["name"] == product["name"]
            assert item["options"] == variant["options"] and item["price"] == variant["price"]
            assert type(item["price"]) is float
        if order["status"] == "pending":
            assert order["fulfillments"] == []
        else:
            [fulfillment] = order["fulfillments"]
            assert fulfillment["item_ids"] == item_ids
            [tracking_id] = fulfillment["tracking_id"]
            assert re.fullmatch(r"\d{12}", tracking_id)
            tracking_ids.append(tracking_id)
        total = round(sum(item["price"] for item in order["items"]), 2)
        payment, *rest = order["payment_history"]
        assert payment["transaction_type"] == "payment" and payment["amount"] == total
        assert type(payment["amount"]) is float
        assert payment["payment_method_id"] in user["payment_methods"]
        if order["status"] == "cancelled":
            assert rest == [{**payment, "transaction_type": "refund"}]
        else:
            assert rest == []
    assert len(tracking_ids) == len(set(tracking_ids))

    for address in [u["address"] for u in users.values()] + [o["address"] for o in orders.values()]:
        assert address["country"] == "USA" and re.fullmatch(r"\d{5}", address["zip"])
        assert address["address1"] and address["address2"]


def test_same_seed_gives_byte_identical_world(tmp_path: Path) -> None:
    first, second = generate_world(seed=11), generate_world(seed=11)
    assert json.dumps(first) == json.dumps(second)
    write_world(first, tmp_path / "a")
    write_world(second, tmp_path / "b")
    for name in NAMES:
        assert (tmp_path / "a" / f"{name}.json").read_bytes() == (
            tmp_path / "b" / f"{name}.json"
        ).read_bytes()


def test_global_random_state_does_not_matter() -> None:
    random.seed(1)
    first = generate_world(seed=5, users=30, orders=60, products=8)
    random.seed(2)
    random.random()
    assert generate_world(seed=5, users=30, orders=60, products=8) == first


def test_different_seeds_give_different_worlds(world: World) -> None:
    other = generate_world(seed=1)
    for name in NAMES:
        assert set(other[name]) != set(world[name])
    names = {p["name"] for p in world["products"].values()}
    assert names != {p["name"] for p in other["products"].values()}  # 50 of 60 types each


def test_default_sizes(world: World) -> None:
    assert [len(world[name]) for name in NAMES] == [500, 1000, 50]
    assert sum(len(order["items"]) for order in world["orders"].values()) > 2000


@pytest.mark.parametrize(
    ("users", "orders", "products"),
    [(1, 1, 1), (20, 35, 7), (40, 0, 3), (0, 0, 0), (30, 60, 75), (200, 400, 20)],
)
def test_sizes_are_configurable(users: int, orders: int, products: int) -> None:
    world = generate_world(seed=3, users=users, orders=orders, products=products)
    assert [len(world[name]) for name in NAMES] == [users, orders, products]
    _assert_consistent(world)
    names = [p["name"] for p in world["products"].values()]
    assert len(names) == len(set(names))  # beyond the catalogue, later series get new names


@pytest.mark.parametrize(
    "sizes",
    [{"users": -1}, {"orders": -1}, {"products": -1}, {"users": 0}, {"products": 0}],
)
def test_impossible_sizes_are_rejected(sizes: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        generate_world(**sizes)


def test_default_world_is_consistent(world: World) -> None:
    _assert_consistent(world)


def test_cities_states_and_zips_agree(world: World) -> None:
    addresses = [u["address"] for u in world["users"].values()]
    addresses += [o["address"] for o in world["orders"].values()]
    states: dict[str, set[str]] = defaultdict(set)
    cities_of_prefix: dict[str, set[str]] = defaultdict(set)
    for address in addresses:
        states[address["city"]].add(address["state"])
        cities_of_prefix[address["zip"][:3]].add(address["city"])
    assert all(len(found) == 1 for found in states.values())
    assert all(len(found) == 1 for found in cities_of_prefix.values())
    assert len(states) >= 20


def test_shape_matches_taubench(world: World, taubench: World) -> None:
    ours, theirs = _shape(world), _shape(taubench)
    assert set(ours) == set(theirs)
    for kind in theirs:
        assert ours[kind] == theirs[kind], kind
    # The types τ-bench's hash is sensitive to, spelled out.
    assert ours["variant"][1]["price"] == ours["item"][1]["price"] == {"float"}
    assert ours["payment_history"][1]["amount"] == {"float"}
    assert ours["payment_method.gift_card"][1]["balance"] == {"int"}
    assert ours["payment_method.credit_card"][1]["last_four"] == {"str"}


def test_statuses_and_transactions_match_taubench(world: World, taubench: World) -> None:
    def kinds(w: World) -> tuple[set[str], set[str], set[str]]:
        orders = w["orders"].values()
        return (
            {o["status"] for o in orders},
            {p["transaction_type"] for o in orders for p in o["payment_history"]},
            {m["source"] for u in w["users"].values() for m in u["payment_methods"].values()},
        )

    assert kinds(world) == kinds(taubench)


def test_world_has_material_for_tasks(world: World) -> None:
    orders = list(world["orders"].values())
    statuses = Counter(order["status"] for order in orders)
    assert set(statuses) == STATUSES
    assert statuses["pending"] >= 0.15 * len(orders)
    assert statuses["delivered"] >= 0.30 * len(orders)
    assert min(statuses["processed"], statuses["cancelled"]) >= 0.05 * len(orders)

    users = world["users"].values()
    assert sum(len(user["orders"]) >= 3 for user in users) >= 50
    balances = [
        m["balance"] for u in users for m in u["payment_methods"].values() if "balance" in m
    ]
    assert sum(balance >= 100 for balance in balances) >= 20
    assert sum(len(u["payment_methods"]) >= 2 for u in users) >= 100

    products = world["products"].values()
    available = [sum(v["available"] for v in p["variants"].values()) for p in products]
    assert min(available) >= 2  # something to exchange or modify into
    unavailable = [len(p["variants"]) - n for p, n in zip(products, available, strict=True)]
    assert sum(n > 0 for n in unavailable) >= 0.8 * len(available)

    def swappable(order: dict[str, Any]) -> bool:
        for item in order["items"]:
            variants = world["products"][item["product_id"]]["variants"].values()
            if any(v["available"] and v["item_id"] != item["item_id"] for v in variants):
                return True
        return False

    for status in ("pending", "delivered"):
        candidates = [o for o in orders if o["status"] == status]
        assert sum(map(swappable, candidates)) >= 0.9 * len(candidates)
    moved = sum(o["address"] != world["users"][o["user_id"]]["address"] for o in orders)
    assert 0.1 * len(orders) <= moved <= 0.3 * len(orders)


def test_write_world_round_trips_through_json(world: World, tmp_path: Path) -> None:
    folder = tmp_path / "nested" / "retail"
    write_world(world, folder)
    assert sorted(path.name for path in folder.iterdir()) == sorted(f"{n}.json" for n in NAMES)
    loaded = {name: json.loads((folder / f"{name}.json").read_text()) for name in NAMES}
    assert loaded == world
    assert str(loaded) == str(world)  # τ-bench hashes str(): 100 and 100.0 must survive
