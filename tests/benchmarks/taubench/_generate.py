"""Generated inputs for the differential tests: slices of τ-bench's worlds, tool calls
valid and malformed, and whole scripted conversations on real test tasks.

Everything is drawn from a seeded `random.Random`, so a failure names its seed and
can be replayed. Calls aim at one customer's records most of the time (so writes
pile up on the same orders and reservations), and each argument is, by chance, a
right value, a near miss (another customer's id, padded or recased), or a value of
the wrong shape (a number for a string, a string for a list, an empty list,
duplicates, a missing or an extra argument).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._reference import STOP, TAUBENCH

Kwargs = dict[str, Any]

WRONG_TYPES: tuple[Any, ...] = (None, True, 0, 7, -1, 1.5, 100.0, "", " ", "abc", [], {}, ["x"])

RETAIL_TOOLS: dict[str, tuple[str, ...]] = {
    "find_user_id_by_email": ("email",),
    "find_user_id_by_name_zip": ("first_name", "last_name", "zip"),
    "get_user_details": ("user_id",),
    "get_order_details": ("order_id",),
    "get_product_details": ("product_id",),
    "list_all_product_types": (),
    "calculate": ("expression",),
    "think": ("thought",),
    "transfer_to_human_agents": ("summary",),
    "cancel_pending_order": ("order_id", "reason"),
    "modify_pending_order_address": (
        "order_id",
        "address1",
        "address2",
        "city",
        "state",
        "country",
        "zip",
    ),
    "modify_pending_order_payment": ("order_id", "payment_method_id"),
    "modify_pending_order_items": ("order_id", "item_ids", "new_item_ids", "payment_method_id"),
    "modify_user_address": ("user_id", "address1", "address2", "city", "state", "country", "zip"),
    "return_delivered_order_items": ("order_id", "item_ids", "payment_method_id"),
    "exchange_delivered_order_items": (
        "order_id",
        "item_ids",
        "new_item_ids",
        "payment_method_id",
    ),
}

AIRLINE_TOOLS: dict[str, tuple[str, ...]] = {
    "get_user_details": ("user_id",),
    "get_reservation_details": ("reservation_id",),
    "list_all_airports": (),
    "search_direct_flight": ("origin", "destination", "date"),
    "search_onestop_flight": ("origin", "destination", "date"),
    "calculate": ("expression",),
    "think": ("thought",),
    "transfer_to_human_agents": ("summary",),
    "book_reservation": (
        "user_id",
        "origin",
        "destination",
        "flight_type",
        "cabin",
        "flights",
        "passengers",
        "payment_methods",
        "total_baggages",
        "nonfree_baggages",
        "insurance",
    ),
    "cancel_reservation": ("reservation_id",),
    "update_reservation_flights": ("reservation_id", "cabin", "flights", "payment_id"),
    "update_reservation_baggages": (
        "reservation_id",
        "total_baggages",
        "nonfree_baggages",
        "payment_id",
    ),
    "update_reservation_passengers": ("reservation_id", "passengers"),
    "send_certificate": ("user_id", "amount"),
}

TOOLS = {"retail": RETAIL_TOOLS, "airline": AIRLINE_TOOLS}
FILES = {"retail": ("users", "orders", "products"), "airline": ("flights", "reservations", "users")}


# --- slices of the worlds ---------------------------------------------------------------------


@dataclass
class Slice:
    """Part of one domain's world: every record the chosen tasks need, and some others.

    Both implementations load the same slice, so comparing them on it is as good as on
    the whole world, and hashing it costs milliseconds instead of a third of a second.
    """

    domain: str
    tables: dict[str, dict[str, Any]]
    tasks: list[dict[str, Any]]
    text: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.text = {name: json.dumps(table) for name, table in self.tables.items()}

    def load(self) -> dict[str, Any]:
        """A fresh copy, as τ-bench's data loader reads its files."""
        return {name: json.loads(self.text[name]) for name in FILES[self.domain]}

    def write(self, folder: Path) -> Path:
        """The slice as a τ-bench data folder that deedbench's --data reads."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.text.items():
            (folder / f"{name}.json").write_text(text)
        (folder / "tasks_test.json").write_text(json.dumps(self.tasks))
        (folder / "policy.md").write_text("Help the user within the policy.\n")
        return folder


def world_slice(
    domain: str,
    rng: random.Random,
    *,
    tasks: int,
    extra_users: int,
    extra_flights: int = 20,
    every_product: bool = True,
    gold_replies: float = 0.0,
) -> Slice:
    """`tasks` test tasks with their customers' records, `extra_users` more customers with
    theirs, every product (or only those the kept orders hold, and a few more), and
    (airline) the flights the tasks' customers and gold actions name plus `extra_flights`
    more. A kept record may name one the slice lacks: the tools treat it as unknown, on
    both sides alike. A share `gold_replies` of the tasks get a gold ``respond`` action,
    which τ-bench's outputs check counts as the agent's reply."""
    folder = TAUBENCH / domain
    tables = {name: json.loads((folder / f"{name}.json").read_text()) for name in FILES[domain]}
    all_tasks = json.loads((folder / "tasks_test.json").read_text())
    chosen = [_with_gold_reply(t, rng, gold_replies) for t in rng.sample(all_tasks, tasks)]
    task_users = {t["user_id"] for t in chosen}
    users = task_users | set(rng.sample(sorted(tables["users"]), extra_users))
    kept_users = {u: tables["users"][u] for u in sorted(users) if u in tables["users"]}
    if domain == "retail":
        orders = {o for u in kept_users.values() for o in u["orders"]}
        kept_orders = {k: v for k, v in tables["orders"].items() if k in orders}
        products = {i["product_id"] for o in kept_orders.values() for i in o["items"]}
        products |= set(rng.sample(sorted(tables["products"]), 5))
        kept = {
            "users": kept_users,
            "orders": kept_orders,
            "products": {
                k: v for k, v in tables["products"].items() if every_product or k in products
            },
        }
        return Slice(domain, kept, chosen)
    reservations = {r for u in kept_users.values() for r in u["reservations"]}
    kept_reservations = {k: v for k, v in tables["reservations"].items() if k in reservations}
    flights = {
        f["flight_number"]
        for r in kept_reservations.values()
        if r["user_id"] in task_users
        for f in r["flights"]
    }
    for task in chosen:
        for action in task["actions"]:
            for flight in action["kwargs"].get("flights") or []:
                flights.add(flight.get("flight_number"))
    flights |= set(rng.sample(sorted(tables["flights"]), extra_flights))
    kept = {
        "flights": {k: v for k, v in tables["flights"].items() if k in flights},
        "reservations": kept_reservations,
        "users": kept_users,
    }
    return Slice(domain, kept, chosen)


def _with_gold_reply(task: dict[str, Any], rng: random.Random, share: float) -> dict[str, Any]:
    """The task, or (at rate `share`) a copy with a ``respond`` among its gold actions,
    stating one of its outputs or not."""
    if rng.random() >= share:
        return task
    outputs = task["outputs"]
    content = f"The answer is {rng.choice(outputs)}." if outputs and rng.random() < 0.7 else "Done."
    actions = list(task["actions"])
    actions.insert(
        rng.randrange(len(actions) + 1), {"name": "respond", "kwargs": {"content": content}}
    )
    return {**task, "actions": actions}


# --- argument values --------------------------------------------------------------------------


class Values:
    """Argument values for one domain's tools, aimed at one customer's records."""

    def __init__(self, world: Slice, rng: random.Random) -> None:
        self.world = world
        self.rng = rng
        self.users = sorted(world.tables["users"])
        self.focus = rng.choice(self.users)

    def refocus(self) -> None:
        self.focus = self.rng.choice(self.users)

    # the records in view -----------------------------------------------------------------

    def user(self) -> dict[str, Any]:
        return self.world.tables["users"][self.focus]

    def order_ids(self) -> list[str]:
        return list(self.user().get("orders", []))

    def reservation_ids(self) -> list[str]:
        return list(self.user().get("reservations", []))

    def payment_ids(self) -> list[str]:
        return list(self.user()["payment_methods"])

    # drawing ---------------------------------------------------------------------------

    def pick(self, right: Callable[[], Any], other: Callable[[], Any]) -> Any:
        """Mostly the right value; sometimes a near miss or a value of the wrong type."""
        roll = self.rng.random()
        if roll < 0.68:
            return right()
        if roll < 0.78:
            return other()
        if roll < 0.88:
            value = right()
            if isinstance(value, str) and value:
                return self.rng.choice([f" {value}", value.upper(), value[:-1], f"{value}x"])
            return value
        return self.rng.choice(WRONG_TYPES)

    def value(self, name: str) -> Any:
        rng = self.rng
        user = self.user()
        other_user = self.world.tables["users"][rng.choice(self.users)]
        if name == "user_id":
            return self.pick(lambda: self.focus, lambda: rng.choice(self.users))
        if name == "email":
            return self.pick(lambda: user.get("email", "a@b.c").upper(), lambda: "nobody@x.com")
        if name in ("first_name", "last_name"):
            return self.pick(lambda: user["name"][name].lower(), lambda: other_user["name"][name])
        if name == "zip":
            return self.pick(
                lambda: user["address"]["zip"] if "address" in user else "12345",
                lambda: rng.choice([int(rng.randrange(10000, 99999)), "00000"]),
            )
        if name in ("address1", "address2", "city", "state", "country"):
            return self.pick(lambda: f"{rng.randrange(1, 999)} Elm St", lambda: 5)
        if name == "order_id":
            return self.pick(
                lambda: rng.choice(self.order_ids() or ["#W0000000"]),
                lambda: rng.choice(sorted(self.world.tables.get("orders", {"#W1": 0}))),
            )
        if name == "product_id":
            return self.pick(self._product_id, lambda: self._item_ids_of_order(1)[0])
        if name in ("item_ids", "new_item_ids"):
            return self._item_list(name)
        if name == "payment_method_id" or name == "payment_id":
            return self.pick(
                lambda: rng.choice(self.payment_ids()),
                lambda: rng.choice(list(other_user["payment_methods"]) or ["gift_card_0"]),
            )
        if name == "reason":
            return self.pick(
                lambda: rng.choice(["no longer needed", "ordered by mistake"]),
                lambda: "changed my mind",
            )
        if name == "expression":
            return expression(rng)
        if name in ("thought", "summary"):
            return self.pick(lambda: "the customer wants help", lambda: "")
        if name == "reservation_id":
            return self.pick(
                lambda: rng.choice(self.reservation_ids() or ["ZZZZZZ"]),
                lambda: rng.choice(
                    ["HATHAT", "HATHAU", *sorted(self.world.tables["reservations"])[:3]]
                ),
            )
        if name in ("origin", "destination"):
            return self.pick(lambda: self._flight()[name], lambda: "XXX")
        if name == "date":
            return self.pick(
                lambda: rng.choice(sorted(self._flight()["dates"])), lambda: "2024-05-xx"
            )
        if name == "flight_type":
            return self.pick(lambda: rng.choice(["one_way", "round_trip"]), lambda: "one-way")
        if name == "cabin":
            return self.pick(
                lambda: rng.choice(["basic_economy", "economy", "business"]),
                lambda: rng.choice(["", "first"]),
            )
        if name == "flights":
            return self._flights()
        if name == "passengers":
            return self._passengers()
        if name == "payment_methods":
            return self._payments()
        if name in ("total_baggages", "nonfree_baggages"):
            return self.pick(lambda: rng.randrange(0, 4), lambda: rng.choice(["1.0", 1.0, -2]))
        if name == "insurance":
            return self.pick(lambda: rng.choice(["yes", "no"]), lambda: rng.choice(["Yes", True]))
        if name == "amount":
            return self.pick(lambda: rng.choice([50, 100.0, 250]), lambda: rng.choice(["100", -5]))
        raise KeyError(name)

    def _product_id(self) -> str:
        return self.rng.choice(sorted(self.world.tables["products"]))

    def _item_ids_of_order(self, count: int) -> list[str]:
        orders = self.world.tables["orders"]
        order_id = self.rng.choice(self.order_ids() or sorted(orders))
        items = [i["item_id"] for i in orders[order_id]["items"]] or ["0"]
        return [self.rng.choice(items) for _ in range(count)]

    def _item_list(self, name: str) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.55:
            if name == "item_ids":
                return self._item_ids_of_order(rng.choice([1, 1, 2]))
            return self._new_items(rng.choice([1, 1, 2]))
        if roll < 0.65:
            return []
        if roll < 0.75:
            ids = self._item_ids_of_order(1)
            return ids * 2  # duplicates
        if roll < 0.85:
            return self._item_ids_of_order(1)[0]  # a string where a list belongs
        return rng.choice([[1, 2], [None], "", {}, None, ["1", "2", "3"]])

    def _new_items(self, count: int) -> list[str]:
        """Other variants of the products of the focus customer's items."""
        orders, products = self.world.tables["orders"], self.world.tables["products"]
        chosen = []
        for _ in range(count):
            order_id = self.rng.choice(self.order_ids() or sorted(orders))
            item = self.rng.choice(orders[order_id]["items"])
            variants = sorted(products[item["product_id"]]["variants"])
            chosen.append(self.rng.choice(variants))
        return chosen

    def _flight(self) -> dict[str, Any]:
        flights = self.world.tables["flights"]
        return flights[self.rng.choice(sorted(flights))]

    def _flights(self) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.7:
            segments = []
            for _ in range(rng.choice([1, 1, 2])):
                flight = self._flight()
                date = rng.choice(sorted(flight["dates"]))
                segments.append({"flight_number": flight["flight_number"], "date": date})
            if rng.random() < 0.3 and self.reservation_ids():
                reservation = self.world.tables["reservations"][rng.choice(self.reservation_ids())]
                segments = [
                    {"flight_number": f["flight_number"], "date": f["date"]}
                    for f in reservation["flights"]
                ]
            return segments
        return rng.choice([[], [{"flight_number": "HAT001"}], "HAT001", [{}], None, [1]])

    def _passengers(self) -> Any:
        rng = self.rng
        user = self.user()
        person = {
            "first_name": user["name"]["first_name"],
            "last_name": user["name"]["last_name"],
            "dob": user.get("dob", "1990-01-01"),
        }
        roll = rng.random()
        if roll < 0.6:
            return [person] * rng.choice([1, 1, 2])
        if roll < 0.8:
            return [{"first_name": person["first_name"], "last_name": person["last_name"]}]
        return rng.choice([[], person, "Ann", None])

    def _payments(self) -> Any:
        rng = self.rng
        methods = self.payment_ids() or ["credit_card_0"]
        roll = rng.random()
        if roll < 0.7:
            return [
                {"payment_id": rng.choice(methods), "amount": rng.choice([100, 250, 500.0, 1e4])}
                for _ in range(rng.choice([1, 1, 2]))
            ]
        return rng.choice([[], ["credit_card_1"], [{"payment_id": methods[0]}], None, {}])


def expression(rng: random.Random) -> Any:
    """A `calculate` expression: mostly arithmetic, sometimes not, sometimes not a string."""
    roll = rng.random()
    if roll < 0.05:
        return rng.choice([5, None, ["1", "+", "2"], ["12"], [], {"1": 2}])
    if roll < 0.12:
        return rng.choice(["2(3+4)", "()", "...", "1/0", "2**-1", "abs(2)", "1e3", "", " 1"])
    if roll < 0.4:
        numbers = ["12", "3.5", "100", "0.1", "7", "2.25"]
        return f"{rng.choice(numbers)} {rng.choice('+-*/')} ({rng.choice(numbers)} + 1)"
    pieces = ["1", "2", "10", "0", "3.5", ".5", "7.", "+", "-", "*", "/", "//", "**", "(", ")", " "]
    return "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9)))


def call(domain: str, values: Values) -> tuple[str, Kwargs]:
    """One tool call: a tool, its arguments (half the time a coherent set: an order of the
    right status with its own items, a booking whose payments add up), sometimes one
    argument missing or one too many."""
    rng = values.rng
    if rng.random() < 0.03:
        return rng.choice(["delete_everything", "get_order", "Calculate"]), {}
    if rng.random() < 0.12:
        values.refocus()
    names = sorted(TOOLS[domain])
    weights = [0.3 if n == "transfer_to_human_agents" else 1.0 for n in names]
    name = rng.choices(names, weights)[0]
    kwargs = coherent(domain, name, values) if rng.random() < 0.5 else None
    if kwargs is None:
        kwargs = {param: values.value(param) for param in TOOLS[domain][name]}
    roll = rng.random()
    if roll < 0.05 and kwargs:
        del kwargs[rng.choice(sorted(kwargs))]
    elif roll < 0.09:
        kwargs[rng.choice(["foo", "data", "user_id", "force"])] = rng.choice(["x", 1, True])
    return name, kwargs


def coherent(domain: str, name: str, values: Values) -> Kwargs | None:
    """Arguments that fit together and fit the data, for the tools where random ones
    almost never get past the first check; None for the others."""
    rng = values.rng
    tables = values.world.tables
    methods = values.payment_ids()
    if domain == "retail" and name in _ORDER_STATUS:
        wanted = _ORDER_STATUS[name]
        orders = [o for o in values.order_ids() if tables["orders"][o]["status"] == wanted]
        if not orders or not methods:
            return None
        order = tables["orders"][rng.choice(orders)]
        chosen = rng.sample(order["items"], rng.randrange(1, len(order["items"]) + 1))
        kwargs: Kwargs = {"order_id": order["order_id"]}
        if name == "modify_pending_order_payment":
            kwargs["payment_method_id"] = rng.choice(methods)
            return kwargs
        kwargs["item_ids"] = [i["item_id"] for i in chosen]
        if name != "return_delivered_order_items":
            products = tables["products"]
            kwargs["new_item_ids"] = [
                rng.choice(sorted(products[i["product_id"]]["variants"])) for i in chosen
            ]
        original = order["payment_history"][0]["payment_method_id"]
        kwargs["payment_method_id"] = rng.choice(
            [m for m in methods if "gift_card" in m] + [original]
        )
        return kwargs
    if domain == "airline" and name == "book_reservation":
        return _booking(values)
    if domain == "airline" and name == "update_reservation_flights":
        reservations = values.reservation_ids()
        if not reservations or not methods:
            return None
        reservation = tables["reservations"][rng.choice(reservations)]
        flights = [
            {"flight_number": f["flight_number"], "date": f["date"]} for f in reservation["flights"]
        ]
        other = values._flights()
        if rng.random() < 0.5 and isinstance(other, list) and other:
            flights[-1] = other[0]
        return {
            "reservation_id": reservation["reservation_id"],
            "cabin": rng.choice([reservation["cabin"], "business", "economy"]),
            "flights": flights,
            "payment_id": rng.choice(methods),
        }
    return None


_ORDER_STATUS = {
    "modify_pending_order_items": "pending",
    "modify_pending_order_payment": "pending",
    "return_delivered_order_items": "delivered",
    "exchange_delivered_order_items": "delivered",
}


def _booking(values: Values) -> Kwargs | None:
    """A booking of available flights whose payments add up to τ-bench's total (or miss it
    by one)."""
    rng = values.rng
    flights = values.world.tables["flights"]
    cabin = rng.choice(["basic_economy", "economy", "business"])
    segments, price = [], 0
    for _ in range(rng.choice([1, 2])):
        flight = flights[rng.choice(sorted(flights))]
        open_dates = [d for d, on in sorted(flight["dates"].items()) if on["status"] == "available"]
        if not open_dates:
            return None
        date = rng.choice(open_dates)
        segments.append({"flight_number": flight["flight_number"], "date": date})
        price += flight["dates"][date]["prices"][cabin]
    passengers = values._passengers()
    seats = len(passengers) if isinstance(passengers, list) else 1
    insurance = rng.choice(["yes", "no"])
    bags = rng.randrange(0, 3)
    total = price * seats + (30 * seats if insurance == "yes" else 0) + 50 * bags
    methods = values.payment_ids() or ["credit_card_0"]
    first = rng.choice(methods)
    if rng.random() < 0.4 and len(methods) > 1:
        second = rng.choice([m for m in methods if m != first])
        part = rng.choice([50, total // 2, total])
        payments = [
            {"payment_id": first, "amount": part},
            {"payment_id": second, "amount": total - part},
        ]
    else:
        payments = [{"payment_id": first, "amount": rng.choice([total, float(total), total + 1])}]
    return {
        "user_id": values.focus,
        "origin": flights[segments[0]["flight_number"]]["origin"],
        "destination": flights[segments[-1]["flight_number"]]["destination"],
        "flight_type": rng.choice(["one_way", "round_trip"]),
        "cabin": cabin,
        "flights": segments,
        "passengers": passengers,
        "payment_methods": payments,
        "total_baggages": bags + rng.randrange(0, 2),
        "nonfree_baggages": bags,
        "insurance": insurance,
    }


def sequence(domain: str, world: Slice, rng: random.Random) -> list[tuple[str, Kwargs]]:
    """Calls in a row on one world; now and then the last one again (a repeated write:
    a second cancellation, a fourth certificate)."""
    values = Values(world, rng)
    calls: list[tuple[str, Kwargs]] = []
    for _ in range(rng.randrange(3, 14)):
        if calls and rng.random() < 0.2:
            calls += [calls[-1]] * rng.choice([1, 1, 3])
        else:
            calls.append(call(domain, values))
    return calls


# --- scripted conversations on real tasks ---------------------------------------------------


@dataclass
class Conversation:
    """A task, the model's messages in order, and the user's lines (the first opens)."""

    task: dict[str, Any]
    turns: list[dict[str, Any]]
    lines: list[str]


def conversation(
    domain: str, world: Slice, rng: random.Random, *, null_replies: float = 0.01
) -> Conversation:
    """A conversation on one of the slice's tasks: the gold actions, right or bent, among
    replies, reads and malformed turns; it ends with the user's stop, a transfer, a run
    τ-bench cannot carry on, or not at all (the step limit). A share `null_replies` of the
    turns are replies whose text is JSON null."""
    task = rng.choice(world.tasks)
    values = Values(world, rng)
    values.focus = task["user_id"] if task["user_id"] in world.tables["users"] else values.focus
    gold = [a for a in task["actions"] if a["name"] != "respond"]
    turns: list[dict[str, Any]] = []
    number = 0
    used: list[str] = []
    replied: list[str] = []  # ids of respond calls

    def tool_call(name: str, arguments: str) -> dict[str, Any]:
        """A call, now and then under an id used before (a respond call's, most often):
        gpt-4o reuses ids, and τ-bench pairs nothing by them."""
        nonlocal number
        number += 1
        call_id = f"call_{number}"
        if replied and rng.random() < 0.3:
            call_id = rng.choice(replied)
        elif used and rng.random() < 0.1:
            call_id = rng.choice(used)
        used.append(call_id)
        if name == "respond":
            replied.append(call_id)
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }

    def reply(text: str | None) -> dict[str, Any]:
        return {"role": "assistant", "content": text}

    def with_calls(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
        return {"role": "assistant", "content": text, "tool_calls": list(calls)}

    said = ", ".join(task["outputs"]) if task["outputs"] else "done"
    length = rng.choice([rng.randrange(2, 12), rng.randrange(12, 36)])
    pending = list(gold) if rng.random() < 0.7 else []
    for _ in range(length):
        roll = rng.random()
        if pending and roll < 0.45:
            action = pending.pop(0)
            kwargs = dict(action["kwargs"])
            if rng.random() < 0.15 and kwargs:  # a bent gold action
                key = rng.choice(sorted(kwargs))
                kwargs[key] = values.value(key) if key in _KNOWN else rng.choice(WRONG_TYPES)
            first = tool_call(action["name"], json.dumps(kwargs))
            if rng.random() < 0.15:  # more calls in the turn: τ-bench runs the first only
                name, extra = call(domain, values)
                turns.append(with_calls(first, tool_call(name, json.dumps(extra))))
            else:
                text = rng.choice([None, "", "Let me do that for you."])
                turns.append(with_calls(first, text=text))
        elif roll < 0.62:
            name, kwargs = call(domain, values)
            turns.append(with_calls(tool_call(name, json.dumps(kwargs))))
        elif roll < 0.82:
            text = rng.choice(
                [
                    f"Here is what you asked: {said.upper()}.",
                    f"The answer is {said}",
                    "Could you confirm your user id?",
                    "Anything else?",
                ]
            )
            turns.append(reply(text))
        elif roll < 0.87:
            content = rng.choice([said, said, 7, None])
            arguments = json.dumps({"content": content} if content is not None else {})
            turns.append(with_calls(tool_call("respond", arguments), text=said))
        elif roll < 0.89:
            summary = rng.choice(['{"summary": "over to you"}', "{}", '{"summary": 1, "x": 2}'])
            turns.append(with_calls(tool_call("transfer_to_human_agents", summary)))
        elif roll < 0.91:
            broken = rng.choice(['{"order_id": "#W1"', "[1, 2]", "null", "", "5", '"text"'])
            name, _ = call(domain, values)
            turns.append(with_calls(tool_call(name, broken)))
        elif roll < 0.91 + null_replies:  # text as JSON null: τ-bench hands the user None
            turns.append(reply(None))
        else:
            turns.append(reply(said if rng.random() < 0.5 else "Thanks for waiting."))
    replies = sum(1 for t in turns if not t.get("tool_calls") or _is_respond(t))
    stop_at = rng.randrange(1, replies + 2) if replies and rng.random() < 0.75 else None
    opening = f"Hi. {STOP}" if rng.random() < 0.08 else "Hi, I need help with my account."
    lines = [opening]  # τ-bench never looks at the opening for a stop: its agent answers
    for index in range(1, replies + 2):
        lines.append(f"Thanks. {STOP}" if index == stop_at else rng.choice(["ok", "yes", "sure"]))
    return Conversation(task, turns, lines)


_KNOWN = frozenset(
    p for params in (*RETAIL_TOOLS.values(), *AIRLINE_TOOLS.values()) for p in params
)


def _is_respond(turn: dict[str, Any]) -> bool:
    calls = turn.get("tool_calls") or []
    return bool(calls) and calls[0]["function"]["name"] == "respond"
