"""Deterministic generator of deedbench's own retail world, in τ-bench's exact JSON shape.

deedbench's service-desk benchmark runs the same tools on τ-bench's retail world and on
worlds of its own, so a generated world must be indistinguishable in *shape* from
τ-bench's `users.json`, `orders.json` and `products.json`: the same keys in the same
order, the same value types (τ-bench's database hash is over `str()` of the structure,
so `100` and `100.0` differ) and the same invariants. The content — names, streets,
cities, product types, ids — is deedbench's own vocabulary below.

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
from pathlib import Path
from typing import Any

__all__ = ["STATUS_SHARES", "generate_world", "write_world"]

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

# Product types: "name: lowest-highest base price in dollars", then one indented line per
# option with its values; a variant is one combination of values.
_CATALOG = """
Rain Jacket: 60-140
    size: XS, S, M, L, XL
    color: olive, navy, yellow, charcoal
    hood: packable, fixed
Camping Tent: 120-480
    capacity: 1-person, 2-person, 4-person, 6-person
    season: 3-season, 4-season
    color: orange, green, grey
Sleeping Bag: 80-260
    temperature rating: 20F, 35F, 50F
    fill: down, synthetic
    length: regular, long
Blender: 70-320
    capacity: 48oz, 64oz, 72oz
    motor: 900W, 1200W, 1500W
    color: black, red, white
Standing Desk: 300-900
    width: 48 inch, 55 inch, 60 inch, 72 inch
    top finish: walnut, white, bamboo, black
    frame: single motor, dual motor
Computer Monitor: 180-700
    screen size: 24-inch, 27-inch, 32-inch
    resolution: 1080p, 1440p, 4K
    refresh rate: 60Hz, 144Hz, 165Hz
Webcam: 40-180
    resolution: 720p, 1080p, 4K
    microphone: mono, stereo
    mount: clip, tripod
Air Fryer: 60-200
    capacity: 3qt, 5qt, 8qt
    color: black, white, sage
    display: dial, touchscreen
Rice Cooker: 40-220
    capacity: 3 cups, 6 cups, 10 cups
    inner pot: nonstick, ceramic, stainless steel
    function: basic, fuzzy logic
Cast Iron Skillet: 25-90
    diameter: 8 inch, 10 inch, 12 inch
    finish: pre-seasoned, enameled
    handle: standard, dual
Chef Knife: 40-260
    blade length: 6 inch, 8 inch, 10 inch
    steel: German, Japanese, Damascus
    handle: wood, resin, composite
Food Processor: 60-300
    capacity: 7 cup, 11 cup, 14 cup
    color: silver, black, white
    attachments: basic, deluxe
Stand Mixer: 200-550
    bowl size: 4.5qt, 5qt, 6qt
    color: red, cream, slate, black
    attachments: standard, baking bundle
Toaster Oven: 60-240
    capacity: 4-slice, 6-slice
    convection: yes, no
    color: black, stainless steel, copper
Throw Blanket: 30-120
    size: 50x60, 60x80
    material: wool, cotton, sherpa
    color: grey, rust, teal, cream
Bath Towel Set: 30-110
    pieces: 2-piece, 4-piece, 6-piece
    material: Turkish cotton, bamboo, microfiber
    color: white, navy, sand
Bed Sheet Set: 50-250
    size: twin, queen, king
    material: percale, sateen, linen
    color: white, ivory, slate
Pillow: 30-140
    fill: down, memory foam, latex
    firmness: soft, medium, firm
    size: standard, king
Floor Lamp: 60-260
    color: brass, black, white
    bulb type: LED, incandescent
    style: arc, tripod, torchiere
Area Rug: 120-600
    size: 5x8 ft, 8x10 ft, 9x12 ft
    material: wool, jute, polypropylene
    pattern: solid, geometric, vintage
Shoe Rack: 25-90
    tiers: 3-tier, 4-tier, 5-tier
    material: bamboo, metal
    color: natural, black, white
Chair Mat: 30-90
    size: 36x48, 45x53, 46x60
    surface: hard floor, low pile carpet, high pile carpet
    shape: rectangle, lip
Drone: 300-1400
    camera: 2.7K, 4K, 6K
    flight time: 20 minutes, 30 minutes, 40 minutes
    color: grey, white
Smart Doorbell: 80-260
    resolution: 1080p, 1536p, 2K
    power: battery, wired
    color: black, satin nickel, bronze
Robot Lawn Mower: 700-2500
    lawn size: 0.25 acre, 0.5 acre, 1 acre
    navigation: boundary wire, GPS
    color: green, grey
Electric Scooter: 300-1200
    range: 15 miles, 25 miles, 40 miles
    max speed: 15 mph, 20 mph
    color: black, white, blue
Kayak: 250-900
    length: 9 ft, 10 ft, 12 ft
    type: sit-on-top, sit-inside, inflatable
    color: orange, teal, lime, red
Fishing Rod: 40-220
    length: 6 ft, 7 ft, 8 ft
    power: light, medium, heavy
    material: graphite, fiberglass
Tennis Racket: 90-260
    head size: 98 sq in, 100 sq in, 105 sq in
    weight: 280g, 300g, 315g
    grip size: 4 1/8, 4 1/4, 4 3/8
Golf Balls: 20-60
    pack size: 12-pack, 24-pack
    compression: low, mid, high
    color: white, yellow, orange
Treadmill: 500-2200
    max speed: 8 mph, 10 mph, 12 mph
    incline: manual, motorized
    deck: folding, fixed
Rowing Machine: 300-1300
    resistance: air, magnetic, water
    monitor: basic, Bluetooth
    frame: steel, aluminum
Resistance Bands: 15-60
    set size: 3-band, 5-band, 11-band
    material: latex, fabric
    handles: yes, no
Board Game: 20-90
    players: 2-4, 2-6, 3-8
    genre: strategy, party, cooperative, family
    edition: standard, deluxe
Acoustic Guitar: 180-900
    body: dreadnought, concert, parlor
    top wood: spruce, cedar, mahogany
    finish: natural, sunburst, black
Digital Piano: 300-1500
    keys: 61, 76, 88
    action: semi-weighted, fully weighted, graded hammer
    color: black, white, rosewood
Turntable: 120-600
    drive: belt, direct
    preamp: built-in, none
    color: black, walnut, white
Soundbar: 150-900
    channels: 2.0, 3.1, 5.1
    subwoofer: wireless, none
    connectivity: HDMI eARC, optical, Bluetooth
Projector: 400-2200
    resolution: 1080p, 4K
    brightness: 2000 lumens, 3000 lumens, 4000 lumens
    throw: standard, short throw
Wi-Fi Router: 80-500
    standard: Wi-Fi 5, Wi-Fi 6, Wi-Fi 6E, Wi-Fi 7
    bands: dual-band, tri-band
    mesh: yes, no
External Drive: 60-450
    capacity: 1TB, 2TB, 4TB, 8TB
    type: HDD, SSD
    interface: USB-C, Thunderbolt
Printer: 100-500
    type: inkjet, laser
    output: monochrome, color
    functions: print only, all-in-one
    connectivity: USB, Wi-Fi
Drawing Tablet: 60-400
    active area: small, medium, large
    pressure levels: 4096, 8192
    connectivity: wired, Bluetooth
Baby Stroller: 200-900
    type: full-size, jogging, travel
    color: black, grey, navy
    fold: one-hand, two-step
Car Seat: 80-400
    type: infant, convertible, booster
    color: black, grey, red
    installation: LATCH, belt
Dog Leash: 12-60
    length: 4 ft, 6 ft, 16 ft retractable
    material: nylon, leather, rope
    color: black, red, blue, green
Cat Tree: 45-220
    height: 36 inch, 52 inch, 72 inch
    color: beige, grey, dark grey
    platforms: 3, 5, 7
Aquarium: 60-450
    volume: 10 gallon, 20 gallon, 40 gallon
    material: glass, acrylic
    lighting: standard, LED
Planter Set: 25-110
    count: 3-pack, 5-pack
    material: ceramic, terracotta, concrete
    color: white, clay, charcoal
Raised Garden Bed: 60-400
    size: 2x4 ft, 4x4 ft, 4x8 ft
    material: cedar, galvanized steel, composite
    height: 11 inch, 17 inch
Hammock: 40-250
    material: cotton, nylon, polyester
    capacity: single, double
    stand: included, none
Cordless Drill: 70-280
    voltage: 12V, 18V, 20V
    battery: 1.5Ah, 2.0Ah, 4.0Ah
    kit: bare tool, with charger
Tool Box: 25-200
    size: 16 inch, 19 inch, 22 inch
    material: plastic, steel, aluminum
    wheels: yes, no
Ladder: 60-400
    height: 4 ft, 6 ft, 8 ft, 10 ft
    material: aluminum, fiberglass
    type: step, extension
Wallet: 20-120
    material: leather, canvas, nylon
    style: bifold, trifold, card holder
    color: black, brown, tan
Handbag: 60-450
    material: leather, vegan leather, canvas
    size: mini, medium, large
    color: black, camel, burgundy, olive
Winter Gloves: 15-80
    size: S, M, L, XL
    material: wool, leather, synthetic
    touchscreen: yes, no
Wool Sweater: 60-220
    size: S, M, L, XL
    color: oatmeal, forest green, navy, burgundy
    neckline: crew, turtleneck, v-neck
Ski Goggles: 40-220
    lens: mirrored, photochromic, clear
    frame color: black, white, red
    fit: small, medium, large
Snowboard: 250-700
    length: 148 cm, 152 cm, 156 cm, 160 cm
    profile: camber, rocker, hybrid
    flex: soft, medium, stiff
"""

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


def _parse_catalog(text: str) -> list[tuple[str, int, int, dict[str, list[str]]]]:
    """The product types of `_CATALOG` as (name, low, high, option name -> values)."""
    types: list[tuple[str, int, int, dict[str, list[str]]]] = []
    for line in text.strip().splitlines():
        if line.startswith(" "):
            option, values = line.split(":")
            types[-1][3][option.strip()] = [value.strip() for value in values.split(",")]
        else:
            name, prices = line.rsplit(":", 1)
            low, high = prices.split("-")
            types.append((name, int(low), int(high), {}))
    return types


_PRODUCT_TYPES = _parse_catalog(_CATALOG)


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
