"""deedbench's τ² airline tools against τ²'s own, call by call.

Every task's gold actions from its start, and seeded sequences of generated calls
over every tool: valid ones drawn from the database (bookings that add up, changes
paid with the user's own methods), unknown ids, missing, extra and wrongly typed
arguments, and writes repeated until τ²'s id supplies run out. Both sides run the
same cases; each call's result text, its error flag and both database hashes after
it must agree, as must the hashes at the start and the end.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from deedbench.benchmarks.tau2.airline import AIRLINE
from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.environment import db_hash

from . import _reference
from ._compare import deedbench_calls, differences

pytestmark = [
    pytest.mark.reference("tau2"),
    # one worker runs the module, so its τ² fixture is computed once, not once a worker
    pytest.mark.xdist_group("tau2-airline-tools"),
]

SEED = 20240515
SEQUENCES = 45
"""Generated cases, each a short sequence of calls. Hashing τ²'s 7 MB database costs
~0.1 s a time on each side, so both databases are hashed after every write (where a
state can part), and at the start and the end of every case (which catches a read
that changed anything)."""
WRITES = sorted(t.name for t in AIRLINE.toolkit.tools() if t.kind == "write")
FOLDER = _reference.domain_data("airline")

Call = tuple[str, dict[str, Any]]


@pytest.fixture(scope="module")
def data() -> Tau2Data:
    return Tau2Data(AIRLINE, FOLDER, "tau2-airline", None)


@pytest.fixture(scope="module")
def raw_tasks() -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = json.loads((FOLDER / "tasks.json").read_text(encoding="utf-8"))
    return tasks


@pytest.fixture(scope="module")
def db() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FOLDER / "db.json").read_text(encoding="utf-8"))
    return loaded


def _case(
    case_id: str,
    task: dict[str, Any],
    calls: list[tuple[str, str, dict[str, Any]]],
    hashes: str | list[str] = "every",
) -> Any:
    """One case: each call a message of its own, from its requestor."""
    return {
        "id": case_id,
        "task": task,
        "solo": False,
        "messages": [
            {
                "role": role,
                "content": None,
                "tool_calls": [{"id": f"{case_id}-{n}", "name": name, "arguments": arguments}],
            }
            for n, (role, name, arguments) in enumerate(calls)
        ],
        "hashes": hashes,
        "evaluate": False,
    }


class Generator:
    """Calls over the airline's tools, drawn from the database with one seeded random."""

    def __init__(self, db: dict[str, Any], rng: random.Random) -> None:
        self.db = db
        self.rng = rng
        self.users = sorted(db["users"])
        self.reservations = sorted(db["reservations"])
        self.flights = sorted(db["flights"])
        self.available = [
            (number, date)
            for number in self.flights
            for date, status in db["flights"][number]["dates"].items()
            if status["status"] == "available"
        ]
        self.other = [
            (number, date)
            for number in self.flights
            for date, status in db["flights"][number]["dates"].items()
            if status["status"] != "available"
        ]

    # --- shared pieces -----------------------------------------------------------------

    def odd(self) -> Any:
        """A value of the wrong type."""
        return self.rng.choice([7, None, ["x"], {"a": 1}, 2.5, True, ""])

    def user(self) -> str:
        return self.rng.choice(self.users)

    def reservation(self, user: str | None = None) -> str:
        if user is not None and self.db["users"][user]["reservations"]:
            return str(self.rng.choice(self.db["users"][user]["reservations"]))
        return self.rng.choice(self.reservations)

    def payment_id(self, user: str) -> str:
        return str(self.rng.choice(sorted(self.db["users"][user]["payment_methods"])))

    def passenger(self) -> dict[str, Any]:
        first = self.rng.choice(["Ana", "Bo", "Chen", "Dee"])
        return {
            "first_name": first,
            "last_name": "Ng",
            "dob": "1990-01-0" + str(self.rng.randint(1, 9)),
        }

    def mangle(self, name: str, arguments: dict[str, Any]) -> Call:
        """The call with one argument dropped, added, or of the wrong type."""
        arguments = dict(arguments)
        what = self.rng.random()
        if what < 0.3 and arguments:
            arguments.pop(self.rng.choice(sorted(arguments)))
        elif what < 0.5:
            arguments["unexpected"] = "x"
        elif arguments:
            arguments[self.rng.choice(sorted(arguments))] = self.odd()
        return name, arguments

    # --- one call per tool ------------------------------------------------------------

    def get_user_details(self, user: str) -> Call:
        roll = self.rng.random()
        if roll < 0.6:
            return "get_user_details", {"user_id": user}
        if roll < 0.8:
            return "get_user_details", {"user_id": "nobody_123"}
        return self.mangle("get_user_details", {"user_id": user})

    def get_reservation_details(self, user: str) -> Call:
        roll = self.rng.random()
        if roll < 0.6:
            return "get_reservation_details", {"reservation_id": self.reservation(user)}
        if roll < 0.8:
            return "get_reservation_details", {"reservation_id": "ZZZZZZ"}
        return self.mangle("get_reservation_details", {"reservation_id": self.reservation(user)})

    def list_all_airports(self, user: str) -> Call:
        if self.rng.random() < 0.8:
            return "list_all_airports", {}
        return "list_all_airports", {"extra": 1}

    def _route(self) -> dict[str, Any]:
        number, date = self.rng.choice(self.available)
        flight = self.db["flights"][number]
        return {"origin": flight["origin"], "destination": flight["destination"], "date": date}

    def search_direct_flight(self, user: str) -> Call:
        roll = self.rng.random()
        route = self._route()
        if roll < 0.6:
            return "search_direct_flight", route
        if roll < 0.75:
            return "search_direct_flight", {**route, "date": "2024-06-01"}
        return self.mangle("search_direct_flight", route)

    def search_onestop_flight(self, user: str) -> Call:
        roll = self.rng.random()
        route = self._route()
        if roll < 0.4:
            return "search_onestop_flight", route
        if roll < 0.6:  # the first of the month: τ²'s unpadded next day
            return "search_onestop_flight", {
                **route,
                "date": self.rng.choice(["2024-05-01", "2024-05-09", "2024-05-15", "2024-05-16"]),
            }
        if roll < 0.8:
            dests = sorted({f["destination"] for f in self.db["flights"].values()})
            return "search_onestop_flight", {**route, "destination": self.rng.choice(dests)}
        return self.mangle("search_onestop_flight", route)

    def get_flight_status(self, user: str) -> Call:
        roll = self.rng.random()
        number, date = self.rng.choice(self.available if roll < 0.3 else self.other)
        if roll < 0.6:
            return "get_flight_status", {"flight_number": number, "date": date}
        if roll < 0.7:
            return "get_flight_status", {"flight_number": "HAT999", "date": date}
        if roll < 0.8:
            return "get_flight_status", {"flight_number": number, "date": "2023-01-01"}
        return self.mangle("get_flight_status", {"flight_number": number, "date": date})

    def calculate(self, user: str) -> Call:
        roll = self.rng.random()
        if roll < 0.7:
            expression = self.rng.choice(
                ["2 + 2", "(100 - 33) * 3 / 7", "1 / 0", "2 +", "abc", "10 / 4", "3 * (2"]
            )
            return "calculate", {"expression": expression}
        return self.mangle("calculate", {"expression": "1 + 1"})

    def transfer_to_human_agents(self, user: str) -> Call:
        if self.rng.random() < 0.7:
            return "transfer_to_human_agents", {"summary": "wants a refund"}
        return self.mangle("transfer_to_human_agents", {"summary": "x"})

    def send_certificate(self, user: str) -> Call:
        roll = self.rng.random()
        amount = self.rng.choice([50, 100, 150.5, 0])
        if roll < 0.6:
            return "send_certificate", {"user_id": user, "amount": amount}
        if roll < 0.7:
            return "send_certificate", {"user_id": "nobody", "amount": amount}
        if roll < 0.8:
            return "send_certificate", {"user_id": user, "amount": self.rng.choice(["100", "abc"])}
        return self.mangle("send_certificate", {"user_id": user, "amount": amount})

    def cancel_reservation(self, user: str) -> Call:
        roll = self.rng.random()
        if roll < 0.7:
            return "cancel_reservation", {"reservation_id": self.reservation(user)}
        if roll < 0.8:
            return "cancel_reservation", {"reservation_id": "NOPE00"}
        return self.mangle("cancel_reservation", {"reservation_id": self.reservation(user)})

    def update_reservation_baggages(self, user: str) -> Call:
        reservation = self.reservation(user)
        owner = self.db["reservations"][reservation]["user_id"]
        nonfree = self.rng.choice([0, 1, 2, 3, 5])
        arguments = {
            "reservation_id": reservation,
            "total_baggages": nonfree + self.rng.choice([0, 1, 2]),
            "nonfree_baggages": nonfree,
            "payment_id": self.payment_id(owner),
        }
        roll = self.rng.random()
        if roll < 0.55:
            return "update_reservation_baggages", arguments
        if roll < 0.65:
            return "update_reservation_baggages", {**arguments, "payment_id": "credit_card_0"}
        if roll < 0.75:
            odd = self.rng.choice([2.5, 2.0, "2", 1.7])
            return "update_reservation_baggages", {**arguments, "nonfree_baggages": odd}
        if roll < 0.8:
            return "update_reservation_baggages", {**arguments, "total_baggages": "four"}
        return self.mangle("update_reservation_baggages", arguments)

    def _same_route_flight(self, origin: str, destination: str) -> dict[str, Any] | None:
        found = [
            (number, date)
            for number, date in self.available
            if self.db["flights"][number]["origin"] == origin
            and self.db["flights"][number]["destination"] == destination
        ]
        if not found:
            return None
        number, date = self.rng.choice(found)
        return {"flight_number": number, "date": date}

    def update_reservation_flights(self, user: str) -> Call:
        reservation_id = self.reservation(user)
        reservation = self.db["reservations"][reservation_id]
        owner = reservation["user_id"]
        flights = [
            {"flight_number": f["flight_number"], "date": f["date"]} for f in reservation["flights"]
        ]
        cabin = reservation["cabin"]
        roll = self.rng.random()
        if roll < 0.25:  # a different flight on one leg
            leg = self.rng.randrange(len(flights)) if flights else 0
            if flights:
                old = reservation["flights"][leg]
                new = self._same_route_flight(old["origin"], old["destination"])
                if new is not None:
                    flights[leg] = new
        elif roll < 0.4:
            cabin = self.rng.choice(["economy", "business", "basic_economy"])
        elif roll < 0.45:
            cabin = self.rng.choice(["first", 3])
        elif roll < 0.5:
            flights = []
        elif roll < 0.55:
            flights = [self.rng.choice(["HAT001", "x"]), *flights]
        elif roll < 0.6:
            number, date = self.rng.choice(self.other)
            flights = [{"flight_number": number, "date": date}]
        elif roll < 0.65:
            flights = [{"flight_number": "HAT001"}]
        elif roll < 0.7:
            flights = [{**f, "extra": 1} for f in flights] + [
                {"flight_number": "HAT999", "date": "2024-05-20"}
            ]
        arguments: dict[str, Any] = {
            "reservation_id": reservation_id,
            "cabin": cabin,
            "flights": flights,
            "payment_id": self.payment_id(owner),
        }
        if roll > 0.9:
            return self.mangle("update_reservation_flights", arguments)
        return "update_reservation_flights", arguments

    def update_reservation_passengers(self, user: str) -> Call:
        reservation_id = self.reservation(user)
        count = len(self.db["reservations"][reservation_id]["passengers"])
        passengers: Any = [self.passenger() for _ in range(count)]
        roll = self.rng.random()
        if roll < 0.15:
            passengers = [*passengers, self.passenger()]
        elif roll < 0.25:
            passengers = "ab"[:count] if count <= 2 else "abcdef"[:count]
        elif roll < 0.35:
            passengers = [*passengers[:-1], "someone"]
        elif roll < 0.45:
            passengers = [{**p, "extra": "kept?"} for p in passengers]
        elif roll < 0.5:
            passengers = [{"first_name": "A"} for _ in range(count)]
        elif roll < 0.55:
            passengers = [{"first_name": 1, "last_name": "B", "dob": "x"}] * count
        arguments = {"reservation_id": reservation_id, "passengers": passengers}
        if roll > 0.9:
            return self.mangle("update_reservation_passengers", arguments)
        return "update_reservation_passengers", arguments

    def book_reservation(self, user: str) -> Call:
        rng = self.rng
        number, date = rng.choice(self.available)
        flight = self.db["flights"][number]
        legs = [(number, date)]
        flight_type = "one_way"
        if rng.random() < 0.4:
            back = self._same_route_flight(flight["destination"], flight["origin"])
            if back is not None:
                legs.append((back["flight_number"], back["date"]))
                flight_type = "round_trip"
        cabin = rng.choice(["economy", "business", "basic_economy"])
        count = rng.randint(1, 3)
        insurance = rng.choice(["yes", "no"])
        nonfree = rng.choice([0, 0, 1, 2])
        total = 0
        for leg_number, leg_date in legs:
            total += self.db["flights"][leg_number]["dates"][leg_date]["prices"][cabin] * count
        total += (30 * count if insurance == "yes" else 0) + 50 * nonfree
        methods = self.db["users"][user]["payment_methods"]
        payments: list[dict[str, Any]] = []
        cards = [k for k, m in methods.items() if m["source"] == "credit_card"]
        balances = [k for k, m in methods.items() if m["source"] != "credit_card"]
        if balances and rng.random() < 0.5:
            chosen = rng.choice(balances)
            part = min(int(methods[chosen]["amount"]), total)
            if rng.random() < 0.2:
                part = int(methods[chosen]["amount"]) + 10  # more than it holds
            payments.append({"payment_id": chosen, "amount": part})
            if total - part > 0 and cards:
                payments.append({"payment_id": rng.choice(cards), "amount": total - part})
        elif cards:
            payments.append({"payment_id": rng.choice(cards), "amount": total})
        else:
            payments.append({"payment_id": "credit_card_0", "amount": total})
        arguments: dict[str, Any] = {
            "user_id": user,
            "origin": flight["origin"],
            "destination": self.db["flights"][legs[-1][0]]["destination"]
            if flight_type == "one_way"
            else flight["destination"],
            "flight_type": flight_type,
            "cabin": cabin,
            "flights": [{"flight_number": n, "date": d} for n, d in legs],
            "passengers": [self.passenger() for _ in range(count)],
            "payment_methods": payments,
            "total_baggages": nonfree + rng.choice([0, 1]),
            "nonfree_baggages": nonfree,
            "insurance": insurance,
        }
        roll = rng.random()
        if roll < 0.5:
            return "book_reservation", arguments
        variants: list[dict[str, Any]] = [
            {
                "payment_methods": [
                    {**payments[0], "amount": payments[0]["amount"] + 1},
                    *payments[1:],
                ]
            },
            {"payment_methods": [{"payment_id": "gift_card_0", "amount": total}]},
            {"payment_methods": [{"payment_id": payments[0]["payment_id"], "amount": total + 0.5}]},
            {
                "payment_methods": [
                    {**payments[0], "amount": float(payments[0]["amount"])},
                    *payments[1:],
                ]
            },
            {"payment_methods": payments + payments},
            {"payment_methods": []},
            {"nonfree_baggages": str(nonfree)},
            {"nonfree_baggages": float(nonfree)},
            {"flight_type": "multi_city"},
            {"cabin": "first"},
            {"passengers": "abc"},
            {"passengers": [*arguments["passengers"], "x"]},
            {"passengers": [{"first_name": "A"}]},
            {"flights": [{"flight_number": "HAT999", "date": date}]},
            {"flights": [{"flight_number": number, "date": "2024-01-01"}]},
            {"flights": ["HAT001"]},
            {"flights": []},
            {"user_id": "nobody_1"},
            {"insurance": "maybe"},
            {"total_baggages": "two"},
        ]
        if rng.random() < 0.2:
            number, other_date = rng.choice(self.other)
            flight_arg = [{"flight_number": number, "date": other_date}]
            return "book_reservation", {**arguments, "flights": flight_arg}
        if roll > 0.93:
            return self.mangle("book_reservation", arguments)
        return "book_reservation", {**arguments, **rng.choice(variants)}

    TOOLS = (
        "book_reservation",
        "calculate",
        "cancel_reservation",
        "get_reservation_details",
        "get_user_details",
        "list_all_airports",
        "search_direct_flight",
        "search_onestop_flight",
        "send_certificate",
        "transfer_to_human_agents",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
        "get_flight_status",
    )
    WRITES = (
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    )

    def sequence(self) -> list[Call]:
        """A short sequence about one user: mostly writes, reads between them, and now
        and then the same write again (a second cancel, a fourth certificate)."""
        user = self.user()
        calls: list[Call] = []
        for _ in range(self.rng.randint(5, 9)):
            pool = self.WRITES if self.rng.random() < 0.6 else self.TOOLS
            name = self.rng.choice(pool)
            call = getattr(self, name)(user)
            calls.append(call)
            if self.rng.random() < 0.2:
                calls.append(call)
        return calls


@pytest.fixture(scope="module")
def cases(raw_tasks: list[dict[str, Any]], db: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for task in raw_tasks:
        actions = (task.get("evaluation_criteria") or {}).get("actions") or []
        calls = [(a.get("requestor", "assistant"), a["name"], a["arguments"]) for a in actions]
        if calls or not found:  # the first task's start is the start-hash test's
            # Gold calls are compared by result and the end hash (their writes succeed).
            found.append(_case(f"gold-{task['id']}", task, calls, "end"))
    generator = Generator(db, random.Random(SEED))
    base_task = raw_tasks[0]
    for number in range(SEQUENCES):
        calls = [("assistant", name, arguments) for name, arguments in generator.sequence()]
        found.append(_case(f"gen-{number}", base_task, calls, WRITES))
    return found


@pytest.fixture(scope="module")
def theirs(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return _reference.evaluate("airline", cases)


def test_start_hash_is_tau2s(data: Tau2Data, theirs: list[dict[str, Any]]) -> None:
    task = data.tasks["0"]
    ours = db_hash(data.start(task).agent_world)
    assert ours == theirs[0]["start"]["agent"]


def test_every_tool_is_exercised(cases: list[dict[str, Any]]) -> None:
    called = {
        call["name"]
        for case in cases
        for message in case["messages"]
        for call in message["tool_calls"]
    }
    assert set(Generator.TOOLS) <= called
    assert {tool.name for tool in AIRLINE.toolkit.tools()} == set(Generator.TOOLS)


def test_calls_agree_with_tau2(
    data: Tau2Data, cases: list[dict[str, Any]], theirs: list[dict[str, Any]]
) -> None:
    found: list[str] = []
    calls = 0
    for case, other in zip(cases, theirs, strict=True):
        ours = deedbench_calls(data, case)
        calls += len(ours["calls"])
        found.extend(f"{case['id']}: {d}" for d in differences(ours, other))
    assert calls > 400
    assert not found, f"{len(found)} differences, first 20:\n" + "\n".join(found[:20])
