"""Deterministic generator of deedbench's own retail world, in τ-bench's exact JSON shape.

deedbench's service-desk benchmark runs the same tools on τ-bench's retail world and on
worlds of its own, so a generated world must be indistinguishable in *shape* from
τ-bench's `users.json`, `orders.json` and `products.json`: the same keys in the same
order, the same value types (τ-bench's database hash is over `str()` of the structure,
so `100` and `100.0` differ) and the same invariants. The content — names, streets,
cities, product types, ids — is deedbench's own vocabulary: below, and the product
catalogue in catalog.json.

Shape facts mirrored from τ-bench (checked against its files):

- user ids are `first_last_NNNN` (lower case); every user has a non-empty `address2`.
- payment methods are keyed by their `id` (`credit_card_NNNNNNN`, `paypal_NNNNNNN`,
  `gift_card_NNNNNNN`); a gift card's `balance` is an *int*, a card's `last_four` a str.
- prices and payment amounts are floats with at most two decimals (`120.0`, never `120`).
- an order has exactly one `payment`, of `round(sum(item prices), 2)`, from one of its
  user's methods; a cancelled order adds a `refund` of the same amount to the same method.
- pending orders have no fulfillments; processed, delivered *and cancelled* orders have
  one fulfillment with one 12-digit tracking id covering every item.
- the initial world has only the statuses pending, processed, delivered and cancelled;
  "return requested", "exchange requested" and "pending (item modified)" are produced by
  the tools only.
- order items may be variants that are now unavailable, and about a fifth of orders ship
  to an address other than the user's current one.

Only `random.Random(seed)` is used, so a seed always gives byte-identical files.
"""

from __future__ import annotations

import itertools
import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "STATUS_SHARES",
    "JSONDict",
    "generate_world",
    "write_world",
]

# Share of each initial order status (τ-bench: 42% pending, 37% delivered, 10% each other).
STATUS_SHARES: dict[str, float] = {
    "pending": 0.40,
    "delivered": 0.38,
    "processed": 0.11,
    "cancelled": 0.11,
}

# Kinds of payment methods a user holds, with weights (τ-bench: two thirds hold one method).
_PAYMENT_COMBOS: tuple[tuple[tuple[str, ...], float], ...] = (
    (("gift_card",), 0.24),
    (("paypal",), 0.22),
    (("credit_card",), 0.20),
    (("gift_card", "paypal"), 0.08),
    (("credit_card", "gift_card"), 0.08),
    (("credit_card", "paypal"), 0.08),
    (("credit_card", "gift_card", "paypal"), 0.04),
    (("credit_card", "credit_card"), 0.03),
    (("credit_card", "credit_card", "paypal"), 0.015),
    (("credit_card", "credit_card", "gift_card", "paypal"), 0.015),
)
_CARD_BRANDS: tuple[tuple[str, float], ...] = (("visa", 0.5), ("mastercard", 0.4), ("amex", 0.1))

_OTHER_ADDRESS_SHARE = 0.2  # orders shipped somewhere other than the user's address
_UNAVAILABLE_SHARE = 0.35  # variants out of stock (τ-bench: 36%)
_MIN_AVAILABLE = 2  # so every product can be exchanged or modified into something
_VARIANTS_RANGE = (5, 20)
_ITEMS_RANGE = (1, 5)
_PRICE_SPREAD = 0.10  # variants of a product cost within ±10% of its base price

_FIRST_NAMES: tuple[str, ...] = (
    "Abigail", "Adrian", "Aisha", "Alejandro", "Amara", "Arjun", "Beatriz", "Benjamin",
    "Camila", "Carlos", "Chloe", "Dmitri", "Elena", "Elif", "Felix", "Grace", "Hana",
    "Hugo", "Ingrid", "Isaac", "Jasmine", "Jonah", "Kai", "Keiko", "Leila", "Lorenzo",
    "Malik", "Maya", "Nadia", "Nikhil", "Oscar", "Priya", "Quinn", "Rosa", "Samuel",
    "Tariq", "Theo", "Valentina", "Wei", "Zara",
)  # fmt: skip
_LAST_NAMES: tuple[str, ...] = (
    "Adeyemi", "Bauer", "Bennett", "Bianchi", "Castillo", "Chowdhury", "Costa", "Dubois",
    "Eriksen", "Fernandes", "Fischer", "Fujita", "Haddad", "Hansen", "Hughes", "Iyer",
    "Jensen", "Kowalski", "Larsen", "Mendoza", "Morales", "Murphy", "Nakamura", "Novak",
    "Okafor", "Olsen", "Park", "Petrov", "Quintero", "Ramos", "Reyes", "Schmidt", "Suzuki",
    "Tanaka", "Torres", "Vargas", "Walker", "Wong", "Yamamoto", "Zhang",
)  # fmt: skip
_STREETS: tuple[str, ...] = (
    "Aspen Circle", "Birch Court", "Bridge Street", "Canyon Trail", "Cherry Lane",
    "Church Street", "Dogwood Terrace", "Fox Run", "Franklin Street", "Garden Court",
    "Harbor View Drive", "Heron Way", "Jefferson Avenue", "Juniper Way", "Lincoln Way",
    "Magnolia Boulevard", "Meadow Lane", "Mill Street", "Orchard Street", "Poplar Avenue",
    "Prairie Avenue", "Quarry Lane", "Ridge Road", "Summit Avenue", "Sycamore Road",
    "Union Avenue", "Valley Road",
)  # fmt: skip
# (city, state, zip prefixes): a zip is a prefix of its own city plus two digits.
_CITIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Albuquerque", "NM", ("871",)),
    ("Atlanta", "GA", ("303",)),
    ("Baltimore", "MD", ("212",)),
    ("Boise", "ID", ("837",)),
    ("Boston", "MA", ("021", "022")),
    ("Buffalo", "NY", ("142",)),
    ("Burlington", "VT", ("054",)),
    ("Cleveland", "OH", ("441",)),
    ("Des Moines", "IA", ("503",)),
    ("Detroit", "MI", ("481", "482")),
    ("Kansas City", "MO", ("641",)),
    ("Las Vegas", "NV", ("891",)),
    ("Louisville", "KY", ("402",)),
    ("Madison", "WI", ("537",)),
    ("Milwaukee", "WI", ("532",)),
    ("Minneapolis", "MN", ("554",)),
    ("Nashville", "TN", ("372",)),
    ("New Orleans", "LA", ("701",)),
    ("Oklahoma City", "OK", ("731",)),
    ("Omaha", "NE", ("681",)),
    ("Pittsburgh", "PA", ("152",)),
    ("Portland", "OR", ("970", "971", "972")),
    ("Providence", "RI", ("029",)),
    ("Raleigh", "NC", ("276",)),
    ("Richmond", "VA", ("232",)),
    ("Sacramento", "CA", ("956", "958")),
    ("Salt Lake City", "UT", ("841",)),
    ("Spokane", "WA", ("992",)),
    ("Tampa", "FL", ("336",)),
    ("Tucson", "AZ", ("857",)),
)
_UNIT_KINDS: tuple[tuple[str, float], ...] = (("Suite", 0.5), ("Apt", 0.4), ("Unit", 0.1))


JSONDict = dict[str, Any]


class _Ids:
    """Draws fresh random digit ids, never repeating one, from the world's one generator."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._used: set[str] = set()

    def digits(self, length: int, prefix: str = "") -> str:
        while True:
            candidate = prefix + str(self._rng.randrange(10 ** (length - 1), 10**length))
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate


def _weighted(rng: random.Random, table: tuple[tuple[Any, float], ...]) -> Any:
    values = [value for value, _ in table]
    weights = [weight for _, weight in table]
    return rng.choices(values, weights=weights)[0]


def _status_plan(rng: random.Random, count: int) -> list[str]:
    """Exact shares by largest remainder, then shuffled: every status shows up as planned."""
    quotas = {status: share * count for status, share in STATUS_SHARES.items()}
    counts = {status: int(quota) for status, quota in quotas.items()}
    by_remainder = sorted(quotas, key=lambda status: counts[status] - quotas[status])
    for status in by_remainder[: count - sum(counts.values())]:
        counts[status] += 1
    plan = [status for status, n in counts.items() for _ in range(n)]
    rng.shuffle(plan)
    return plan


def _price(value: float) -> float:
    """Two-decimal float, as τ-bench stores every price and amount (120.0, never 120)."""
    return float(round(value, 2))


def _address(rng: random.Random) -> JSONDict:
    city, state, prefixes = rng.choice(_CITIES)
    unit = _weighted(rng, _UNIT_KINDS)
    return {
        "address1": f"{rng.randint(10, 9999)} {rng.choice(_STREETS)}",
        "address2": f"{unit} {rng.randint(100, 999) if unit != 'Unit' else rng.randint(1, 99)}",
        "city": city,
        "country": "USA",
        "state": state,
        "zip": rng.choice(prefixes) + f"{rng.randint(0, 99):02d}",
    }


def _load_catalog() -> list[tuple[str, int, int, dict[str, list[str]]]]:
    """The product types of catalog.json as (name, lowest and highest base price in
    dollars, option name -> values); a variant is one combination of option values."""
    text = resources.files("deedbench.benchmarks.retail").joinpath("catalog.json").read_text()
    return [
        (t["name"], t["base_price"][0], t["base_price"][1], t["options"]) for t in json.loads(text)
    ]


_PRODUCT_TYPES = _load_catalog()


def _products(rng: random.Random, ids: _Ids, count: int) -> dict[str, JSONDict]:
    order = rng.sample(range(len(_PRODUCT_TYPES)), len(_PRODUCT_TYPES))
    products: dict[str, JSONDict] = {}
    for index in range(count):
        type_index = order[index % len(order)]
        name, low, high, options = _PRODUCT_TYPES[type_index]
        generation = index // len(order)  # more products than types: a later series
        if generation:
            name = f"{name} (Series {generation + 1})"
        combos = list(itertools.product(*options.values()))
        n_variants = min(rng.randint(*_VARIANTS_RANGE), len(combos))
        chosen = rng.sample(combos, n_variants)
        available = [rng.random() >= _UNAVAILABLE_SHARE for _ in chosen]
        for position in range(n_variants):  # top up so exchanges always have a target
            if sum(available) >= min(_MIN_AVAILABLE, n_variants):
                break
            available[position] = True
        base = rng.uniform(low, high)
        product_id = ids.digits(10)
        variants: dict[str, JSONDict] = {}
        for combo, in_stock in zip(chosen, available, strict=True):
            item_id = ids.digits(10)
            variants[item_id] = {
                "item_id": item_id,
                "options": dict(zip(options, combo, strict=True)),
                "available": in_stock,
                "price": _price(base * rng.uniform(1 - _PRICE_SPREAD, 1 + _PRICE_SPREAD)),
            }
        products[product_id] = {"name": name, "product_id": product_id, "variants": variants}
    return products


def _gift_card_balance(rng: random.Random) -> int:
    """Whole dollars as τ-bench stores them; a fifth of cards hold enough to pay upgrades."""
    return rng.randint(101, 500) if rng.random() < 0.2 else rng.randint(0, 100)


def _payment_method(rng: random.Random, ids: _Ids, source: str) -> JSONDict:
    method_id = ids.digits(7, prefix=f"{source}_")
    if source == "credit_card":
        return {
            "source": source,
            "brand": _weighted(rng, _CARD_BRANDS),
            "last_four": f"{rng.randint(0, 9999):04d}",
            "id": method_id,
        }
    if source == "gift_card":
        return {"source": source, "balance": _gift_card_balance(rng), "id": method_id}
    return {"source": source, "id": method_id}


def _users(rng: random.Random, ids: _Ids, count: int) -> dict[str, JSONDict]:
    users: dict[str, JSONDict] = {}
    for _ in range(count):
        first, last = rng.choice(_FIRST_NAMES), rng.choice(_LAST_NAMES)
        user_id = ids.digits(4, prefix=f"{first.lower()}_{last.lower()}_")
        sources = list(_weighted(rng, _PAYMENT_COMBOS))
        rng.shuffle(sources)
        methods = [_payment_method(rng, ids, source) for source in sources]
        users[user_id] = {
            "name": {"first_name": first, "last_name": last},
            "address": _address(rng),
            "email": f"{first.lower()}.{last.lower()}{rng.randint(1000, 9999)}@example.com",
            "payment_methods": {method["id"]: method for method in methods},
            "orders": [],
        }
    return users


def _order_items(rng: random.Random, products: list[JSONDict]) -> list[JSONDict]:
    """Products drawn independently (so one may repeat), never the same variant twice."""
    items: list[JSONDict] = []
    taken: set[str] = set()
    for _ in range(rng.randint(*_ITEMS_RANGE)):
        product = rng.choice(products)
        choices = [v for v in product["variants"].values() if v["item_id"] not in taken]
        if not choices:
            continue
        variant = rng.choice(choices)
        taken.add(variant["item_id"])
        items.append(
            {
                "name": product["name"],
                "product_id": product["product_id"],
                "item_id": variant["item_id"],
                "price": variant["price"],
                "options": dict(variant["options"]),
            }
        )
    return items


def _orders(
    rng: random.Random,
    ids: _Ids,
    count: int,
    users: dict[str, JSONDict],
    products: dict[str, JSONDict],
) -> dict[str, JSONDict]:
    user_ids = list(users)
    product_list = list(products.values())
    orders: dict[str, JSONDict] = {}
    for status in _status_plan(rng, count):
        order_id = ids.digits(7, prefix="#W")
        user_id = rng.choice(user_ids)
        user = users[user_id]
        # The user's address is copied, never shared: a tool changes one without the other.
        other = rng.random() < _OTHER_ADDRESS_SHARE
        address = _address(rng) if other else dict(user["address"])
        items = _order_items(rng, product_list)
        fulfillments: list[JSONDict] = []
        if status != "pending":
            fulfillments.append(
                {"tracking_id": [ids.digits(12)], "item_ids": [item["item_id"] for item in items]}
            )
        method_id = rng.choice(list(user["payment_methods"]))
        amount = _price(sum(item["price"] for item in items))
        history = [
            {"transaction_type": "payment", "amount": amount, "payment_method_id": method_id}
        ]
        if status == "cancelled":
            history.append(
                {"transaction_type": "refund", "amount": amount, "payment_method_id": method_id}
            )
        orders[order_id] = {
            "order_id": order_id,
            "user_id": user_id,
            "address": address,
            "items": items,
            "fulfillments": fulfillments,
            "status": status,
            "payment_history": history,
        }
        user["orders"].append(order_id)
    return orders


def generate_world(
    seed: int = 0, users: int = 500, orders: int = 1000, products: int = 50
) -> dict[str, dict[str, JSONDict]]:
    """A retail world `{"users", "orders", "products"}` shaped exactly like τ-bench's files.

    Same arguments give an identical world (byte-identical JSON); a different seed gives
    a different one. Defaults match τ-bench's sizes: 500 users, 1,000 orders, 50 products.
    """
    for label, value in (("users", users), ("orders", orders), ("products", products)):
        if value < 0:
            raise ValueError(f"{label} must be >= 0, got {value}")
    if orders and not (users and products):
        raise ValueError("orders need at least one user and one product")
    rng = random.Random(seed)
    ids = _Ids(rng)
    product_table = _products(rng, ids, products)
    user_table = _users(rng, ids, users)
    order_table = _orders(rng, ids, orders, user_table, product_table)
    return {"users": user_table, "orders": order_table, "products": product_table}


def write_world(world: dict[str, Any], directory: Path) -> None:
    """Write users.json, orders.json and products.json, loadable wherever τ-bench's are."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("users", "orders", "products"):
        text = json.dumps(world[name], indent=4, ensure_ascii=False) + "\n"
        (directory / f"{name}.json").write_text(text, encoding="utf-8")
