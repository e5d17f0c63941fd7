"""The retail task templates: tasks generated over a world, then validated before they ship.

Each template picks a customer's records and builds what the customer wants (a
cancellation, an address change, a question ...), with the gold actions and the
required outputs. `generate_tasks` runs every template (and a few compounds),
each on a different customer; `build.py` keeps the tasks that pass validation.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from deedbench.benchmarks.retail.tools import CANCEL_REASONS
from deedbench.benchmarks.servicedesk import (
    FORBIDDEN,
    INFO,
    TRANSFER,
    Action,
    DeskTask,
    DeskWorld,
    UserInstructions,
    Want,
)

__all__ = [
    "COMPOUNDS",
    "REFUSALS",
    "TEMPLATES",
    "Template",
    "generate_tasks",
]


def _customer(
    world: DeskWorld, user_id: str, rng: random.Random, wants: list[Want]
) -> UserInstructions:
    user = world.get("users", user_id)
    assert user is not None
    return UserInstructions(
        identity={
            "user_id": user_id,
            "first_name": user["name"]["first_name"],
            "last_name": user["name"]["last_name"],
            "zip": user["address"]["zip"],
            "email": user["email"],
        },
        identify_by=rng.choice(("email", "name_zip")),
        wants=wants,
    )


def _orders(world: DeskWorld, user_id: str, status: str) -> list[dict[str, Any]]:
    user = world.get("users", user_id) or {}
    found = [world.get("orders", oid) for oid in user.get("orders", [])]
    return [o for o in found if o is not None and o["status"] == status]


def _payment_of(order: dict[str, Any]) -> str:
    return str(order["payment_history"][0]["payment_method_id"])


def _alternatives(world: DeskWorld, item: dict[str, Any]) -> list[str]:
    """Other available variants of the same product as an ordered item."""
    product = world.get("products", item["product_id"]) or {"variants": {}}
    return [
        vid
        for vid, variant in product["variants"].items()
        if vid != item["item_id"] and variant["available"]
    ]


def _describe_item(item: dict[str, Any]) -> str:
    options = ", ".join(f"{k} {v}" for k, v in item["options"].items())
    return f"the {item['name'].lower()} ({options})"


def _new_address(rng: random.Random, old: dict[str, Any]) -> dict[str, str]:
    streets = ("Maple Avenue", "Harbor Lane", "Cedar Court", "Willow Street", "Summit Road")
    return {
        "address1": f"{rng.randint(10, 999)} {rng.choice(streets)}",
        "address2": f"Apt {rng.randint(1, 40)}",
        "city": old["city"],
        "state": old["state"],
        "country": old["country"],
        "zip": old["zip"],
    }


def _address_text(address: dict[str, str]) -> str:
    return (
        f"{address['address1']}, {address['address2']}, {address['city']}, "
        f"{address['state']} {address['zip']}, {address['country']}"
    )


Template = Callable[[DeskWorld, str, random.Random], list[Want] | None]


def _cancel(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    orders = _orders(world, uid, "pending")
    if not orders:
        return None
    order = rng.choice(orders)
    reason = rng.choice(CANCEL_REASONS)
    return [
        Want(
            kind="cancel",
            say=f"i want to cancel my order {order['order_id']}, it's {reason}",
            action=Action(
                name="cancel_pending_order",
                kwargs={"order_id": order["order_id"], "reason": reason},
            ),
            details=[reason],
        )
    ]


def _order_address(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    orders = _orders(world, uid, "pending")
    if not orders:
        return None
    order = rng.choice(orders)
    address = _new_address(rng, order["address"])
    return [
        Want(
            kind="order_address",
            say=(f"please ship my order {order['order_id']} to {_address_text(address)} instead"),
            action=Action(
                name="modify_pending_order_address",
                kwargs={"order_id": order["order_id"], **address},
            ),
            details=[_address_text(address)],
        )
    ]


def _order_payment(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    user = world.get("users", uid) or {}
    for order in _orders(world, uid, "pending"):
        current = _payment_of(order)
        total = sum(i["price"] for i in order["items"])
        options = [
            pid
            for pid, method in user["payment_methods"].items()
            if pid != current
            and (method["source"] != "gift_card" or method.get("balance", 0) >= total)
        ]
        if options:
            new = rng.choice(options)
            return [
                Want(
                    kind="order_payment",
                    say=f"i'd like to pay for order {order['order_id']} with {new} instead",
                    action=Action(
                        name="modify_pending_order_payment",
                        kwargs={"order_id": order["order_id"], "payment_method_id": new},
                    ),
                    details=[new],
                )
            ]
    return None


def _swap(
    world: DeskWorld, uid: str, rng: random.Random, status: str, kind: str, tool: str
) -> list[Want] | None:
    for order in _orders(world, uid, status):
        swappable = [i for i in order["items"] if _alternatives(world, i)]
        if not swappable:
            continue
        chosen = rng.sample(swappable, k=min(len(swappable), rng.choice((1, 1, 2))))
        if len({i["item_id"] for i in chosen}) != len(chosen):
            continue
        new_ids = [rng.choice(_alternatives(world, i)) for i in chosen]
        payment = _payment_of(order)
        user = world.get("users", uid) or {}
        if user["payment_methods"].get(payment, {}).get("source") == "gift_card":
            continue  # a gift card may not cover a price difference: keep tasks clean
        what = " and ".join(_describe_item(i) for i in chosen)
        verb = "change" if kind == "order_items" else "exchange"
        return [
            Want(
                kind=kind,
                say=f"i want to {verb} {what} in order {order['order_id']} for a different option",
                action=Action(
                    name=tool,
                    kwargs={
                        "order_id": order["order_id"],
                        "item_ids": [i["item_id"] for i in chosen],
                        "new_item_ids": new_ids,
                        "payment_method_id": payment,
                    },
                ),
                details=[payment, *new_ids],
            )
        ]
    return None


def _order_items(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    return _swap(world, uid, rng, "pending", "order_items", "modify_pending_order_items")


def _exchange(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    return _swap(world, uid, rng, "delivered", "exchange", "exchange_delivered_order_items")


def _return(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    orders = _orders(world, uid, "delivered")
    if not orders:
        return None
    order = rng.choice(orders)
    items = rng.sample(order["items"], k=min(len(order["items"]), rng.choice((1, 1, 2))))
    if len({i["item_id"] for i in items}) != len(items):
        return None
    payment = _payment_of(order)
    what = " and ".join(_describe_item(i) for i in items)
    return [
        Want(
            kind="return",
            say=f"i want to return {what} from order {order['order_id']}",
            action=Action(
                name="return_delivered_order_items",
                kwargs={
                    "order_id": order["order_id"],
                    "item_ids": [i["item_id"] for i in items],
                    "payment_method_id": payment,
                },
            ),
            details=[payment],
        )
    ]


def _user_address(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    user = world.get("users", uid) or {}
    address = _new_address(rng, user["address"])
    return [
        Want(
            kind="user_address",
            say=f"i moved, please update my account address to {_address_text(address)}",
            action=Action(name="modify_user_address", kwargs={"user_id": uid, **address}),
            details=[_address_text(address)],
        )
    ]


def _info(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    orders = [o for s in ("processed", "delivered", "pending") for o in _orders(world, uid, s)]
    if not orders:
        return None
    order = rng.choice(orders)
    total = round(sum(i["price"] for i in order["items"]), 2)
    return [
        Want(
            kind=INFO,
            say=(
                f"what's the status of my order {order['order_id']} and how much did i pay "
                "for it in total?"
            ),
            expects=[order["status"], f"{total:.2f}"],
        )
    ]


def _transfer(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    orders = [o for s in ("delivered", "processed") for o in _orders(world, uid, s)]
    if not orders:
        return None
    order = rng.choice(orders)
    complaints = (
        "the courier was rude to me and i want to file a formal complaint",
        "i saw the same thing cheaper elsewhere and want a price match",
        "my bank shows a double charge and i want to dispute it",
    )
    return [
        Want(
            kind=TRANSFER,
            say=f"about order {order['order_id']}: {rng.choice(complaints)}. i want a person",
        )
    ]


def _forbidden(world: DeskWorld, uid: str, rng: random.Random) -> list[Want] | None:
    orders = [o for s in ("processed", "delivered") for o in _orders(world, uid, s)]
    if not orders:
        return None
    order = rng.choice(orders)
    return [
        Want(
            kind=FORBIDDEN,
            say=f"cancel my order {order['order_id']} right now, i don't want it anymore",
        )
    ]


TEMPLATES: dict[str, Template] = {
    "cancel": _cancel,
    "order_address": _order_address,
    "order_payment": _order_payment,
    "order_items": _order_items,
    "return": _return,
    "exchange": _exchange,
    "user_address": _user_address,
    "info": _info,
    "transfer": _transfer,
    "forbidden": _forbidden,
}
COMPOUNDS = (("cancel", "return"), ("order_address", "info"), ("exchange", "user_address"))


def _candidates(world: DeskWorld, rng: random.Random) -> Iterator[str]:
    users = [uid for uid, _ in world.items("users")]
    rng.shuffle(users)
    yield from users


def generate_tasks(world: DeskWorld, per_template: int = 6, seed: int = 0) -> list[DeskTask]:
    """Tasks from every template (and a few compounds), each on a different customer.

    Gold actions are the wants' actions in order; outputs are what info wants expect.
    """
    rng = random.Random(seed)
    used: set[str] = set()
    tasks: list[DeskTask] = []
    plans: list[tuple[str, tuple[str, ...]]] = [
        (name, (name,)) for name in TEMPLATES for _ in range(per_template)
    ]
    plans += [("+".join(c), c) for c in COMPOUNDS for _ in range(max(1, per_template // 2))]
    for label, parts in plans:
        for uid in _candidates(world, rng):
            if uid in used:
                continue
            wants: list[Want] = []
            for part in parts:
                found = TEMPLATES[part](world, uid, rng)
                if found is None:
                    break
                wants += found
            else:
                orders = [w.action.kwargs.get("order_id") for w in wants if w.action]
                if len(orders) != len(set(orders)):
                    continue  # one change per order in compounds
                used.add(uid)
                tasks.append(
                    _task(world, f"retail-{len(tasks):03d}-{label}", label, uid, wants, rng)
                )
                break
    return tasks


REFUSALS = {
    TRANSFER: "any answer other than being put through to a person",
    FORBIDDEN: "being asked for personal data beyond what identifies you",
}


def _task(
    world: DeskWorld, task_id: str, label: str, uid: str, wants: list[Want], rng: random.Random
) -> DeskTask:
    instructions = _customer(world, uid, rng, wants)
    instructions.refuses = ["any change you did not ask for"] + [
        REFUSALS[w.kind] for w in wants if w.kind in REFUSALS
    ]
    actions = [w.action for w in wants if w.action is not None]
    outputs = [value for w in wants for value in w.expects]
    return DeskTask(
        id=task_id,
        template=label,
        instructions=instructions,
        actions=actions,
        outputs=outputs,
        must_transfer=any(w.kind == TRANSFER for w in wants),
    )
