"""The 14 airline tools and their world, on a small hand-made world in τ-bench's shape.

Every success path checks the exact change τ-bench makes (and that nothing else
was touched); every error path checks τ-bench's message and that nothing changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.airline import load_airline_data
from deedbench.benchmarks.airline.tools import (
    AIRLINE_TOOLS,
    AIRLINE_WRITE_TOOLS,
    AIRPORTS,
    CERTIFICATE_IDS,
    RESERVATION_IDS,
)
from deedbench.benchmarks.servicedesk import DeskWorld, TauToolBox
from deedbench.errors import BenchmarkError
from deedbench.records import Message, Termination, ToolCall
from deedbench.scoring import tau_hash, worlds_equal_tau

ANN, BOB = "ann_lee_1", "bob_ray_2"
ANN_PASSENGER = {"first_name": "Ann", "last_name": "Lee", "dob": "1990-01-01"}
CY_PASSENGER = {"first_name": "Cy", "last_name": "Lee", "dob": "1985-02-02"}
BOB_PASSENGER = {"first_name": "Bob", "last_name": "Ray", "dob": "1970-03-03"}


def _open(seats: tuple[int, int, int], prices: tuple[int, int, int]) -> dict[str, Any]:
    cabins = ("basic_economy", "economy", "business")
    return {
        "status": "available",
        "available_seats": dict(zip(cabins, seats, strict=True)),
        "prices": dict(zip(cabins, prices, strict=True)),
    }


def _flight(
    number: str, origin: str, destination: str, times: tuple[str, str], **dates: Any
) -> dict[str, Any]:
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": times[0],
        "scheduled_arrival_time_est": times[1],
        "dates": {day.replace("d", "2024-05-"): data for day, data in dates.items()},
    }


def _segment(number: str, date: str, price: int, origin: str, destination: str) -> dict[str, Any]:
    """A booked flight as τ-bench's data stores it."""
    return {
        "origin": origin,
        "destination": destination,
        "flight_number": number,
        "date": date,
        "price": price,
    }


def _reservation(
    rid: str,
    user_id: str,
    cabin: str,
    flights: list[dict[str, Any]],
    passengers: list[dict[str, Any]],
    payments: list[tuple[str, int]],
    bags: tuple[int, int],
) -> dict[str, Any]:
    return {
        "reservation_id": rid,
        "user_id": user_id,
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": cabin,
        "flights": flights,
        "passengers": passengers,
        "payment_history": [{"payment_id": pid, "amount": amount} for pid, amount in payments],
        "created_at": "2024-05-01T10:00:00",
        "total_baggages": bags[0],
        "nonfree_baggages": bags[1],
        "insurance": "no",
    }


def make_base() -> dict[str, Any]:
    """Five flights, two users, four reservations: enough for every path of every tool."""
    landed = {
        "status": "landed",
        "actual_departure_time_est": "2024-05-11T08:05:00",
        "actual_arrival_time_est": "2024-05-11T09:58:00",
    }
    return {
        "flights": {
            "HAT001": _flight(
                "HAT001",
                "JFK",
                "ORD",
                ("08:00:00", "10:00:00"),
                d10=_open((5, 10, 2), (30, 100, 300)),
                d11=landed,
                d12=_open((0, 1, 0), (35, 110, 320)),
            ),
            "HAT002": _flight(
                "HAT002",
                "ORD",
                "SEA",
                ("11:00:00", "13:00:00"),
                d06=_open((9, 9, 9), (61, 161, 461)),
                d10=_open((9, 9, 9), (60, 150, 450)),
                d11=_open((9, 9, 9), (65, 160, 480)),
                d20=_open((9, 9, 9), (70, 170, 470)),
            ),
            "HAT003": _flight(
                "HAT003",
                "JFK",
                "ORD",
                ("22:00:00", "01:00:00+1"),
                d05=_open((9, 9, 9), (20, 80, 200)),
                d10=_open((9, 9, 9), (20, 80, 200)),
                d19=_open((9, 9, 9), (20, 80, 200)),
            ),
            "HAT004": _flight(
                "HAT004",
                "JFK",
                "SEA",
                ("09:00:00", "12:00:00"),
                d10=_open((3, 3, 3), (40, 200, 600)),
                d11={"status": "delayed", "estimated_departure_time_est": "2024-05-11T10:00:00"},
            ),
            "HAT005": _flight(
                "HAT005",
                "ORD",
                "SEA",
                ("09:00:00", "11:00:00"),
                d10=_open((9, 9, 9), (55, 140, 420)),
            ),
        },
        "reservations": {
            "RES001": _reservation(
                "RES001",
                ANN,
                "economy",
                [
                    _segment("HAT001", "2024-05-10", 90, "JFK", "ORD"),
                    _segment("HAT002", "2024-05-10", 140, "ORD", "SEA"),
                ],
                [dict(ANN_PASSENGER), dict(CY_PASSENGER)],
                [("credit_card_1", 460)],
                (1, 0),
            ),
            "RES002": _reservation(
                "RES002",
                ANN,
                "basic_economy",
                [_segment("HAT004", "2024-05-10", 40, "JFK", "SEA")],
                [dict(ANN_PASSENGER)],
                [("gift_card_1", 40)],
                (0, 0),
            ),
            "RES003": _reservation(
                "RES003",
                BOB,
                "economy",
                [_segment("HAT004", "2024-05-10", 200, "JFK", "SEA")],
                [dict(BOB_PASSENGER)],
                [("credit_card_2", 250)],
                (2, 1),
            ),
            "RES004": _reservation(
                "RES004",
                BOB,
                "economy",
                [_segment("HAT001", "2024-05-11", 95, "JFK", "ORD")],
                [dict(BOB_PASSENGER)],
                [("credit_card_2", 95)],
                (0, 0),
            ),
        },
        "users": {
            ANN: {
                "name": {"first_name": "Ann", "last_name": "Lee"},
                "address": {
                    "address1": "1 Elm St",
                    "address2": "",
                    "city": "Springfield",
                    "country": "USA",
                    "state": "IL",
                    "zip": "62701",
                },
                "email": "ann.lee@example.com",
                "dob": "1990-01-01",
                "payment_methods": {
                    "credit_card_1": {
                        "source": "credit_card",
                        "brand": "visa",
                        "last_four": "1111",
                        "id": "credit_card_1",
                    },
                    "gift_card_1": {"source": "gift_card", "amount": 500, "id": "gift_card_1"},
                    "certificate_1": {
                        "source": "certificate",
                        "amount": 200,
                        "id": "certificate_1",
                    },
                    "certificate_2": {
                        "source": "certificate",
                        "amount": 100,
                        "id": "certificate_2",
                    },
                },
                "saved_passengers": [dict(CY_PASSENGER)],
                "membership": "gold",
                "reservations": ["RES001", "RES002"],
            },
            BOB: {
                "name": {"first_name": "Bob", "last_name": "Ray"},
                "address": {
                    "address1": "2 Oak Ave",
                    "address2": "Apt 4",
                    "city": "Chicago",
                    "country": "USA",
                    "state": "IL",
                    "zip": "60601",
                },
                "email": "bob.ray@example.com",
                "dob": "1970-03-03",
                "payment_methods": {
                    "gift_card_2": {"source": "gift_card", "amount": 10, "id": "gift_card_2"},
                    "credit_card_2": {
                        "source": "credit_card",
                        "brand": "mastercard",
                        "last_four": "2222",
                        "id": "credit_card_2",
                    },
                    "certificate_3221323": {
                        "source": "certificate",
                        "amount": 50,
                        "id": "certificate_3221323",
                    },
                },
                "saved_passengers": [],
                "membership": "regular",
                "reservations": ["RES003", "RES004"],
            },
        },
    }


def exact(value: Any) -> str:
    """Text that tells 100 from 100.0 and keeps key order: stricter than ==."""
    return json.dumps(value)


@pytest.fixture
def world() -> Iterator[DeskWorld]:
    """A fresh world; afterwards its base must be exactly as it was built."""
    base = make_base()
    yield DeskWorld(base)
    assert exact(base) == exact(make_base()), "a tool mutated the shared base"


def call(world: DeskWorld, name: str, **kwargs: Any) -> Message:
    """One call as τ-bench's environment makes it (the airline desk has no other way)."""
    box = TauToolBox(AIRLINE_TOOLS, world)
    return box.call(ToolCall(id="call-1", name=name, arguments=json.dumps(kwargs)))


def ok(world: DeskWorld, name: str, **kwargs: Any) -> str:
    message = call(world, name, **kwargs)
    assert not message.error, message.content
    return message.content


def fails(world: DeskWorld, name: str, expected: str, **kwargs: Any) -> str:
    """The call fails with `Error: expected` (or, for "", any error) and changes nothing."""
    before = exact(world.snapshot())
    touched = world.touched()
    message = call(world, name, **kwargs)
    assert message.error, message.content
    if expected:
        assert message.content == f"Error: {expected}"
    assert world.touched() == touched
    assert exact(world.snapshot()) == before
    return message.content


def reservation(world: DeskWorld, rid: str) -> dict[str, Any]:
    found = world.get("reservations", rid)
    assert found is not None
    return found


def user(world: DeskWorld, user_id: str) -> dict[str, Any]:
    found = world.get("users", user_id)
    assert found is not None
    return found


def methods(world: DeskWorld, user_id: str) -> dict[str, Any]:
    found: dict[str, Any] = user(world, user_id)["payment_methods"]
    return found


# --- the tool set -----------------------------------------------------------------------------

REQUIRED = {
    "get_user_details": ["user_id"],
    "get_reservation_details": ["reservation_id"],
    "list_all_airports": [],
    "search_direct_flight": ["origin", "destination", "date"],
    "search_onestop_flight": ["origin", "destination", "date"],
    "calculate": ["expression"],
    "think": ["thought"],
    "transfer_to_human_agents": ["summary"],
    "book_reservation": [
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
    ],
    "cancel_reservation": ["reservation_id"],
    "update_reservation_flights": ["reservation_id", "cabin", "flights", "payment_id"],
    "update_reservation_baggages": [
        "reservation_id",
        "total_baggages",
        "nonfree_baggages",
        "payment_id",
    ],
    "update_reservation_passengers": ["reservation_id", "passengers"],
    "send_certificate": ["user_id", "amount"],
}


def test_the_fourteen_tools_in_order_with_their_required_arguments() -> None:
    assert isinstance(AIRLINE_TOOLS, tuple)
    assert [t.name for t in AIRLINE_TOOLS] == list(REQUIRED)
    for t in AIRLINE_TOOLS:
        assert t.parameters["required"] == REQUIRED[t.name], t.name
        assert list(t.parameters["properties"]) == REQUIRED[t.name], t.name
        assert t.description, t.name
        for name, prop in t.parameters["properties"].items():
            assert prop.get("description"), f"{t.name}.{name} has no description"


def test_exactly_six_tools_write_and_only_the_transfer_ends_the_episode() -> None:
    writes = {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
        "send_certificate",
    }
    assert writes == AIRLINE_WRITE_TOOLS
    assert isinstance(AIRLINE_WRITE_TOOLS, frozenset)
    assert [t.name for t in AIRLINE_TOOLS if t.ends_episode] == ["transfer_to_human_agents"]


def test_schemas_give_the_shape_of_flights_passengers_and_payments() -> None:
    by_name = {t.name: t.parameters["properties"] for t in AIRLINE_TOOLS}
    book = by_name["book_reservation"]
    shapes = {
        "flights": ["flight_number", "date"],
        "passengers": ["first_name", "last_name", "dob"],
        "payment_methods": ["payment_id", "amount"],
    }
    for name, keys in shapes.items():
        assert book[name]["type"] == "array"
        items = book[name]["items"]
        assert items["type"] == "object" and items["required"] == keys
        assert all(items["properties"][key]["description"] for key in keys)
    assert book["payment_methods"]["items"]["properties"]["amount"]["type"] == "number"
    assert by_name["update_reservation_flights"]["flights"]["items"]["required"] == [
        "flight_number",
        "date",
    ]
    assert by_name["update_reservation_passengers"]["passengers"]["items"]["required"] == [
        "first_name",
        "last_name",
        "dob",
    ]
    assert book["cabin"]["enum"] == ["basic_economy", "economy", "business"]
    assert book["flight_type"]["enum"] == ["one_way", "round_trip"]
    assert book["insurance"]["enum"] == ["yes", "no"]
    assert book["total_baggages"]["type"] == "integer"
    assert "$ref" not in json.dumps([t.spec for t in AIRLINE_TOOLS])


# --- the world --------------------------------------------------------------------------------


def test_an_airline_world_is_a_retail_world_that_can_add_records() -> None:
    base = make_base()
    world = DeskWorld(base)
    assert isinstance(world, DeskWorld)
    new = {"reservation_id": "NEW1"}
    world.put("reservations", "NEW1", new)
    assert world.get("reservations", "NEW1") is new
    assert world.for_update("reservations", "NEW1") is new
    assert world.touched() == {"reservations": {"NEW1"}}
    assert [key for key, _ in world.items("reservations")][-1] == "NEW1"
    assert list(world.snapshot()["reservations"])[-1] == "NEW1"
    assert "NEW1" not in base["reservations"]
    assert DeskWorld(base).get("reservations", "NEW1") is None


def test_put_replaces_a_record_in_place_and_lists_each_key_once() -> None:
    world = DeskWorld(make_base())
    world.put("reservations", "NEW1", {"v": 1})
    world.put("reservations", "NEW1", {"v": 2})
    world.put("reservations", "RES002", {"v": 3})
    keys = [key for key, _ in world.items("reservations")]
    assert keys == ["RES001", "RES002", "RES003", "RES004", "NEW1"]
    assert world.get("reservations", "NEW1") == {"v": 2}
    assert world.get("reservations", "RES002") == {"v": 3}


def test_worlds_over_one_base_compare_by_their_touched_and_added_records() -> None:
    base = make_base()
    booked, again, fresh = DeskWorld(base), DeskWorld(base), DeskWorld(base)
    for w in (booked, again):
        ok(w, "cancel_reservation", reservation_id="RES003")
        ok(w, "send_certificate", user_id=BOB, amount=100)
    assert worlds_equal_tau(booked, again)
    assert not worlds_equal_tau(booked, fresh)
    assert tau_hash(booked.snapshot()) == tau_hash(again.snapshot())
    assert tau_hash(booked.snapshot()) != tau_hash(fresh.snapshot())


def _write_tables(folder: Path, **tables: Any) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        (folder / f"{name}.json").write_text(json.dumps(table), encoding="utf-8")


def test_load_airline_data_reads_three_tables_in_tau_bench_order(tmp_path: Path) -> None:
    base = make_base()
    _write_tables(tmp_path, users=base["users"], reservations=base["reservations"])
    _write_tables(tmp_path, flights=base["flights"])
    data = load_airline_data(tmp_path)
    assert list(data) == ["flights", "reservations", "users"]
    assert exact(data) == exact(base)

    other = tmp_path / "older" / "people.json"
    other.parent.mkdir()
    other.write_text(json.dumps({BOB: base["users"][BOB]}), encoding="utf-8")
    assert list(load_airline_data(tmp_path, users_file=other)["users"]) == [BOB]


def test_load_airline_data_names_the_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkError, match="does not exist"):
        load_airline_data(tmp_path / "nowhere")
    _write_tables(tmp_path, flights={}, reservations={})
    with pytest.raises(BenchmarkError, match=r"users\.json is missing"):
        load_airline_data(tmp_path)
    with pytest.raises(BenchmarkError, match=r"other\.json is missing"):
        load_airline_data(tmp_path, users_file=tmp_path / "other.json")
    (tmp_path / "users.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"users\.json is not valid JSON"):
        load_airline_data(tmp_path)
    (tmp_path / "users.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"users\.json must hold a JSON object"):
        load_airline_data(tmp_path)
    (tmp_path / "reservations.json").write_text('{"R": 1}', encoding="utf-8")
    with pytest.raises(BenchmarkError, match=r"reservations\.json must hold"):
        load_airline_data(tmp_path)


# --- reading tools ----------------------------------------------------------------------------


def test_get_details_return_the_records_as_json(world: DeskWorld) -> None:
    assert ok(world, "get_user_details", user_id=ANN) == exact(user(world, ANN))
    assert ok(world, "get_reservation_details", reservation_id="RES003") == exact(
        reservation(world, "RES003")
    )
    fails(world, "get_user_details", "user not found", user_id="nobody")
    # τ-bench's own text for an unknown reservation
    fails(world, "get_reservation_details", "user not found", reservation_id="NOPE00")


def test_list_all_airports_is_tau_bench_fixed_list(world: DeskWorld) -> None:
    airports = json.loads(ok(world, "list_all_airports"))
    assert airports == AIRPORTS and len(airports) == 20
    assert list(airports)[:2] == ["SFO", "JFK"] and airports["LGA"] == "LaGuardia"


def test_search_direct_flight_lists_available_flights_with_that_day(world: DeskWorld) -> None:
    found = json.loads(
        ok(world, "search_direct_flight", origin="JFK", destination="SEA", date="2024-05-10")
    )
    assert found == [
        {
            "flight_number": "HAT004",
            "origin": "JFK",
            "destination": "SEA",
            "scheduled_departure_time_est": "09:00:00",
            "scheduled_arrival_time_est": "12:00:00",
            "status": "available",
            "available_seats": {"basic_economy": 3, "economy": 3, "business": 3},
            "prices": {"basic_economy": 40, "economy": 200, "business": 600},
        }
    ]
    for date in ("2024-05-11", "2024-05-30", "tomorrow"):  # delayed, unknown, nonsense
        assert ok(world, "search_direct_flight", origin="JFK", destination="SEA", date=date) == "[]"
    assert (
        ok(world, "search_direct_flight", origin="SEA", destination="JFK", date="2024-05-10")
        == "[]"
    )


def _leg(world: DeskWorld, number: str, shown_date: str, date: str) -> dict[str, Any]:
    flight = world.get("flights", number)
    assert flight is not None
    leg = {key: value for key, value in flight.items() if key != "dates"}
    leg.update(flight["dates"][shown_date])
    leg["date"] = date
    return leg


def test_search_onestop_flight_pairs_connections(world: DeskWorld) -> None:
    found = json.loads(
        ok(world, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-10")
    )
    # HAT001 + HAT005 is left out: HAT005 leaves before HAT001 lands. HAT003 lands the
    # next day, so its connection is on 05-11, but τ-bench shows that flight's seats and
    # prices on 05-10, the first flight's date.
    assert found == [
        [
            _leg(world, "HAT001", "2024-05-10", "2024-05-10"),
            _leg(world, "HAT002", "2024-05-10", "2024-05-10"),
        ],
        [
            _leg(world, "HAT003", "2024-05-10", "2024-05-10"),
            _leg(world, "HAT002", "2024-05-10", "2024-05-11"),
        ],
    ]
    assert found[1][1]["prices"]["economy"] == 150  # 05-10's price, not 05-11's 160


def test_search_onestop_flight_keeps_tau_bench_date_quirks(world: DeskWorld) -> None:
    # The next day is written without zero padding ('2024-05-6'), so no connection is found.
    assert (
        ok(world, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-05")
        == "[]"
    )
    # The connection's 05-20 is available, but it has no 05-19 to show: τ-bench fails.
    fails(
        world,
        "search_onestop_flight",
        "'2024-05-19'",
        origin="JFK",
        destination="SEA",
        date="2024-05-19",
    )
    fails(
        world,
        "search_onestop_flight",
        "invalid literal for int() with base 10: 'xx'",
        origin="JFK",
        destination="SEA",
        date="2024-05-xx",
    )
    assert (
        ok(world, "search_onestop_flight", origin="SEA", destination="JFK", date="2024-05-10")
        == "[]"
    )


@pytest.mark.parametrize(
    ("expression", "result"),
    [("2 + 2", "4.0"), ("(90 + 160) * 2 - 460", "40.0"), ("10 / 3", "3.33"), ("-1.005", "-1.0")],
)
def test_calculate_rounds_to_two_decimals(world: DeskWorld, expression: str, result: str) -> None:
    assert ok(world, "calculate", expression=expression) == result


def test_calculate_errors(world: DeskWorld) -> None:
    fails(world, "calculate", "invalid characters in expression", expression="2 ** x")
    fails(world, "calculate", "division by zero", expression="1 / 0")


def test_think_and_transfer(world: DeskWorld) -> None:
    assert ok(world, "think", thought="The user wants a window seat.") == ""
    box = TauToolBox(AIRLINE_TOOLS, world)
    call_ = ToolCall(id="t", name="transfer_to_human_agents", arguments='{"summary": "help"}')
    outcome = box.take_turn(Message(role="assistant", tool_calls=[call_]))
    assert [m.content for m in outcome.results] == ["Transfer successful"]
    assert outcome.ends is Termination.TRANSFERRED


def test_reads_never_touch_the_world(world: DeskWorld) -> None:
    ok(world, "get_user_details", user_id=ANN)
    ok(world, "get_reservation_details", reservation_id="RES001")
    ok(world, "list_all_airports")
    ok(world, "search_direct_flight", origin="JFK", destination="SEA", date="2024-05-10")
    ok(world, "search_onestop_flight", origin="JFK", destination="SEA", date="2024-05-10")
    ok(world, "calculate", expression="1 + 1")
    ok(world, "think", thought="hmm")
    ok(world, "transfer_to_human_agents", summary="over to you")
    assert world.touched() == {}


def test_malformed_arguments_behave_as_in_tau_bench(world: DeskWorld) -> None:
    """Nothing is checked before a tool runs: Python's own errors, and what τ-bench stores."""
    fails(
        world,
        "get_user_details",
        "GetUserDetails.invoke() missing 1 required positional argument: 'user_id'",
    )
    fails(
        world,
        "cancel_reservation",
        "CancelReservation.invoke() got an unexpected keyword argument 'cabin'",
        reservation_id="RES001",
        cabin="economy",
    )
    assert ok(world, "send_certificate", user_id=BOB, amount="100") == (
        "Certificate certificate_3221322 added to user bob_ray_2 with amount 100."
    )
    assert exact(methods(world, BOB)["certificate_3221322"]["amount"]) == '"100"'


# --- book_reservation -------------------------------------------------------------------------


def booking(**changes: Any) -> dict[str, Any]:
    """Ann books JFK-ORD-SEA on 05-10 in economy for herself: 100 + 150, +30 insurance,
    +50 for one bag = 330, paid by a whole certificate, a gift card and a credit card."""
    arguments = {
        "user_id": ANN,
        "origin": "JFK",
        "destination": "SEA",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [
            {"flight_number": "HAT001", "date": "2024-05-10"},
            {"flight_number": "HAT002", "date": "2024-05-10"},
        ],
        "passengers": [dict(ANN_PASSENGER, seat="12A")],
        "payment_methods": [
            {"payment_id": "certificate_1", "amount": 200},
            {"payment_id": "gift_card_1", "amount": 80.5},
            {"payment_id": "credit_card_1", "amount": 49.5},
        ],
        "total_baggages": 2,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    arguments.update(changes)
    return arguments


def cheap_booking(payment_id: str = "credit_card_1", amount: float = 20) -> dict[str, Any]:
    """Ann alone on HAT003 in basic economy: 20, nothing else."""
    return booking(
        cabin="basic_economy",
        flights=[{"flight_number": "HAT003", "date": "2024-05-10"}],
        payment_methods=[{"payment_id": payment_id, "amount": amount}],
        nonfree_baggages=0,
        insurance="no",
    )


def test_book_reservation_makes_tau_bench_reservation(world: DeskWorld) -> None:
    output = ok(world, "book_reservation", **booking())
    made = reservation(world, "HATHAT")
    assert output == exact(made)
    assert exact(made) == exact(
        {
            "reservation_id": "HATHAT",
            "user_id": ANN,
            "origin": "JFK",
            "destination": "SEA",
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [
                {
                    "flight_number": "HAT001",
                    "date": "2024-05-10",
                    "price": 100,
                    "origin": "JFK",
                    "destination": "ORD",
                },
                {
                    "flight_number": "HAT002",
                    "date": "2024-05-10",
                    "price": 150,
                    "origin": "ORD",
                    "destination": "SEA",
                },
            ],
            "passengers": [dict(ANN_PASSENGER, seat="12A")],
            "payment_history": booking()["payment_methods"],
            "created_at": "2024-05-15T15:00:00",
            "total_baggages": 2,
            "nonfree_baggages": 1,
            "insurance": "yes",
        }
    )
    wallet = methods(world, ANN)
    assert "certificate_1" not in wallet  # used up, though the whole 200 was needed here
    assert "certificate_2" in wallet
    assert exact(wallet["gift_card_1"]["amount"]) == "419.5"
    assert user(world, ANN)["reservations"] == ["RES001", "RES002", "HATHAT"]
    assert world.touched() == {"reservations": {"HATHAT"}, "users": {ANN}}
    assert type(made["passengers"][0]) is dict and type(made["payment_history"][0]) is dict


def test_booking_ids_are_hathat_hathau_hathav_then_hathav_again(world: DeskWorld) -> None:
    made = [
        json.loads(ok(world, "book_reservation", **cheap_booking()))["reservation_id"]
        for _ in range(4)
    ]
    assert made == ["HATHAT", "HATHAU", "HATHAV", "HATHAV"]
    assert list(RESERVATION_IDS) == made[:3]
    keys = [key for key, _ in world.items("reservations")]
    assert keys == ["RES001", "RES002", "RES003", "RES004", "HATHAT", "HATHAU", "HATHAV"]
    assert user(world, ANN)["reservations"][2:] == ["HATHAT", "HATHAU", "HATHAV", "HATHAV"]


def test_booking_keeps_amount_types_and_never_changes_seats(world: DeskWorld) -> None:
    ok(world, "book_reservation", **cheap_booking("gift_card_1", 20))
    assert exact(methods(world, ANN)["gift_card_1"]["amount"]) == "480"
    ok(world, "book_reservation", **cheap_booking("gift_card_1", 20.0))
    assert exact(methods(world, ANN)["gift_card_1"]["amount"]) == "460.0"
    assert exact(reservation(world, "HATHAU")["payment_history"]) == exact(
        [{"payment_id": "gift_card_1", "amount": 20.0}]
    )
    ok(world, "book_reservation", **cheap_booking("certificate_2", 20))
    assert "certificate_2" not in methods(world, ANN)  # 80 of it is lost, as in τ-bench
    assert "flights" not in world.touched()


def test_gift_card_balances_are_never_rounded(world: DeskWorld) -> None:
    arguments = cheap_booking()
    arguments["payment_methods"] = [
        {"payment_id": "gift_card_1", "amount": 19.99},
        {"payment_id": "credit_card_1", "amount": 0.01},
    ]
    for _ in range(4):
        ok(world, "book_reservation", **arguments)
    assert exact(methods(world, ANN)["gift_card_1"]["amount"]) == "420.03999999999996"


def test_booking_with_only_a_card_changes_no_balance(world: DeskWorld) -> None:
    before = exact(methods(world, ANN))
    ok(world, "book_reservation", **cheap_booking())
    assert exact(methods(world, ANN)) == before


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"user_id": "nobody"}, "user not found"),
        (
            {"flights": [{"flight_number": "HAT999", "date": "2024-05-10"}]},
            "flight HAT999 not found",
        ),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-30"}]},
            "flight HAT001 not found on date 2024-05-30",
        ),
        (
            {"flights": [{"flight_number": "HAT001", "date": "2024-05-11"}]},
            "flight HAT001 not available on date 2024-05-11",
        ),
        (
            {"cabin": "business", "passengers": [ANN_PASSENGER, CY_PASSENGER, BOB_PASSENGER]},
            "not enough seats on flight HAT001",
        ),
        (
            {"payment_methods": [{"payment_id": "credit_card_2", "amount": 330}]},
            "payment method credit_card_2 not found",
        ),
        (
            {
                "payment_methods": [
                    {"payment_id": "certificate_2", "amount": 150},
                    {"payment_id": "credit_card_1", "amount": 180},
                ]
            },
            "not enough balance in payment method certificate_2",
        ),
        (
            {
                "payment_methods": [
                    {"payment_id": "gift_card_1", "amount": 500.5},
                    {"payment_id": "credit_card_1", "amount": -170.5},
                ]
            },
            "not enough balance in payment method gift_card_1",
        ),
        (
            {"payment_methods": [{"payment_id": "credit_card_1", "amount": 300}]},
            "payment amount does not add up, total price is 330, but paid 300",
        ),
        (
            {"payment_methods": [{"payment_id": "credit_card_1", "amount": 330.01}]},
            "payment amount does not add up, total price is 330, but paid 330.01",
        ),
        (  # the flights are checked before the payments
            {
                "flights": [{"flight_number": "HAT004", "date": "2024-05-11"}],
                "payment_methods": [{"payment_id": "nope", "amount": 1}],
            },
            "flight HAT004 not available on date 2024-05-11",
        ),
    ],
)
def test_book_reservation_errors(world: DeskWorld, changes: dict[str, Any], error: str) -> None:
    fails(world, "book_reservation", error, **booking(**changes))


def test_book_reservation_takes_malformed_objects_as_tau_bench_does(world: DeskWorld) -> None:
    """τ-bench stores what it is given and fails where Python fails (the differential test
    in tests/benchmarks/taubench compares every such case with τ-bench's own code)."""
    fails(world, "book_reservation", "'date'", **booking(flights=[{"flight_number": "HAT001"}]))
    fails(world, "book_reservation", "'first'", **booking(cabin="first"))
    fails(
        world,
        "book_reservation",
        "string indices must be integers, not 'str'",
        **booking(payment_methods=["credit_card_1"]),
    )
    no_birth_date = [{"first_name": "Ann", "last_name": "Lee"}]
    booked = json.loads(ok(world, "book_reservation", **booking(passengers=no_birth_date)))
    assert booked["passengers"] == no_birth_date


def test_a_certificate_named_twice_half_applies_the_booking_as_in_tau_bench(
    world: DeskWorld,
) -> None:
    # HAT003 economy 80 + insurance 30 = 110. Every check passes; then τ-bench charges the
    # gift card, deletes the certificate, and fails on the certificate's second mention.
    arguments = cheap_booking()
    arguments.update(
        cabin="economy",
        insurance="yes",
        payment_methods=[
            {"payment_id": "gift_card_1", "amount": 10},
            {"payment_id": "certificate_2", "amount": 50},
            {"payment_id": "certificate_2", "amount": 50},
        ],
    )
    message = call(world, "book_reservation", **arguments)
    assert message.error and message.content == "Error: 'certificate_2'", message.content
    assert world.get("reservations", "HATHAT") is None
    assert methods(world, ANN)["gift_card_1"]["amount"] == 490
    assert "certificate_2" not in methods(world, ANN)
    assert user(world, ANN)["reservations"] == ["RES001", "RES002"]
    assert world.touched() == {"users": {ANN}}


# --- cancel_reservation -----------------------------------------------------------------------


def test_cancel_appends_negated_payments_and_refunds_no_balance(world: DeskWorld) -> None:
    output = ok(world, "cancel_reservation", reservation_id="RES002")
    cancelled = reservation(world, "RES002")
    assert output == exact(cancelled)
    assert cancelled["status"] == "cancelled"
    assert cancelled["payment_history"] == [
        {"payment_id": "gift_card_1", "amount": 40},
        {"payment_id": "gift_card_1", "amount": -40},
    ]
    assert world.touched() == {"reservations": {"RES002"}}  # the gift card gets nothing back


def test_cancel_can_be_repeated_and_negates_every_line(world: DeskWorld) -> None:
    ok(world, "cancel_reservation", reservation_id="RES001")
    ok(world, "cancel_reservation", reservation_id="RES001")
    amounts = [line["amount"] for line in reservation(world, "RES001")["payment_history"]]
    assert amounts == [460, -460, -460, 460]
    fails(world, "cancel_reservation", "reservation not found", reservation_id="NOPE00")


# --- update_reservation_flights ---------------------------------------------------------------


def flights_of(*legs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"flight_number": number, "date": date} for number, date in legs]


def test_change_keeps_the_old_price_of_a_kept_flight(world: DeskWorld) -> None:
    new = flights_of(("HAT001", "2024-05-10"), ("HAT002", "2024-05-11"))
    output = ok(
        world,
        "update_reservation_flights",
        reservation_id="RES001",
        cabin="economy",
        flights=new,
        payment_id="credit_card_1",
    )
    changed = reservation(world, "RES001")
    assert output == exact(changed)
    assert exact(changed["flights"]) == exact(
        [
            {
                "flight_number": "HAT001",
                "date": "2024-05-10",
                "price": 90,
                "origin": "JFK",
                "destination": "ORD",
            },
            {
                "flight_number": "HAT002",
                "date": "2024-05-11",
                "price": 160,
                "origin": "ORD",
                "destination": "SEA",
            },
        ]
    )
    # (90 + 160 - 90 - 140) for two passengers
    assert changed["payment_history"][-1] == {"payment_id": "credit_card_1", "amount": 40}
    assert world.touched() == {"reservations": {"RES001"}}


def test_a_cabin_change_reprices_everything_but_keeps_the_cabin(world: DeskWorld) -> None:
    same = flights_of(("HAT001", "2024-05-10"), ("HAT002", "2024-05-10"))
    ok(
        world,
        "update_reservation_flights",
        reservation_id="RES001",
        cabin="business",
        flights=same,
        payment_id="credit_card_1",
    )
    changed = reservation(world, "RES001")
    assert [f["price"] for f in changed["flights"]] == [300, 450]
    assert changed["payment_history"][-1]["amount"] == (300 + 450) * 2 - 460
    assert changed["cabin"] == "economy"  # τ-bench never writes the new cabin


def test_a_cheaper_change_refunds_a_gift_card(world: DeskWorld) -> None:
    ok(
        world,
        "update_reservation_flights",
        reservation_id="RES002",
        cabin="basic_economy",
        flights=flights_of(("HAT003", "2024-05-10")),
        payment_id="gift_card_1",
    )
    assert methods(world, ANN)["gift_card_1"]["amount"] == 520
    assert reservation(world, "RES002")["payment_history"][-1] == {
        "payment_id": "gift_card_1",
        "amount": -20,
    }
    ok(
        world,
        "update_reservation_flights",
        reservation_id="RES002",
        cabin="basic_economy",
        flights=flights_of(("HAT001", "2024-05-10"), ("HAT002", "2024-05-10")),
        payment_id="gift_card_1",
    )
    assert methods(world, ANN)["gift_card_1"]["amount"] == 520 - (30 + 60 - 20)


def test_no_price_difference_adds_no_payment_and_leaves_the_user_alone(
    world: DeskWorld,
) -> None:
    history = exact(reservation(world, "RES001")["payment_history"])
    ok(
        world,
        "update_reservation_flights",
        reservation_id="RES001",
        cabin="economy",
        flights=flights_of(("HAT001", "2024-05-10"), ("HAT002", "2024-05-10")),
        payment_id="gift_card_1",
    )
    assert exact(reservation(world, "RES001")["payment_history"]) == history
    assert world.touched() == {}  # the same flights at the same prices: the same database


def test_a_kept_flight_is_not_checked_again(world: DeskWorld) -> None:
    kept = flights_of(("HAT001", "2024-05-11"))  # landed, but already in RES004
    arguments = {"reservation_id": "RES004", "flights": kept, "payment_id": "credit_card_2"}
    ok(world, "update_reservation_flights", cabin="economy", **arguments)
    fails(
        world,
        "update_reservation_flights",
        "flight HAT001 not available on date 2024-05-11",
        cabin="business",
        **arguments,
    )


@pytest.mark.parametrize(
    ("rid", "cabin", "legs", "payment_id", "error"),
    [
        ("NOPE00", "economy", [], "credit_card_1", "reservation not found"),
        (
            "RES001",
            "economy",
            [("HAT999", "2024-05-10")],
            "credit_card_1",
            "flight HAT999 not found",
        ),
        (
            "RES001",
            "economy",
            [("HAT001", "2024-05-30")],
            "credit_card_1",
            "flight HAT001 not found on date 2024-05-30",
        ),
        (
            "RES003",
            "economy",
            [("HAT004", "2024-05-11")],
            "credit_card_2",
            "flight HAT004 not available on date 2024-05-11",
        ),
        (
            "RES001",
            "economy",
            [("HAT001", "2024-05-12")],
            "credit_card_1",
            "not enough seats on flight HAT001",
        ),
        (
            "RES001",
            "economy",
            [("HAT004", "2024-05-10")],
            "credit_card_2",
            "payment method not found",
        ),
        (
            "RES001",
            "economy",
            [("HAT004", "2024-05-10")],
            "certificate_1",
            "certificate cannot be used to update reservation",
        ),
        (
            "RES003",
            "business",
            [("HAT004", "2024-05-10")],
            "gift_card_2",
            "gift card balance is not enough",
        ),
    ],
)
def test_update_flights_errors(
    world: DeskWorld,
    rid: str,
    cabin: str,
    legs: list[tuple[str, str]],
    payment_id: str,
    error: str,
) -> None:
    fails(
        world,
        "update_reservation_flights",
        error,
        reservation_id=rid,
        cabin=cabin,
        flights=flights_of(*legs),
        payment_id=payment_id,
    )


# --- update_reservation_baggages --------------------------------------------------------------


def test_added_bags_are_charged_fifty_each(world: DeskWorld) -> None:
    output = ok(
        world,
        "update_reservation_baggages",
        reservation_id="RES001",
        total_baggages=3,
        nonfree_baggages=2,
        payment_id="gift_card_1",
    )
    changed = reservation(world, "RES001")
    assert output == exact(changed)
    assert (changed["total_baggages"], changed["nonfree_baggages"]) == (3, 2)
    assert changed["payment_history"][-1] == {"payment_id": "gift_card_1", "amount": 100}
    assert methods(world, ANN)["gift_card_1"]["amount"] == 400


def test_fewer_bags_refund_nothing(world: DeskWorld) -> None:
    ok(
        world,
        "update_reservation_baggages",
        reservation_id="RES003",
        total_baggages=0,
        nonfree_baggages=0,
        payment_id="gift_card_2",
    )
    changed = reservation(world, "RES003")
    assert (changed["total_baggages"], changed["nonfree_baggages"]) == (0, 0)
    assert changed["payment_history"] == [{"payment_id": "credit_card_2", "amount": 250}]
    assert world.touched() == {"reservations": {"RES003"}}


@pytest.mark.parametrize(
    ("rid", "payment_id", "error"),
    [
        ("NOPE00", "credit_card_1", "reservation not found"),
        ("RES003", "credit_card_1", "payment method not found"),
        ("RES003", "certificate_3221323", "certificate cannot be used to update reservation"),
        ("RES003", "gift_card_2", "gift card balance is not enough"),
    ],
)
def test_update_baggages_errors(world: DeskWorld, rid: str, payment_id: str, error: str) -> None:
    fails(
        world,
        "update_reservation_baggages",
        error,
        reservation_id=rid,
        total_baggages=3,
        nonfree_baggages=2,
        payment_id=payment_id,
    )


# --- update_reservation_passengers and send_certificate ---------------------------------------


def test_update_passengers_replaces_them_as_given(world: DeskWorld) -> None:
    new = [dict(BOB_PASSENGER, note="window"), dict(CY_PASSENGER)]
    output = ok(world, "update_reservation_passengers", reservation_id="RES001", passengers=new)
    assert output == exact(reservation(world, "RES001"))
    assert exact(reservation(world, "RES001")["passengers"]) == exact(new)
    assert world.touched() == {"reservations": {"RES001"}}
    fails(
        world,
        "update_reservation_passengers",
        "number of passengers does not match",
        reservation_id="RES001",
        passengers=[ANN_PASSENGER],
    )
    fails(
        world,
        "update_reservation_passengers",
        "reservation not found",
        reservation_id="NOPE00",
        passengers=[],
    )


def test_send_certificate_takes_the_first_free_id(world: DeskWorld) -> None:
    assert ok(world, "send_certificate", user_id=BOB, amount=100) == (
        "Certificate certificate_3221322 added to user bob_ray_2 with amount 100."
    )
    assert ok(world, "send_certificate", user_id=BOB, amount=150.0) == (
        "Certificate certificate_3221324 added to user bob_ray_2 with amount 150.0."
    )
    wallet = methods(world, BOB)
    assert exact(wallet["certificate_3221324"]) == exact(
        {"source": "certificate", "amount": 150.0, "id": "certificate_3221324"}
    )
    assert list(wallet)[-2:] == ["certificate_3221322", "certificate_3221324"]
    assert set(CERTIFICATE_IDS) <= set(wallet)
    assert world.touched() == {"users": {BOB}}
    # τ-bench's tool returns nothing for a fourth: its run fails (see TauToolBox)
    fails(
        world, "send_certificate", "send_certificate returned None, not text", user_id=BOB, amount=5
    )
    fails(world, "send_certificate", "user not found", user_id="nobody", amount=5)


def test_writes_change_only_what_they_change(world: DeskWorld) -> None:
    ok(world, "book_reservation", **cheap_booking())
    ok(world, "cancel_reservation", reservation_id="RES003")
    assert world.touched() == {"reservations": {"RES003", "HATHAT"}, "users": {ANN}}
    for table, records in world.base.items():
        for key, record in records.items():
            if key not in {"RES003", ANN}:
                assert exact(world.get(table, key)) == exact(record), (table, key)
