"""The airline policy rules on hand-built transcripts, then on τ-bench's 200 gpt-4o records."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.airline import (
    AIRLINE,
    AIRLINE_PROCEDURE_RULES,
    AIRLINE_RULES,
    check_airline_policy,
)
from deedbench.benchmarks.servicedesk import DeskWorld
from deedbench.records.messages import Message, ToolCall
from deedbench.scoring.procedure import AUTHENTICATION, Violation, check_procedure

SYSTEM = "# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n"

# --- a small world in τ-bench's shape ----------------------------------------------------------


def _available(price: int = 100) -> dict[str, Any]:
    return {
        "status": "available",
        "available_seats": {"basic_economy": 9, "economy": 9, "business": 9},
        "prices": {"basic_economy": price // 2, "economy": price, "business": price * 3},
    }


def _flight(number: str, origin: str, destination: str, dates: dict[str, Any]) -> dict[str, Any]:
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": "06:00:00",
        "scheduled_arrival_time_est": "12:00:00",
        "dates": dates,
    }


FLIGHTS = {
    "HAT001": _flight(
        "HAT001",
        "JFK",
        "LAX",
        {
            "2024-05-10": {
                "status": "landed",
                "actual_departure_time_est": "2024-05-10T06:02:00",
                "actual_arrival_time_est": "2024-05-10T12:05:00",
            },
            "2024-05-14": {"status": "cancelled"},
            "2024-05-15": {
                "status": "delayed",
                "estimated_departure_time_est": "2024-05-15T19:00:00",
                "estimated_arrival_time_est": "2024-05-16T01:00:00",
            },
            "2024-05-20": _available(),
            "2024-05-21": _available(),
        },
    ),
    "HAT002": _flight(
        "HAT002",
        "LAX",
        "JFK",
        {"2024-05-22": _available(), "2024-05-25": _available(), "2024-05-26": _available()},
    ),
    "HAT003": _flight("HAT003", "JFK", "ORD", {"2024-05-20": _available()}),
    "HAT004": _flight("HAT004", "JFK", "LAX", {"2024-05-20": _available(120)}),
}


def _reservation(
    rid: str,
    user: str = "alice_1",
    *,
    cabin: str = "economy",
    insurance: str = "no",
    created: str = "2024-05-01T10:00:00",
    flights: Sequence[tuple[str, str]] = (("HAT001", "2024-05-20"),),
    trip: str = "one_way",
    origin: str = "JFK",
    destination: str = "LAX",
    passengers: int = 1,
    bags: int = 0,
) -> dict[str, Any]:
    return {
        "reservation_id": rid,
        "user_id": user,
        "origin": origin,
        "destination": destination,
        "flight_type": trip,
        "cabin": cabin,
        "flights": [
            {
                "origin": FLIGHTS[n]["origin"],
                "destination": FLIGHTS[n]["destination"],
                "flight_number": n,
                "date": d,
                "price": 100,
            }
            for n, d in flights
        ],
        "passengers": [
            {"first_name": f"P{i}", "last_name": "Doe", "dob": "1990-01-01"}
            for i in range(passengers)
        ],
        "payment_history": [{"payment_id": "credit_card_1", "amount": 100 * passengers}],
        "created_at": created,
        "total_baggages": bags,
        "nonfree_baggages": 0,
        "insurance": insurance,
    }


RESERVATIONS = {
    r["reservation_id"]: r
    for r in [
        _reservation("OLD001", bags=2),
        _reservation("NEW001", created="2024-05-15T10:00:00"),
        _reservation("INS001", insurance="yes"),
        _reservation("BIZ001", cabin="business"),
        _reservation(
            "FLOWN1",
            cabin="business",
            trip="round_trip",
            flights=[("HAT001", "2024-05-10"), ("HAT002", "2024-05-22")],
        ),
        _reservation("CXL001", flights=[("HAT001", "2024-05-14")], passengers=2),
        _reservation("BASIC1", cabin="basic_economy"),
        _reservation(
            "RT0001",
            trip="round_trip",
            flights=[("HAT001", "2024-05-20"), ("HAT002", "2024-05-25")],
        ),
        _reservation("DLY001", "bob_2", flights=[("HAT001", "2024-05-15")], passengers=2),
        _reservation("DLY002", flights=[("HAT001", "2024-05-15")]),
        _reservation("CLEAN1", "carol_3"),
    ]
}


def _user(membership: str, reservations: list[str]) -> dict[str, Any]:
    methods = {
        pid: {"source": pid.rsplit("_", 1)[0], "id": pid}
        for pid in [
            "credit_card_1",
            "credit_card_2",
            "gift_card_1",
            "gift_card_2",
            "gift_card_3",
            "gift_card_4",
            "certificate_1",
            "certificate_2",
        ]
    }
    return {
        "name": {"first_name": "A", "last_name": "B"},
        "payment_methods": methods,
        "saved_passengers": [],
        "membership": membership,
        "reservations": reservations,
    }


USERS = {
    "alice_1": _user(
        "regular",
        [r for r, v in RESERVATIONS.items() if v["user_id"] == "alice_1"],
    ),
    "bob_2": _user("gold", ["DLY001"]),
    "carol_3": _user("silver", ["CLEAN1"]),
}


@pytest.fixture
def tables() -> dict[str, Any]:
    return {
        "flights": copy.deepcopy(FLIGHTS),
        "reservations": copy.deepcopy(RESERVATIONS),
        "users": copy.deepcopy(USERS),
    }


@pytest.fixture
def db(tables: dict[str, Any]) -> DeskWorld:
    return DeskWorld(tables)


# --- transcript builders ----------------------------------------------------------------------


class Chat:
    """A transcript under construction; `call` returns the assistant message's index."""

    def __init__(self, system: str | None = SYSTEM) -> None:
        self.messages: list[Message] = []
        self._ids = 0
        if system is not None:
            self.messages.append(Message(role="system", content=system))

    def user(self, text: str) -> Chat:
        self.messages.append(Message(role="user", content=text))
        return self

    def agent(self, text: str) -> Chat:
        self.messages.append(Message(role="assistant", content=text))
        return self

    def call(
        self,
        name: str,
        args: dict[str, Any],
        result: Any = "ok",
        *,
        error: bool = False,
        call_id: str | None = None,
    ) -> int:
        self._ids += 1
        cid = call_id or f"call_{self._ids}"
        arguments = json.dumps(args)
        self.messages.append(
            Message(role="assistant", tool_calls=[ToolCall(id=cid, name=name, arguments=arguments)])
        )
        index = len(self.messages) - 1
        content = result if isinstance(result, str) else json.dumps(result)
        self.messages.append(
            Message(role="tool", content=content, tool_call_id=cid, tool_name=name, error=error)
        )
        return index


def _only(violations: list[Violation], rule: str, index: int) -> Violation:
    """The single violation found, checked to be `rule` at `index` quoting its call."""
    assert len(violations) == 1, violations
    found = violations[0]
    assert found.rule == rule
    assert found.message_index == index
    assert found.tool_call_id is not None
    return found


def _cancelled(reservation: dict[str, Any]) -> dict[str, Any]:
    return {**reservation, "status": "cancelled"}


# --- API ----------------------------------------------------------------------------------------


def test_rule_names_are_stable() -> None:
    assert AIRLINE_RULES == (
        "cancellation_eligibility",
        "basic_economy_no_change",
        "keep_route_and_trip_type",
        "max_passengers",
        "payment_limits",
        "bags_only_added",
        "no_insurance_after_booking",
        "compensation",
    )


def test_unknown_rule_is_refused(db: DeskWorld) -> None:
    with pytest.raises(ValueError, match="unknown airline rules"):
        check_airline_policy([], db, rules=["nonsense"])


def test_rules_argument_selects(db: DeskWorld) -> None:
    chat = Chat()
    chat.call("cancel_reservation", {"reservation_id": "OLD001"})
    assert check_airline_policy(chat.messages, db, rules=["compensation"]) == []
    assert len(check_airline_policy(chat.messages, db, rules=["cancellation_eligibility"])) == 1


def test_db_is_not_changed(tables: dict[str, Any], db: DeskWorld) -> None:
    before = copy.deepcopy(tables)
    chat = Chat()
    chat.call("update_reservation_baggages", {"reservation_id": "OLD001", "total_baggages": 5})
    chat.call("cancel_reservation", {"reservation_id": "OLD001"})
    check_airline_policy(chat.messages, db)
    assert tables == before and db.touched() == {}


# --- generic procedure spec ---------------------------------------------------------------------


def test_procedure_spec_consent_and_why_authentication_is_excluded(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("Hi, I'm alice_1 and I want to cancel NEW001.")
    chat.call("get_reservation_details", {"reservation_id": "NEW001"}, RESERVATIONS["NEW001"])
    chat.agent("I can cancel reservation NEW001 for a full refund. Shall I proceed?")
    chat.user("Yes, please.")
    index = chat.call("cancel_reservation", {"reservation_id": "NEW001"})
    spec = AIRLINE.procedure_spec
    assert check_procedure(chat.messages, spec, AIRLINE_PROCEDURE_RULES) == []
    # With no authentication tool, the generic rule flags the first personal read.
    assert AUTHENTICATION not in AIRLINE_PROCEDURE_RULES
    flagged = check_procedure(chat.messages, spec, [AUTHENTICATION])
    assert [v.rule for v in flagged] == [AUTHENTICATION]
    # Consent still bites: the same cancellation without a yes.
    chat.messages[-3] = Message(role="user", content="Hmm, maybe later.")
    consent = check_procedure(chat.messages, spec, AIRLINE_PROCEDURE_RULES)
    assert [(v.rule, v.message_index) for v in consent] == [("consent", index)]


def test_booking_key_ids_are_plain_strings() -> None:
    assert AIRLINE.procedure_spec.write_tools["book_reservation"] == ("origin", "destination")
    assert set(AIRLINE.procedure_spec.write_tools) == {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
        "send_certificate",
    }


# --- cancellation_eligibility -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reservation", "said"),
    [
        ("NEW001", "Change of plans."),  # booked within 24 hours
        ("CXL001", "The airline cancelled my flight."),  # airline cancelled a flight
        ("BIZ001", "Change of plans."),  # business
        ("INS001", "I'm sick and cannot travel."),  # insured, health reason
        ("INS001", "There is a huge storm coming."),  # insured, weather reason
    ],
)
def test_cancellation_allowed(db: DeskWorld, reservation: str, said: str) -> None:
    chat = Chat()
    chat.user(said)
    chat.call("cancel_reservation", {"reservation_id": reservation})
    assert check_airline_policy(chat.messages, db) == []


def test_cancellation_old_uninsured_economy(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("Please cancel OLD001, my plans changed.")
    index = chat.call("cancel_reservation", {"reservation_id": "OLD001"})
    found = _only(check_airline_policy(chat.messages, db), "cancellation_eligibility", index)
    assert found.excerpt == 'cancel_reservation({"reservation_id": "OLD001"})'
    assert "booked 2024-05-01T10:00:00" in found.detail
    assert "more than 24 hours before 2024-05-15 15:00" in found.detail
    assert "cabin economy" in found.detail
    assert "travel insurance no" in found.detail


def test_cancellation_insured_without_covered_reason(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("I have a family emergency, cancel INS001 please.")
    index = chat.call("cancel_reservation", {"reservation_id": "INS001"})
    found = _only(check_airline_policy(chat.messages, db), "cancellation_eligibility", index)
    assert "travel insurance but the user gave no health or weather reason" in found.detail


def test_cancellation_of_flown_trip_even_in_business(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("I'm sick, cancel FLOWN1.")
    index = chat.call("cancel_reservation", {"reservation_id": "FLOWN1"})
    found = _only(check_airline_policy(chat.messages, db), "cancellation_eligibility", index)
    assert "HAT001 on 2024-05-10 (status landed)" in found.detail
    assert "HAT002" not in found.detail


def test_cancellation_of_reservation_booked_in_conversation(db: DeskWorld) -> None:
    booked = _reservation("HATHAT", created="2024-05-15T15:00:00")
    chat = Chat()
    chat.call("book_reservation", {"user_id": "alice_1", "origin": "JFK"}, booked)
    chat.call("cancel_reservation", {"reservation_id": "HATHAT"}, _cancelled(booked))
    assert check_airline_policy(chat.messages, db) == []


def test_failed_cancellation_is_not_judged(db: DeskWorld) -> None:
    chat = Chat()
    chat.call("cancel_reservation", {"reservation_id": "OLD001"}, "Error: boom", error=True)
    assert check_airline_policy(chat.messages, db) == []


def test_now_comes_from_the_system_prompt(db: DeskWorld) -> None:
    chat = Chat(system="The current time is 2024-05-02 09:00:00 EST.")
    chat.call("cancel_reservation", {"reservation_id": "OLD001"})  # booked 23 hours before
    assert check_airline_policy(chat.messages, db) == []
    assert len(check_airline_policy(chat.messages, db, now=datetime(2024, 5, 15, 15))) == 1


def test_reused_call_ids_pair_each_result_with_its_own_call(db: DeskWorld) -> None:
    chat = Chat()
    chat.call(
        "cancel_reservation", {"reservation_id": "OLD001"}, "Error: x", error=True, call_id="c"
    )
    index = chat.call("cancel_reservation", {"reservation_id": "OLD001"}, call_id="c")
    _only(check_airline_policy(chat.messages, db), "cancellation_eligibility", index)


# --- basic_economy_no_change --------------------------------------------------------------------


def _change(chat: Chat, rid: str, cabin: str, flights: Sequence[tuple[str, str]]) -> int:
    args = {
        "reservation_id": rid,
        "cabin": cabin,
        "flights": [{"flight_number": n, "date": d} for n, d in flights],
        "payment_id": "credit_card_1",
    }
    result = {**RESERVATIONS[rid], "flights": _reservation("X", flights=flights)["flights"]}
    return chat.call("update_reservation_flights", args, result)


def test_basic_economy_cabin_upgrade_alone_is_allowed(db: DeskWorld) -> None:
    chat = Chat()
    _change(chat, "BASIC1", "economy", [("HAT001", "2024-05-20")])
    assert check_airline_policy(chat.messages, db) == []


def test_basic_economy_flight_change(db: DeskWorld) -> None:
    chat = Chat()
    index = _change(chat, "BASIC1", "basic_economy", [("HAT004", "2024-05-20")])
    found = _only(check_airline_policy(chat.messages, db), "basic_economy_no_change", index)
    assert found.excerpt.startswith('update_reservation_flights({"reservation_id": "BASIC1"')
    assert "BASIC1 is basic_economy" in found.detail
    assert "dropping HAT001 on 2024-05-20 and adding HAT004 on 2024-05-20" in found.detail


def test_basic_economy_upgrade_and_change_in_one_call(db: DeskWorld) -> None:
    chat = Chat()
    index = _change(chat, "BASIC1", "economy", [("HAT004", "2024-05-20")])
    found = _only(check_airline_policy(chat.messages, db), "basic_economy_no_change", index)
    assert "the same call sets cabin economy" in found.detail


def test_basic_economy_upgraded_first_then_changed(db: DeskWorld) -> None:
    chat = Chat()
    _change(chat, "BASIC1", "economy", [("HAT001", "2024-05-20")])
    _change(chat, "BASIC1", "economy", [("HAT004", "2024-05-20")])
    assert check_airline_policy(chat.messages, db) == []


def test_economy_flight_change_same_route(db: DeskWorld) -> None:
    chat = Chat()
    _change(chat, "OLD001", "economy", [("HAT004", "2024-05-20")])
    assert check_airline_policy(chat.messages, db) == []


# --- keep_route_and_trip_type -------------------------------------------------------------------


def test_one_way_destination_changed(db: DeskWorld) -> None:
    chat = Chat()
    index = _change(chat, "OLD001", "economy", [("HAT003", "2024-05-20")])
    found = _only(check_airline_policy(chat.messages, db), "keep_route_and_trip_type", index)
    assert "HAT003" in found.excerpt
    assert "OLD001 is a one way JFK→LAX" in found.detail
    assert "the new flights go JFK→ORD" in found.detail


def test_round_trip_kept_with_new_dates(db: DeskWorld) -> None:
    chat = Chat()
    _change(chat, "RT0001", "economy", [("HAT001", "2024-05-21"), ("HAT002", "2024-05-26")])
    assert check_airline_policy(chat.messages, db) == []


def test_round_trip_made_one_way(db: DeskWorld) -> None:
    chat = Chat()
    index = _change(chat, "RT0001", "economy", [("HAT001", "2024-05-21")])
    found = _only(check_airline_policy(chat.messages, db), "keep_route_and_trip_type", index)
    assert "round trip JFK→LAX→JFK" in found.detail
    assert "the new flights go JFK→LAX;" in found.detail


# --- booking: max_passengers and payment_limits ----------------------------------------------


def _book(chat: Chat, passengers: int, payments: list[str], result: Any = None) -> int:
    args = {
        "user_id": "alice_1",
        "origin": "JFK",
        "destination": "LAX",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}],
        "passengers": [
            {"first_name": f"P{i}", "last_name": "Doe", "dob": "1990-01-01"}
            for i in range(passengers)
        ],
        "payment_methods": [{"payment_id": p, "amount": 10} for p in payments],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    booked = _reservation("HATHAT", created="2024-05-15T15:00:00", passengers=passengers)
    return chat.call("book_reservation", args, result or booked)


def test_five_passengers_and_full_payment_mix_allowed(db: DeskWorld) -> None:
    chat = Chat()
    payments = ["certificate_1", "credit_card_1", "gift_card_1", "gift_card_2", "gift_card_3"]
    _book(chat, 5, payments)
    assert check_airline_policy(chat.messages, db) == []


def test_six_passengers(db: DeskWorld) -> None:
    chat = Chat()
    index = _book(chat, 6, ["credit_card_1"])
    found = _only(check_airline_policy(chat.messages, db), "max_passengers", index)
    assert '"passengers"' in found.excerpt
    assert found.detail.startswith("6 passengers in one booking")


@pytest.mark.parametrize(
    ("payments", "fact"),
    [
        (["credit_card_1", "credit_card_2"], "2 credit cards (credit_card_1, credit_card_2)"),
        (["certificate_1", "certificate_2"], "2 certificates (certificate_1, certificate_2)"),
        (
            ["gift_card_1", "gift_card_2", "gift_card_3", "gift_card_4"],
            "4 gift cards (gift_card_1, gift_card_2, gift_card_3, gift_card_4), at most 3",
        ),
    ],
)
def test_payment_limits(db: DeskWorld, payments: list[str], fact: str) -> None:
    chat = Chat()
    index = _book(chat, 1, payments)
    found = _only(check_airline_policy(chat.messages, db), "payment_limits", index)
    assert payments[-1] in found.excerpt
    assert fact in found.detail


def test_failed_booking_is_not_judged(db: DeskWorld) -> None:
    chat = Chat()
    args = {"user_id": "alice_1", "passengers": [{}] * 6, "payment_methods": []}
    chat.call("book_reservation", args, "Error: payment amount does not add up", error=True)
    assert check_airline_policy(chat.messages, db) == []


# --- bags_only_added -----------------------------------------------------------------------------


def _bags(chat: Chat, rid: str, total: int) -> int:
    args = {
        "reservation_id": rid,
        "total_baggages": total,
        "nonfree_baggages": 0,
        "payment_id": "credit_card_1",
    }
    return chat.call(
        "update_reservation_baggages", args, {**RESERVATIONS[rid], "total_baggages": total}
    )


def test_bags_added(db: DeskWorld) -> None:
    chat = Chat()
    _bags(chat, "OLD001", 2)
    _bags(chat, "OLD001", 3)
    assert check_airline_policy(chat.messages, db) == []


def test_bags_removed(db: DeskWorld) -> None:
    chat = Chat()
    index = _bags(chat, "OLD001", 1)
    found = _only(check_airline_policy(chat.messages, db), "bags_only_added", index)
    assert '"total_baggages": 1' in found.excerpt
    assert "total bags set to 1, below the 2 reservation OLD001 already has" in found.detail


def test_bags_removed_after_an_earlier_addition(db: DeskWorld) -> None:
    chat = Chat()
    _bags(chat, "OLD001", 4)
    index = _bags(chat, "OLD001", 3)
    found = _only(check_airline_policy(chat.messages, db), "bags_only_added", index)
    assert "below the 4 reservation OLD001 already has" in found.detail


# --- no_insurance_after_booking -----------------------------------------------------------------


def test_insurance_argument_on_existing_reservation(db: DeskWorld) -> None:
    chat = Chat()
    args = {"reservation_id": "OLD001", "passengers": [], "insurance": "yes"}
    index = chat.call("update_reservation_passengers", args, RESERVATIONS["OLD001"])
    found = _only(check_airline_policy(chat.messages, db), "no_insurance_after_booking", index)
    assert '"insurance": "yes"' in found.excerpt
    assert "existing reservation OLD001, booked with insurance no" in found.detail


def _rebook(chat: Chat, flights: list[tuple[str, str]], insurance: str) -> int:
    args = {
        "user_id": "alice_1",
        "origin": "JFK",
        "destination": "LAX",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": n, "date": d} for n, d in flights],
        "passengers": [{"first_name": "P0", "last_name": "Doe", "dob": "1990-01-01"}],
        "payment_methods": [{"payment_id": "credit_card_1", "amount": 130}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": insurance,
    }
    booked = _reservation(
        "HATHAT", created="2024-05-15T15:00:00", insurance=insurance, flights=flights
    )
    return chat.call("book_reservation", args, booked)


def test_cancel_and_rebook_same_flights_with_insurance(db: DeskWorld) -> None:
    chat = Chat()
    cancel = chat.call("cancel_reservation", {"reservation_id": "NEW001"})
    index = _rebook(chat, [("HAT001", "2024-05-20")], "yes")
    found = _only(check_airline_policy(chat.messages, db), "no_insurance_after_booking", index)
    assert '"insurance": "yes"' in found.excerpt
    assert f"flights of reservation NEW001 (insurance no), cancelled at message {cancel}" in (
        found.detail
    )


@pytest.mark.parametrize(
    ("flights", "insurance"),
    [([("HAT004", "2024-05-20")], "yes"), ([("HAT001", "2024-05-20")], "no")],
)
def test_rebooking_other_flights_or_without_insurance(
    db: DeskWorld, flights: list[tuple[str, str]], insurance: str
) -> None:
    chat = Chat()
    chat.call("cancel_reservation", {"reservation_id": "NEW001"})
    _rebook(chat, flights, insurance)
    assert check_airline_policy(chat.messages, db) == []


# --- compensation -------------------------------------------------------------------------------


def _certificate(chat: Chat, user: str, amount: int) -> int:
    return chat.call(
        "send_certificate",
        {"user_id": user, "amount": amount},
        f"Certificate certificate_3221322 added to user {user} with amount {amount}.",
    )


def test_compensation_for_cancelled_flight_of_regular_member_with_insurance(
    db: DeskWorld,
) -> None:
    db["reservations"]["CXL001"]["insurance"] = "yes"
    chat = Chat()
    chat.user("My flight in CXL001 was cancelled! I want compensation.")
    _certificate(chat, "alice_1", 200)  # $100 x 2 passengers
    assert check_airline_policy(chat.messages, db) == []


def test_compensation_for_delay_after_change(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("My flight in DLY001 is delayed, I want to change it and get compensation.")
    _change(chat, "DLY001", "economy", [("HAT001", "2024-05-20")])  # the delayed flight goes
    _certificate(chat, "bob_2", 100)  # $50 x 2 passengers, gold member
    assert check_airline_policy(chat.messages, db) == []


def test_compensation_for_delay_without_change(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("Flight HAT001 is delayed. I want a voucher.")
    index = _certificate(chat, "bob_2", 100)
    found = _only(check_airline_policy(chat.messages, db), "compensation", index)
    assert found.excerpt == 'send_certificate({"user_id": "bob_2", "amount": 100})'
    assert "DLY001 has a delayed flight (HAT001 on 2024-05-15, status delayed)" in found.detail
    assert "not changed or cancelled" in found.detail


def test_compensation_offered_unasked(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("My flight in CXL001 was cancelled, this is terrible.")
    index = _certificate(chat, "alice_1", 200)
    found = _only(check_airline_policy(chat.messages, db), "compensation", index)
    assert "never asked for compensation" in found.detail


def test_compensation_for_ineligible_user(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("My flight in CXL001 was cancelled, I want compensation.")
    index = _certificate(chat, "alice_1", 200)
    found = _only(check_airline_policy(chat.messages, db), "compensation", index)
    assert (
        "not eligible: regular member, reservation CXL001 has insurance no and cabin economy"
        in found.detail
    )


def test_compensation_wrong_amount(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("DLY001 got delayed; I'll change it. Compensation please.")
    _change(chat, "DLY001", "economy", [("HAT001", "2024-05-20")])
    index = _certificate(chat, "bob_2", 150)
    found = _only(check_airline_policy(chat.messages, db), "compensation", index)
    assert "amount 150 is not what the policy gives for DLY001: $100 ($50 x 2 passengers" in (
        found.detail
    )


def test_compensation_without_any_cancelled_or_delayed_flight(db: DeskWorld) -> None:
    chat = Chat()
    chat.user("My flight was delayed, I want compensation.")
    index = _certificate(chat, "carol_3", 50)
    found = _only(check_airline_policy(chat.messages, db), "compensation", index)
    assert "no flight in user carol_3's reservations (CLEAN1) was cancelled or delayed" in (
        found.detail
    )


# --- τ-bench's real gpt-4o records ----------------------------------------------------------------

TAUBENCH = Path(__file__).resolve().parents[3].parent / "shared" / "taubench"


def _messages(traj: list[dict[str, Any]]) -> list[Message]:
    """An OpenAI-format τ-bench trajectory as messages; a result starting "Error" failed."""
    out = []
    for m in traj:
        content = m.get("content") or ""
        if m["role"] == "assistant":
            calls = [
                ToolCall(
                    id=c["id"],
                    name=c["function"]["name"],
                    arguments=c["function"].get("arguments") or "{}",
                )
                for c in m.get("tool_calls") or []
            ]
            out.append(Message(role="assistant", content=content, tool_calls=calls))
        elif m["role"] == "tool":
            out.append(
                Message(
                    role="tool",
                    content=content,
                    tool_call_id=m.get("tool_call_id"),
                    tool_name=m.get("name"),
                    error=content.startswith("Error"),
                )
            )
        else:
            out.append(Message(role=m["role"], content=content))
    return out


@pytest.mark.reference("taubench")
def test_real_gpt4o_records() -> None:
    db = DeskWorld(
        {
            "flights": json.loads((TAUBENCH / "airline" / "flights.json").read_text()),
            "reservations": json.loads((TAUBENCH / "airline" / "reservations.json").read_text()),
            "users": json.loads(
                (TAUBENCH / "trajectories" / "airline-2024-11" / "users.json").read_text()
            ),
        }
    )
    records = json.loads((TAUBENCH / "trajectories" / "gpt-4o-airline.json").read_text())
    assert len(records) == 200
    records_breaking: Counter[str] = Counter()
    calls_breaking: Counter[str] = Counter()
    quotes: dict[str, str] = {}
    by_record: dict[tuple[int, int], list[Violation]] = {}
    for record in records:
        messages = _messages(record["traj"])
        found = check_airline_policy(messages, db)
        by_record[(record["task_id"], record["trial"])] = found
        for v in found:
            assert v.rule in AIRLINE_RULES
            assert v.tool_call_id in [c.id for c in messages[v.message_index].tool_calls]
        if record["reward"] != 1.0:
            continue
        for v in found:
            calls_breaking[v.rule] += 1
            quotes.setdefault(v.rule, f"task {record['task_id']}: {v.excerpt} [{v.detail}]")
        records_breaking.update({v.rule for v in found})
    print("\nreward-1.0 records (calls) breaking each airline rule:")
    for rule in AIRLINE_RULES:
        print(
            f"  {rule}: {records_breaking[rule]} ({calls_breaking[rule]})  {quotes.get(rule, '')}"
        )
    # Task 27 trial 1 (reward 1) cancels NQNU5R, whose flights landed on May 13 and 14.
    flown = [v for v in by_record[(27, 1)] if v.rule == "cancellation_eligibility"]
    assert len(flown) == 1 and "NQNU5R" in flown[0].excerpt
    assert "HAT214 on 2024-05-13 (status landed)" in flown[0].detail
