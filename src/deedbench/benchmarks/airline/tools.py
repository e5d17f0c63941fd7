"""The 14 airline service-desk tools: τ-bench's airline tools, call for call.

Each tool does what τ-bench's does (sierra-research/tau-bench,
``tau_bench/envs/airline/tools``), in the same order, on the same values, for any
arguments: an error τ-bench returns is raised as a `ToolError` with its text, and
anything else goes wrong as it goes wrong in τ-bench (see `retail.tools` and
`TauToolBox`). That includes τ-bench's quirks, which a scorer author must know:

- A new reservation's id is not random: the first of ``HATHAT``, ``HATHAU``,
  ``HATHAV`` not yet in the database (a fourth booking replaces ``HATHAV``), and
  it is always created at ``2024-05-15T15:00:00``. Booking never changes seat counts.
- Amounts keep the types the agent sent (``250`` and ``250.0`` hash differently)
  and are never rounded; gift-card balances (``amount``) just go up and down.
- A certificate used in a booking is deleted whatever part of it was used; a
  certificate cannot pay for a change. `send_certificate` adds
  ``certificate_3221322`` (then ``…323``, ``…324``), and for a fourth returns
  nothing, which makes τ-bench's run fail.
- A certificate named twice in one booking passes every check, then fails on its
  second mention after the first deleted it: what was charged by then stays
  charged, and the booking is not made.
- Changing flights keeps the old price of a flight kept in the same cabin, prices
  every other flight at its current price, charges or refunds the difference to one
  payment method (a gift card's balance goes up on a refund) and never changes the
  reservation's ``cabin``. Cancelling appends a negated copy of every payment
  line, refunds nothing to gift cards, and can be repeated.
- A one-stop search shows the second flight's status, seats and prices on the
  first flight's date (and fails when that date is unknown); the next day is
  written without zero padding (``2024-05-6``).
- `get_reservation_details` answers an unknown id with "user not found".

The tool and argument descriptions are this project's own wording; they tell an
agent what τ-bench's descriptions tell it, and no more. `calculate`, `think` and
`transfer_to_human_agents` are the desk's neutral tools.
"""

from __future__ import annotations

import json
from copy import deepcopy
from typing import Any

from deedbench.benchmarks.airline.types import (
    Cabin,
    FlightSegment,
    FlightType,
    Passenger,
    PaymentShare,
    YesNo,
)
from deedbench.benchmarks.servicedesk import (
    DeskWorld,
    calculate,
    taubench_named,
    think,
    transfer_to_human_agents,
)
from deedbench.engine import tool
from deedbench.errors import ToolError

__all__ = [
    "AIRLINE_TOOLS",
    "AIRLINE_WRITE_TOOLS",
    "AIRPORTS",
    "BAG_FEE",
    "BOOKING_TIME",
    "CERTIFICATE_IDS",
    "INSURANCE_FEE",
    "RESERVATION_IDS",
]

RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""The ids τ-bench gives new reservations, in order (it assumes at most three per task)."""

CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""The ids τ-bench gives certificates it sends, in order."""

BOOKING_TIME = "2024-05-15T15:00:00"
"""The ``created_at`` of every new reservation: the policy's "current time"."""

AIRPORTS = {
    "SFO": "San Francisco",
    "JFK": "New York",
    "LAX": "Los Angeles",
    "ORD": "Chicago",
    "DFW": "Dallas",
    "DEN": "Denver",
    "SEA": "Seattle",
    "ATL": "Atlanta",
    "MIA": "Miami",
    "BOS": "Boston",
    "PHX": "Phoenix",
    "IAH": "Houston",
    "LAS": "Las Vegas",
    "MCO": "Orlando",
    "EWR": "Newark",
    "CLT": "Charlotte",
    "MSP": "Minneapolis",
    "DTW": "Detroit",
    "PHL": "Philadelphia",
    "LGA": "LaGuardia",
}
"""The airports τ-bench lists (a fixed list, not derived from the flights), in its order."""

BAG_FEE = 50
INSURANCE_FEE = 30

# --- reading tools ----------------------------------------------------------------------------


@tool
def get_user_details(data: DeskWorld, user_id: str) -> str:
    """Look up a user's profile.

    Args:
        user_id: The user's id, for example 'lena_park_2047'.
    """
    users = data["users"]
    if user_id in users:
        return json.dumps(users[user_id])
    raise ToolError("user not found")


@tool
def get_reservation_details(data: DeskWorld, reservation_id: str) -> str:
    """Look up a reservation.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
    """
    reservations = data["reservations"]
    if reservation_id in reservations:
        return json.dumps(reservations[reservation_id])
    raise ToolError("user not found")  # sic: τ-bench's text for an unknown reservation


@tool
def list_all_airports(data: DeskWorld) -> str:
    """Return every airport code together with the city it serves."""
    return json.dumps(AIRPORTS)


@tool
def search_direct_flight(data: DeskWorld, origin: str, destination: str, date: str) -> str:
    """Find nonstop flights from one airport to another on a given day.

    Args:
        origin: Three-letter code of the departure airport, for example 'ORD'.
        destination: Three-letter code of the arrival airport, for example 'BOS'.
        date: The travel day, written YYYY-MM-DD, for example '2024-05-18'.
    """
    results = []
    for flight in data["flights"].values():
        if flight["origin"] == origin and flight["destination"] == destination:  # noqa: SIM102
            if date in flight["dates"] and flight["dates"][date]["status"] == "available":
                results.append(_without_dates(flight))
                results[-1].update(flight["dates"][date])
    return json.dumps(results)


@tool
def search_onestop_flight(data: DeskWorld, origin: str, destination: str, date: str) -> str:
    """Find trips with exactly one connection from one airport to another, leaving on a
    given day.

    Args:
        origin: Three-letter code of the departure airport, for example 'ORD'.
        destination: Three-letter code of the final arrival airport, for example 'BOS'.
        date: The day the first flight departs, written YYYY-MM-DD, for example '2024-05-18'.
    """
    flights = data["flights"]
    results = []
    for first in flights.values():
        if first["origin"] != origin:
            continue
        for second in flights.values():
            if not (
                second["destination"] == destination and first["destination"] == second["origin"]
            ):
                continue
            arrival = first["scheduled_arrival_time_est"]
            second_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
            if arrival > second["scheduled_departure_time_est"]:
                continue  # τ-bench compares the time strings as they are
            if not (date in first["dates"] and second_date in second["dates"]):
                continue
            if (
                first["dates"][date]["status"] == "available"
                and second["dates"][second_date]["status"] == "available"
            ):
                leg1 = _without_dates(first)
                leg1.update(first["dates"][date])
                leg1["date"] = date
                leg2 = _without_dates(second)
                leg2.update(second["dates"][date])  # sic: the first flight's date
                leg2["date"] = second_date
                results.append([leg1, leg2])
    return json.dumps(results)


def _without_dates(flight: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in flight.items() if key != "dates"}


# --- writing tools ----------------------------------------------------------------------------


@tool(kind="write", keys=("origin", "destination"))
def book_reservation(
    data: DeskWorld,
    user_id: str,
    origin: str,
    destination: str,
    flight_type: FlightType,
    cabin: Cabin,
    flights: list[FlightSegment],
    passengers: list[Passenger],
    payment_methods: list[PaymentShare],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: YesNo,
) -> str:
    """Create a new reservation for a user.

    Args:
        user_id: The id of the user making the booking, for example 'lena_park_2047'.
        origin: Three-letter IATA code of the trip's starting airport, for example 'ORD'.
        destination: Three-letter IATA code of the trip's destination airport, for
            example 'BOS'.
        flight_type: The kind of trip: 'one_way' or 'round_trip'.
        cabin: The cabin class: 'basic_economy', 'economy' or 'business'.
        flights: The flights of the trip, one object per flight.
        passengers: The travellers, one object per passenger.
        payment_methods: How the booking is paid, one object per payment method used.
        total_baggages: How many checked bags the reservation includes in all.
        nonfree_baggages: How many of the reservation's checked bags must be paid for.
        insurance: Whether travel insurance is added: 'yes' or 'no'.
    """
    reservations, users = data["reservations"], data["users"]
    if user_id not in users:
        raise ToolError("user not found")
    user = users[user_id]
    reservation_id = next(
        (rid for rid in RESERVATION_IDS[:-1] if rid not in reservations), RESERVATION_IDS[-1]
    )
    reservation: dict[str, Any] = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": deepcopy(flights),
        "passengers": passengers,
        "payment_history": payment_methods,
        "created_at": BOOKING_TIME,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    total_price: Any = 0
    for flight in reservation["flights"]:
        flight_data = _bookable(data, flight, cabin, passengers)
        flight["price"] = flight_data["dates"][flight["date"]]["prices"][cabin]
        flight["origin"] = flight_data["origin"]
        flight["destination"] = flight_data["destination"]
        total_price += flight["price"] * len(passengers)
    if insurance == "yes":
        total_price += INSURANCE_FEE * len(passengers)
    total_price += BAG_FEE * nonfree_baggages
    methods = user["payment_methods"]
    for share in payment_methods:
        payment_id, amount = share["payment_id"], share["amount"]
        if payment_id not in methods:
            raise ToolError(f"payment method {payment_id} not found")
        if methods[payment_id]["source"] in ["gift_card", "certificate"]:  # noqa: SIM102
            if methods[payment_id]["amount"] < amount:
                raise ToolError(f"not enough balance in payment method {payment_id}")
    if sum(share["amount"] for share in payment_methods) != total_price:
        paid = sum(share["amount"] for share in payment_methods)
        raise ToolError(
            f"payment amount does not add up, total price is {total_price}, but paid {paid}"
        )
    for share in payment_methods:
        payment_id, amount = share["payment_id"], share["amount"]
        if methods[payment_id]["source"] == "gift_card":
            methods[payment_id]["amount"] -= amount
        elif methods[payment_id]["source"] == "certificate":
            del methods[payment_id]
    reservations[reservation_id] = reservation
    user["reservations"].append(reservation_id)
    return json.dumps(reservation)


def _bookable(data: DeskWorld, flight: dict[str, Any], cabin: str, passengers: Any) -> Any:
    """The flight a segment names, checked bookable on its date for the passengers."""
    flight_number = flight["flight_number"]
    if flight_number not in data["flights"]:
        raise ToolError(f"flight {flight_number} not found")
    flight_data = data["flights"][flight_number]
    if flight["date"] not in flight_data["dates"]:
        raise ToolError(f"flight {flight_number} not found on date {flight['date']}")
    on_date = flight_data["dates"][flight["date"]]
    if on_date["status"] != "available":
        raise ToolError(f"flight {flight_number} not available on date {flight['date']}")
    if on_date["available_seats"][cabin] < len(passengers):
        raise ToolError(f"not enough seats on flight {flight_number}")
    return flight_data


@tool(kind="write", keys=("reservation_id",))
def cancel_reservation(data: DeskWorld, reservation_id: str) -> str:
    """Cancel a reservation in full.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
    """
    reservations = data["reservations"]
    if reservation_id not in reservations:
        raise ToolError("reservation not found")
    reservation = reservations[reservation_id]
    refunds = [
        {"payment_id": payment["payment_id"], "amount": -payment["amount"]}
        for payment in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return json.dumps(reservation)


@tool(kind="write", keys=("reservation_id",))
def update_reservation_flights(
    data: DeskWorld,
    reservation_id: str,
    cabin: Cabin,
    flights: list[FlightSegment],
    payment_id: str,
) -> str:
    """Change the flights of a reservation.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
        cabin: The cabin class: 'basic_economy', 'economy' or 'business'.
        flights: Every flight the reservation should hold after the change, one object
            per flight. List the flights that stay the same too, not only the new ones.
        payment_id: Id of a payment method saved in the user's profile, for example
            'credit_card_4402913', 'gift_card_4402913' or 'certificate_4402913'.
    """
    users, reservations = data["users"], data["reservations"]
    if reservation_id not in reservations:
        raise ToolError("reservation not found")
    reservation = reservations[reservation_id]
    total_price: Any = 0
    flights = deepcopy(flights)
    for flight in flights:
        kept = [
            old
            for old in reservation["flights"]
            if old["flight_number"] == flight["flight_number"]
            and old["date"] == flight["date"]
            and cabin == reservation["cabin"]
        ]
        if kept:  # a flight kept in the same cabin keeps its price
            total_price += kept[0]["price"] * len(reservation["passengers"])
            flight["price"] = kept[0]["price"]
            flight["origin"] = kept[0]["origin"]
            flight["destination"] = kept[0]["destination"]
            continue
        flight_data = _bookable(data, flight, cabin, reservation["passengers"])
        flight["price"] = flight_data["dates"][flight["date"]]["prices"][cabin]
        flight["origin"] = flight_data["origin"]
        flight["destination"] = flight_data["destination"]
        total_price += flight["price"] * len(reservation["passengers"])
    total_price -= sum(old["price"] for old in reservation["flights"]) * len(
        reservation["passengers"]
    )
    method = _change_payment(users, reservation, payment_id, total_price)
    if method["source"] == "gift_card":
        method["amount"] -= total_price
    reservation["flights"] = flights
    if total_price != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total_price})
    return json.dumps(reservation)


def _change_payment(users: Any, reservation: dict[str, Any], payment_id: str, price: Any) -> Any:
    """A change's payment method, refusing certificates and thin gift cards."""
    if payment_id not in users[reservation["user_id"]]["payment_methods"]:
        raise ToolError("payment method not found")
    method = users[reservation["user_id"]]["payment_methods"][payment_id]
    if method["source"] == "certificate":
        raise ToolError("certificate cannot be used to update reservation")
    if method["source"] == "gift_card" and method["amount"] < price:
        raise ToolError("gift card balance is not enough")
    return method


@tool(kind="write", keys=("reservation_id",))
def update_reservation_baggages(
    data: DeskWorld,
    reservation_id: str,
    total_baggages: int,
    nonfree_baggages: int,
    payment_id: str,
) -> str:
    """Change the checked-bag counts of a reservation.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
        total_baggages: How many checked bags the reservation should include in all.
        nonfree_baggages: How many of the reservation's checked bags should be paid for.
        payment_id: Id of a payment method saved in the user's profile, for example
            'credit_card_4402913', 'gift_card_4402913' or 'certificate_4402913'.
    """
    users, reservations = data["users"], data["reservations"]
    if reservation_id not in reservations:
        raise ToolError("reservation not found")
    reservation = reservations[reservation_id]
    total_price = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    method = _change_payment(users, reservation, payment_id, total_price)
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    if method["source"] == "gift_card":
        method["amount"] -= total_price
    if total_price != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total_price})
    return json.dumps(reservation)


@tool(kind="write", keys=("reservation_id",))
def update_reservation_passengers(
    data: DeskWorld, reservation_id: str, passengers: list[Passenger]
) -> str:
    """Change the passenger details of a reservation.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
        passengers: The travellers, one object per passenger.
    """
    reservations = data["reservations"]
    if reservation_id not in reservations:
        raise ToolError("reservation not found")
    reservation = reservations[reservation_id]
    if len(passengers) != len(reservation["passengers"]):
        raise ToolError("number of passengers does not match")
    reservation["passengers"] = passengers
    return json.dumps(reservation)


@tool(kind="write", keys=("amount",))
def send_certificate(data: DeskWorld, user_id: str, amount: int | float) -> str | None:
    """Issue a travel certificate to a user. Use with caution!

    Args:
        user_id: The id of the user who receives the certificate, for example
            'lena_park_2047'.
        amount: The value of the certificate.
    """
    users = data["users"]
    if user_id not in users:
        raise ToolError("user not found")
    user = users[user_id]
    for payment_id in CERTIFICATE_IDS:
        if payment_id not in user["payment_methods"]:
            user["payment_methods"][payment_id] = {
                "source": "certificate",
                "amount": amount,
                "id": payment_id,
            }
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    return None  # τ-bench's answer to a fourth certificate, which fails its run


AIRLINE_TOOLS = taubench_named(
    "airline",
    (
        get_user_details,
        get_reservation_details,
        list_all_airports,
        search_direct_flight,
        search_onestop_flight,
        calculate,
        think,
        transfer_to_human_agents,
        book_reservation,
        cancel_reservation,
        update_reservation_flights,
        update_reservation_baggages,
        update_reservation_passengers,
        send_certificate,
    ),
)
"""All 14 tools, reading tools first, in a stable order."""

AIRLINE_WRITE_TOOLS = frozenset(t.name for t in AIRLINE_TOOLS if t.writes)
"""The 6 tools that change the database."""
