"""The 14 airline service-desk tools, faithful to τ-bench's airline tools.

Names, arguments, checks (and the order they run in), error texts and every
change to the database follow τ-bench (sierra-research/tau-bench,
``tau_bench/envs/airline/tools``), so that replaying a τ-bench task's gold
actions gives the database τ-bench's own code gives, hash for hash. That
includes τ-bench's quirks, which a scorer author must know:

- A new reservation's id is not random: the first of ``HATHAT``, ``HATHAU``,
  ``HATHAV`` not yet in the database (a fourth booking replaces ``HATHAV``), and
  it is always created at ``2024-05-15T15:00:00``. Booking never changes seat counts.
- Amounts keep the types the agent sent (``250`` and ``250.0`` hash differently)
  and are never rounded; gift-card balances (``amount``) just go up and down.
- A certificate used in a booking is deleted whatever part of it was used; a
  certificate cannot pay for a change. `send_certificate` adds
  ``certificate_3221322`` (then ``…323``, ``…324``).
- Changing flights keeps the old price of a flight kept in the same cabin, prices
  every other flight at its current price, charges or refunds the difference to one payment
  method (a gift card's balance goes up on a refund) and never changes the
  reservation's ``cabin``. Cancelling appends a negated copy of every payment
  line, refunds nothing to gift cards, and can be repeated.
- `get_reservation_details` answers an unknown id with "user not found".

The tool and argument descriptions are this project's own wording; they tell an
agent what τ-bench's descriptions tell it, and no more. Arguments are checked
against their JSON schema before a tool runs (τ-bench checks nothing), so a
malformed call is refused here where τ-bench might have gone on; every
well-formed call behaves as in τ-bench, including one crash that half-applies a
booking (a certificate named twice). `calculate`, `think` and
`transfer_to_human_agents` are the retail tools of the same names (an
`AirlineWorld` is a `RetailWorld`); `calculate` evaluates arithmetic without
``eval``.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from deedbench.benchmarks.airline.world import AirlineWorld, Record
from deedbench.benchmarks.retail.tools import calculate, think, transfer_to_human_agents
from deedbench.engine import ToolError, tool

__all__ = [
    "AIRLINE_TOOLS",
    "AIRLINE_WRITE_TOOLS",
    "AIRPORTS",
    "BOOKING_TIME",
    "CERTIFICATE_IDS",
    "RESERVATION_IDS",
    "FlightSegment",
    "Passenger",
    "PaymentShare",
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

Cabin = Literal["basic_economy", "economy", "business"]
FlightType = Literal["one_way", "round_trip"]
YesNo = Literal["yes", "no"]


# --- argument shapes --------------------------------------------------------------------------


class _JsonObject(dict[str, Any]):
    """A JSON-object argument with required keys of given types; other keys are kept.

    τ-bench stores these objects as the agent sent them (extra keys, key order and
    int-versus-float included), so they are validated in place rather than rebuilt.
    Each subclass lists its keys as ``{name: (JSON type, description)}``.
    """

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {}

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        any_object = core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
        return core_schema.no_info_after_validator_function(cls._check, any_object)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "object",
            "properties": {
                name: {"type": kind, "description": text} for name, (kind, text) in cls.KEYS.items()
            },
            "required": list(cls.KEYS),
        }

    @classmethod
    def _check(cls, value: dict[str, Any]) -> _JsonObject:
        for name, (kind, _) in cls.KEYS.items():
            if name not in value:
                raise ValueError(f"missing required key '{name}'")
            item = value[name]
            if kind == "string" and not isinstance(item, str):
                raise ValueError(f"'{name}' must be a string")
            if kind == "number" and (isinstance(item, bool) or not isinstance(item, int | float)):
                raise ValueError(f"'{name}' must be a number")
        return cls(value)


class FlightSegment(_JsonObject):
    """One flight of a reservation: its number and date."""

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        "flight_number": ("string", "The flight's number, for example 'HAT417'."),
        "date": (
            "string",
            "The day this flight departs, written YYYY-MM-DD, for example '2024-05-18'.",
        ),
    }


class Passenger(_JsonObject):
    """One passenger of a reservation."""

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        "first_name": ("string", "The passenger's given name, for example 'Ines'."),
        "last_name": ("string", "The passenger's family name, for example 'Okafor'."),
        "dob": (
            "string",
            "The passenger's birth date, written YYYY-MM-DD, for example '1987-11-23'.",
        ),
    }


class PaymentShare(_JsonObject):
    """One payment method of a booking and the amount it pays."""

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        "payment_id": (
            "string",
            "Id of a payment method saved in the user's profile, for example "
            "'credit_card_4402913', 'gift_card_4402913' or 'certificate_4402913'.",
        ),
        "amount": ("number", "How much this payment method is charged."),
    }


def _plain(objects: list[Any]) -> list[Any]:
    """The validated objects as plain dicts, as τ-bench stores them."""
    return [dict(item) if isinstance(item, dict) else item for item in objects]


# --- lookups shared by the tools ------------------------------------------------------------


def _reservation(world: AirlineWorld, reservation_id: str) -> Record:
    reservation = world.get("reservations", reservation_id)
    if reservation is None:
        raise ToolError("reservation not found")
    return reservation


def _bookable(world: AirlineWorld, segment: dict[str, Any], cabin: str, seats: int) -> Record:
    """The flight of `segment`, checked bookable on its date for `seats` passengers."""
    number, date = segment["flight_number"], segment["date"]
    flight = world.get("flights", number)
    if flight is None:
        raise ToolError(f"flight {number} not found")
    if date not in flight["dates"]:
        raise ToolError(f"flight {number} not found on date {date}")
    on_date = flight["dates"][date]
    if on_date["status"] != "available":
        raise ToolError(f"flight {number} not available on date {date}")
    if on_date["available_seats"][cabin] < seats:
        raise ToolError(f"not enough seats on flight {number}")
    return flight


def _priced(segment: dict[str, Any], price: Any, origin: str, destination: str) -> Record:
    """A copy of the agent's segment with τ-bench's three added keys (the agent's keys first)."""
    priced = dict(segment)
    priced["price"] = price
    priced["origin"] = origin
    priced["destination"] = destination
    return priced


def _change_payment(world: AirlineWorld, reservation: Record, payment_id: str, price: Any) -> Any:
    """Check a change's payment method; returns it, or refuses certificates and thin gift cards."""
    user = world.get("users", reservation["user_id"])
    if user is None or payment_id not in user["payment_methods"]:
        raise ToolError("payment method not found")
    method = user["payment_methods"][payment_id]
    if method["source"] == "certificate":
        raise ToolError("certificate cannot be used to update reservation")
    if method["source"] == "gift_card" and method["amount"] < price:
        raise ToolError("gift card balance is not enough")
    return method


def _take_from_gift_card(world: AirlineWorld, user_id: str, payment_id: str, amount: Any) -> None:
    """Subtract `amount` from a gift card's balance, unrounded (a negative amount refunds)."""
    if type(amount) is int and amount == 0:
        return  # τ-bench subtracts 0, which changes nothing; leave the record untouched
    method = world.for_update("users", user_id)["payment_methods"][payment_id]
    method["amount"] -= amount


# --- reading tools ----------------------------------------------------------------------------


@tool
def get_user_details(world: AirlineWorld, user_id: str) -> str:
    """Look up a user's profile.

    Args:
        user_id: The user's id, for example 'lena_park_2047'.
    """
    user = world.get("users", user_id)
    if user is None:
        raise ToolError("user not found")
    return json.dumps(user)


@tool
def get_reservation_details(world: AirlineWorld, reservation_id: str) -> str:
    """Look up a reservation.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
    """
    reservation = world.get("reservations", reservation_id)
    if reservation is None:
        raise ToolError("user not found")  # sic: τ-bench's text for an unknown reservation
    return json.dumps(reservation)


@tool
def list_all_airports(world: AirlineWorld) -> str:
    """Return every airport code together with the city it serves."""
    return json.dumps(AIRPORTS)


@tool
def search_direct_flight(world: AirlineWorld, origin: str, destination: str, date: str) -> str:
    """Find nonstop flights from one airport to another on a given day.

    Args:
        origin: Three-letter code of the departure airport, for example 'ORD'.
        destination: Three-letter code of the arrival airport, for example 'BOS'.
        date: The travel day, written YYYY-MM-DD, for example '2024-05-18'.
    """
    results = []
    for _, flight in world.items("flights"):
        if flight["origin"] != origin or flight["destination"] != destination:
            continue
        on_date = flight["dates"].get(date)
        if on_date is not None and on_date["status"] == "available":
            results.append(_flight_on(flight, on_date))
    return json.dumps(results)


@tool
def search_onestop_flight(world: AirlineWorld, origin: str, destination: str, date: str) -> str:
    """Find trips with exactly one connection from one airport to another, leaving on a
    given day.

    Args:
        origin: Three-letter code of the departure airport, for example 'ORD'.
        destination: Three-letter code of the final arrival airport, for example 'BOS'.
        date: The day the first flight departs, written YYYY-MM-DD, for example '2024-05-18'.
    """
    flights = [flight for _, flight in world.items("flights")]
    results = []
    for first in flights:
        if first["origin"] != origin:
            continue
        for second in flights:
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            arrival = first["scheduled_arrival_time_est"]
            second_date = _next_day(date) if "+1" in arrival else date
            if arrival > second["scheduled_departure_time_est"]:
                continue  # τ-bench compares the time strings as they are
            if date not in first["dates"] or second_date not in second["dates"]:
                continue
            if (
                first["dates"][date]["status"] != "available"
                or second["dates"][second_date]["status"] != "available"
            ):
                continue
            leg1 = _flight_on(first, first["dates"][date])
            leg1["date"] = date
            # τ-bench shows the second flight's status, seats and prices on the FIRST
            # flight's date (and fails when that date is unknown), then its real date.
            if date not in second["dates"]:
                raise ToolError(repr(date))
            leg2 = _flight_on(second, second["dates"][date])
            leg2["date"] = second_date
            results.append([leg1, leg2])
    return json.dumps(results)


def _flight_on(flight: Record, on_date: Record) -> Record:
    """A flight's fields without its calendar, followed by its fields on one date."""
    shown = {key: value for key, value in flight.items() if key != "dates"}
    shown.update(on_date)
    return shown


def _next_day(date: str) -> str:
    """τ-bench's next day: May, day not zero-padded ('2024-05-05' gives '2024-05-6')."""
    try:
        return f"2024-05-{int(date[-2:]) + 1}"
    except ValueError as exc:
        raise ToolError(str(exc)) from None


# --- writing tools ----------------------------------------------------------------------------


@tool(writes=True)
def book_reservation(
    world: AirlineWorld,
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
    user = world.get("users", user_id)
    if user is None:
        raise ToolError("user not found")
    reservation_id = next(
        (rid for rid in RESERVATION_IDS if world.get("reservations", rid) is None),
        RESERVATION_IDS[-1],
    )
    seats = len(passengers)
    booked = []
    total_price: Any = 0
    for segment in flights:
        flight = _bookable(world, segment, cabin, seats)
        price = flight["dates"][segment["date"]]["prices"][cabin]
        booked.append(_priced(segment, price, flight["origin"], flight["destination"]))
        total_price += price * seats
    if insurance == "yes":
        total_price += INSURANCE_FEE * seats
    total_price += BAG_FEE * nonfree_baggages

    methods = user["payment_methods"]
    for share in payment_methods:
        payment_id, amount = share["payment_id"], share["amount"]
        if payment_id not in methods:
            raise ToolError(f"payment method {payment_id} not found")
        method = methods[payment_id]
        if method["source"] in ("gift_card", "certificate") and method["amount"] < amount:
            raise ToolError(f"not enough balance in payment method {payment_id}")
    paid = sum(share["amount"] for share in payment_methods)
    if paid != total_price:
        raise ToolError(
            f"payment amount does not add up, total price is {total_price}, but paid {paid}"
        )

    _pay_for_booking(world, user_id, payment_methods)
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": booked,
        "passengers": _plain(passengers),
        "payment_history": _plain(payment_methods),
        "created_at": BOOKING_TIME,
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    world.put("reservations", reservation_id, reservation)
    world.for_update("users", user_id)["reservations"].append(reservation_id)
    return json.dumps(reservation)


def _pay_for_booking(world: AirlineWorld, user_id: str, shares: list[PaymentShare]) -> None:
    """Charge gift cards and use up certificates, in order, as τ-bench does.

    A certificate named twice passed every check, but τ-bench fails on its second
    mention after the first deleted it: what was charged by then stays charged, and
    the booking is not made. This does the same.
    """
    for share in shares:
        payment_id = share["payment_id"]
        methods = world.for_update("users", user_id)["payment_methods"]
        if payment_id not in methods:
            raise ToolError(repr(payment_id))
        source = methods[payment_id]["source"]
        if source == "gift_card":
            _take_from_gift_card(world, user_id, payment_id, share["amount"])
        elif source == "certificate":
            del methods[payment_id]


@tool(writes=True)
def cancel_reservation(world: AirlineWorld, reservation_id: str) -> str:
    """Cancel a reservation in full.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
    """
    _reservation(world, reservation_id)
    reservation = world.for_update("reservations", reservation_id)
    refunds = [
        {"payment_id": payment["payment_id"], "amount": -payment["amount"]}
        for payment in reservation["payment_history"]
    ]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return json.dumps(reservation)


@tool(writes=True)
def update_reservation_flights(
    world: AirlineWorld,
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
    reservation = _reservation(world, reservation_id)
    seats = len(reservation["passengers"])
    same_cabin = cabin == reservation["cabin"]
    new_flights = []
    total_price: Any = 0
    for segment in flights:
        kept = _booked_flight(reservation, segment) if same_cabin else None
        if kept is not None:
            priced = _priced(segment, kept["price"], kept["origin"], kept["destination"])
        else:
            flight = _bookable(world, segment, cabin, seats)
            price = flight["dates"][segment["date"]]["prices"][cabin]
            priced = _priced(segment, price, flight["origin"], flight["destination"])
        new_flights.append(priced)
        total_price += priced["price"] * seats
    total_price -= sum(old["price"] for old in reservation["flights"]) * seats

    method = _change_payment(world, reservation, payment_id, total_price)
    if method["source"] == "gift_card":
        _take_from_gift_card(world, reservation["user_id"], payment_id, total_price)
    reservation = world.for_update("reservations", reservation_id)
    reservation["flights"] = new_flights
    if total_price != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total_price})
    return json.dumps(reservation)


def _booked_flight(reservation: Record, segment: dict[str, Any]) -> Record | None:
    """The reservation's first flight with the segment's number and date, if any."""
    for old in reservation["flights"]:
        if old["flight_number"] == segment["flight_number"] and old["date"] == segment["date"]:
            return old
    return None


@tool(writes=True)
def update_reservation_baggages(
    world: AirlineWorld,
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
    reservation = _reservation(world, reservation_id)
    total_price = BAG_FEE * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    method = _change_payment(world, reservation, payment_id, total_price)
    reservation = world.for_update("reservations", reservation_id)
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    if method["source"] == "gift_card":
        _take_from_gift_card(world, reservation["user_id"], payment_id, total_price)
    if total_price != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total_price})
    return json.dumps(reservation)


@tool(writes=True)
def update_reservation_passengers(
    world: AirlineWorld, reservation_id: str, passengers: list[Passenger]
) -> str:
    """Change the passenger details of a reservation.

    Args:
        reservation_id: The reservation's id, for example 'Q7HX2C'.
        passengers: The travellers, one object per passenger.
    """
    reservation = _reservation(world, reservation_id)
    if len(passengers) != len(reservation["passengers"]):
        raise ToolError("number of passengers does not match")
    reservation = world.for_update("reservations", reservation_id)
    reservation["passengers"] = _plain(passengers)
    return json.dumps(reservation)


@tool(writes=True)
def send_certificate(world: AirlineWorld, user_id: str, amount: int | float) -> str:
    """Issue a travel certificate to a user. Use with caution!

    Args:
        user_id: The id of the user who receives the certificate, for example
            'lena_park_2047'.
        amount: The value of the certificate.
    """
    user = world.get("users", user_id)
    if user is None:
        raise ToolError("user not found")
    payment_id = next((c for c in CERTIFICATE_IDS if c not in user["payment_methods"]), None)
    if payment_id is None:
        # τ-bench returns nothing here and changes nothing.
        raise ToolError(f"user {user_id} already has every certificate this tool can send")
    methods = world.for_update("users", user_id)["payment_methods"]
    methods[payment_id] = {"source": "certificate", "amount": amount, "id": payment_id}
    return f"Certificate {payment_id} added to user {user_id} with amount {amount}."


AIRLINE_TOOLS = (
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
)
"""All 14 tools, reading tools first, in a stable order."""

AIRLINE_WRITE_TOOLS = frozenset(t.name for t in AIRLINE_TOOLS if t.writes)
"""The 6 tools that change the database."""
