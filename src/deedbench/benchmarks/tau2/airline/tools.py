"""τ²'s airline tools (``AirlineTools``) over deedbench's copy-on-write database.

Each tool takes τ²'s code path step by step, because τ² runs a call without
checking its arguments and an exception is its result: the same checks in the same
order, the same messages, the same arithmetic (ints and floats as τ²'s fall out),
and what τ² changes before it raises stays changed here too. Arguments a τ² tool
turns into models (flights, passengers, payments) are turned into deedbench's
copies of those models, so their validation errors read as τ²'s; values τ²
assigns to a record without validation (a reservation's baggages, cabin,
passengers) are stored as they came, as τ²'s dump then writes them.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from pydantic import BaseModel

from deedbench.benchmarks.servicedesk.world import Record
from deedbench.benchmarks.tau2.convention import Dump
from deedbench.benchmarks.tau2.toolkit import Toolkit, calculate
from deedbench.engine import tool

from .schema import (
    CabinClass,
    Certificate,
    DirectFlight,
    FlightDB,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
)

__all__ = ["AirlineTools"]

_NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""τ²'s ids for new reservations: the first not yet taken (at most three per task)."""
_NEW_PAYMENT_NUMBERS = (3221322, 3221323, 3221324)
"""τ²'s numbers for new certificates (``certificate_<n>``)."""
_NOW = "2024-05-15T15:00:00"
"""τ²'s fixed current time, a new reservation's ``created_at``."""

_AIRPORTS = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)


def _stored(value: Any) -> Any:
    """What τ² keeps when it assigns `value` to a record without validation: models as
    their dumps (as its dump writes them), anything else as it came (copied)."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, list):
        return [_stored(item) for item in value]
    return deepcopy(value)


class AirlineTools(Toolkit):
    """The airline desk's tools, as τ²'s ``AirlineTools``."""

    tau2_module = "tau2.domains.airline.tools"
    schema = FlightDB
    tables = frozenset({"flights", "users", "reservations"})

    # --- look-ups, failing as τ²'s do --------------------------------------------------

    def _get_user(self, user_id: str) -> Record:
        users = self.db["users"]
        if user_id not in users:
            raise ValueError(f"User {user_id} not found")
        return users[user_id]

    def _get_reservation(self, reservation_id: str) -> Record:
        reservations = self.db["reservations"]
        if reservation_id not in reservations:
            raise ValueError(f"Reservation {reservation_id} not found")
        return reservations[reservation_id]

    def _get_flight(self, flight_number: str) -> Record:
        flights = self.db["flights"]
        if flight_number not in flights:
            raise ValueError(f"Flight {flight_number} not found")
        return flights[flight_number]

    def _get_flight_instance(self, flight_number: str, date: str) -> Record:
        flight = self._get_flight(flight_number)
        if date not in flight["dates"]:
            raise ValueError(f"Flight {flight_number} not found on date {date}")
        found: Record = flight["dates"][date]
        return found

    def _get_new_reservation_id(self) -> str:
        for reservation_id in _NEW_RESERVATION_IDS:
            if reservation_id not in self.db["reservations"]:
                return reservation_id
        raise ValueError("Too many reservations")

    def _search_direct_flight(
        self,
        date: str,
        origin: str | None = None,
        destination: str | None = None,
        leave_after: str | None = None,
    ) -> list[DirectFlight]:
        """Every flight available on `date` matching the filters, in the database's order
        (the records are only read: they are the shared ones)."""
        results = []
        for flight in self.db["flights"].values():
            check = (
                (origin is None or flight["origin"] == origin)
                and (destination is None or flight["destination"] == destination)
                and (date in flight["dates"])
                and (flight["dates"][date]["status"] == "available")
                and (leave_after is None or flight["scheduled_departure_time_est"] >= leave_after)
            )
            if check:
                results.append(
                    DirectFlight(
                        flight_number=flight["flight_number"],
                        origin=flight["origin"],
                        destination=flight["destination"],
                        status="available",
                        scheduled_departure_time_est=flight["scheduled_departure_time_est"],
                        scheduled_arrival_time_est=flight["scheduled_arrival_time_est"],
                        available_seats=flight["dates"][date]["available_seats"],
                        prices=flight["dates"][date]["prices"],
                    )
                )
        return results

    def _payment_for_update(self, user: Record, payment_id: str, total_price: Any) -> Record | None:
        """Charge a change to one of the user's payment methods (a gift card's balance
        goes down before the payment record is made, as in τ²)."""
        if payment_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        payment_method = user["payment_methods"][payment_id]
        if payment_method["source"] == "certificate":
            raise ValueError("Certificate cannot be used to update reservation")
        elif payment_method["source"] == "gift_card" and payment_method["amount"] < total_price:
            raise ValueError("Gift card balance is not enough")
        if payment_method["source"] == "gift_card":
            payment_method["amount"] -= total_price
        payment = None
        if total_price != 0:
            payment = Payment(payment_id=payment_id, amount=total_price).model_dump()
        return payment

    # --- tools ---------------------------------------------------------------------------

    @tool(kind="write", keys=("origin", "destination"))
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[FlightInfo | dict[str, Any]],
        passengers: list[Passenger | dict[str, Any]],
        payment_methods: list[Payment | dict[str, Any]],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Dump:
        """Book a new reservation for a user, paid with methods from their profile.

        Args:
            user_id: The user's id, such as 'sara_doe_496'.
            origin: IATA code of the trip's origin, such as 'SFO'.
            destination: IATA code of the trip's destination, such as 'JFK'.
            flight_type: 'one_way' or 'round_trip'.
            cabin: 'basic_economy', 'economy' or 'business'.
            flights: Each flight of the trip: its flight_number and date.
            passengers: Each passenger: first_name, last_name and dob.
            payment_methods: Each payment: payment_id and amount.
            total_baggages: How many bags in all.
            nonfree_baggages: How many of them are paid for.
            insurance: 'yes' or 'no'.
        """
        # τ² turns a list into models only when every item is a dict; anything else is
        # used as it came (and fails where τ²'s fails).
        trip: Any = flights
        people: Any = passengers
        paid: Any = payment_methods
        if all(isinstance(flight, dict) for flight in trip):
            trip = [FlightInfo(**flight) for flight in trip]
        if all(isinstance(passenger, dict) for passenger in people):
            people = [Passenger(**passenger) for passenger in people]
        if all(isinstance(payment, dict) for payment in paid):
            paid = [Payment(**payment) for payment in paid]
        user = self._get_user(user_id)
        reservation_id = self._get_new_reservation_id()
        reservation = Reservation(
            reservation_id=reservation_id,
            user_id=user_id,
            origin=origin,
            destination=destination,
            flight_type=flight_type,
            cabin=cabin,
            flights=[],
            passengers=deepcopy(people),
            payment_history=deepcopy(paid),
            created_at=_NOW,
            total_baggages=total_baggages,
            nonfree_baggages=nonfree_baggages,
            insurance=insurance,
        )

        total_price: Any = 0
        dates_booked: list[Record] = []
        for flight_info in trip:
            flight_number = flight_info.flight_number
            flight = self._get_flight(flight_number)
            date_data = self._get_flight_instance(
                flight_number=flight_number,
                date=flight_info.date,
            )
            if date_data["status"] != "available":
                raise ValueError(f"Flight {flight_number} not available on date {flight_info.date}")
            if date_data["available_seats"][cabin] < len(people):
                raise ValueError(f"Not enough seats on flight {flight_number}")
            price = date_data["prices"][cabin]
            reservation.flights.append(
                ReservationFlight(
                    origin=flight["origin"],
                    destination=flight["destination"],
                    flight_number=flight_number,
                    date=flight_info.date,
                    price=price,
                )
            )
            dates_booked.append(date_data)
            total_price += price * len(people)

        if insurance == "yes":
            total_price += 30 * len(people)
        total_price += 50 * nonfree_baggages

        methods = user["payment_methods"]
        for payment in paid:
            payment_id = payment.payment_id
            amount = payment.amount
            if payment_id not in methods:
                raise ValueError(f"Payment method {payment_id} not found")
            method = methods[payment_id]
            if method["source"] in {"gift_card", "certificate"} and method["amount"] < amount:
                raise ValueError(f"Not enough balance in payment method {payment_id}")

        total_payment = sum(payment.amount for payment in paid)
        if total_payment != total_price:
            raise ValueError(
                f"Payment amount does not add up, total price is {total_price}, "
                f"but paid {total_payment}"
            )

        for payment in paid:
            payment_id = payment.payment_id
            amount = payment.amount
            method = methods[payment_id]
            if method["source"] == "gift_card":
                method["amount"] -= amount
            elif method["source"] == "certificate":
                methods.pop(payment_id)

        for date_data in dates_booked:
            date_data["available_seats"][cabin] -= len(people)
        record = reservation.model_dump()
        self.db["reservations"][reservation_id] = record
        self.db["users"][user_id]["reservations"].append(reservation_id)
        return Dump(record)

    @tool(kind="generic")
    def calculate(self, expression: str) -> str:
        """Work out an arithmetic expression; the result is rounded to 2 decimals.

        Args:
            expression: The expression, such as '2 + 2': numbers, + - * /, parentheses
                and spaces only.
        """
        return calculate(expression)

    @tool(kind="write", keys=("reservation_id",))
    def cancel_reservation(self, reservation_id: str) -> Dump:
        """Cancel a whole reservation, refunding every payment made on it.

        Args:
            reservation_id: The reservation's id, such as 'ZFA04Y'.
        """
        reservation = self._get_reservation(reservation_id)
        refunds = [
            Payment(payment_id=payment["payment_id"], amount=-payment["amount"]).model_dump()
            for payment in reservation["payment_history"]
        ]
        reservation["payment_history"].extend(refunds)
        reservation["status"] = "cancelled"
        return Dump(reservation)

    @tool(kind="read")
    def get_reservation_details(self, reservation_id: str) -> Dump:
        """A reservation's details.

        Args:
            reservation_id: The reservation's id, such as '8JX2WO'.
        """
        return Dump(self._get_reservation(reservation_id))

    @tool(kind="read")
    def get_user_details(self, user_id: str) -> Dump:
        """A user's profile, with their payment methods and reservations.

        Args:
            user_id: The user's id, such as 'sara_doe_496'.
        """
        return Dump(self._get_user(user_id))

    @tool(kind="read")
    def list_all_airports(self) -> list[Dump]:
        """Every airport served: IATA code and city."""
        return [Dump(iata=iata, city=city) for iata, city in _AIRPORTS]

    @tool(kind="read")
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[Dump]:
        """Direct flights from one airport to another that can be booked on a date.

        Args:
            origin: Origin airport code, such as 'JFK'.
            destination: Destination airport code, such as 'LAX'.
            date: The date, 'YYYY-MM-DD', such as '2024-01-01'.
        """
        found = self._search_direct_flight(date=date, origin=origin, destination=destination)
        return [Dump(flight.model_dump()) for flight in found]

    @tool(kind="read")
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[Dump]]:
        """Pairs of connecting flights from one airport to another, leaving on a date.

        Args:
            origin: Origin airport code, such as 'JFK'.
            destination: Destination airport code, such as 'LAX'.
            date: The date, 'YYYY-MM-DD', such as '2024-05-01'.
        """
        results: list[tuple[DirectFlight, DirectFlight]] = []
        for first in self._search_direct_flight(date=date, origin=origin, destination=None):
            first.date = date
            # τ²'s next day: no zero padding, and May whatever the month.
            date2 = (
                f"2024-05-{int(date[-2:]) + 1}"
                if "+1" in first.scheduled_arrival_time_est
                else date
            )
            for second in self._search_direct_flight(
                date=date2,
                origin=first.destination,
                destination=destination,
                leave_after=first.scheduled_arrival_time_est,
            ):
                second.date = date2
                results.append((first, second))
        return [[Dump(a.model_dump()), Dump(b.model_dump())] for a, b in results]

    @tool(kind="write", keys=("amount",))
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Give a user a travel certificate (compensation). Use with care.

        Args:
            user_id: The user's id, such as 'sara_doe_496'.
            amount: The certificate's value.
        """
        user = self._get_user(user_id)
        for number in _NEW_PAYMENT_NUMBERS:
            payment_id = f"certificate_{number}"
            if payment_id not in user["payment_methods"]:
                certificate = Certificate(id=payment_id, amount=amount, source="certificate")
                user["payment_methods"][payment_id] = certificate.model_dump()
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        raise ValueError("Too many certificates")

    @tool(kind="generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the user over to a human agent, with a summary of their issue. Only when
        the user asks for one, or when the policy and tools cannot solve the issue.

        Args:
            summary: The user's issue, in short.
        """
        return "Transfer successful"

    @tool(kind="write", keys=("reservation_id",))
    def update_reservation_baggages(
        self,
        reservation_id: str,
        total_baggages: int,
        nonfree_baggages: int,
        payment_id: str,
    ) -> Dump:
        """Change a reservation's baggage counts, paying for any added paid bags.

        Args:
            reservation_id: The reservation's id, such as 'ZFA04Y'.
            total_baggages: The new total number of bags.
            nonfree_baggages: The new number of paid bags.
            payment_id: A payment method in the user's profile, such as
                'credit_card_7815826' or 'gift_card_7815826'.
        """
        reservation = self._get_reservation(reservation_id)
        user = self._get_user(reservation["user_id"])
        total_price = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
        payment = self._payment_for_update(user, payment_id, total_price)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["total_baggages"] = _stored(total_baggages)
        reservation["nonfree_baggages"] = _stored(nonfree_baggages)
        return Dump(reservation)

    @tool(kind="write", keys=("reservation_id",))
    def update_reservation_flights(
        self,
        reservation_id: str,
        cabin: CabinClass,
        flights: list[FlightInfo | dict[str, Any]],
        payment_id: str,
    ) -> Dump:
        """Change a reservation's flights or cabin, paying or refunding the difference.

        Args:
            reservation_id: The reservation's id, such as 'ZFA04Y'.
            cabin: The cabin class for the whole reservation.
            flights: Every flight of the new itinerary (flight_number and date), the
                unchanged ones included.
            payment_id: A payment method in the user's profile, such as
                'credit_card_7815826' or 'gift_card_7815826'.
        """
        trip: Any = flights
        if all(isinstance(flight, dict) for flight in trip):
            trip = [FlightInfo(**flight) for flight in trip]
        reservation = self._get_reservation(reservation_id)
        user = self._get_user(reservation["user_id"])

        total_price: Any = 0
        new_flights: list[Record] = []
        for flight_info in trip:
            kept = next(
                (
                    booked
                    for booked in reservation["flights"]
                    if booked["flight_number"] == flight_info.flight_number
                    and booked["date"] == flight_info.date
                    and cabin == reservation["cabin"]
                ),
                None,
            )
            if kept:
                total_price += kept["price"] * len(reservation["passengers"])
                new_flights.append(kept)
                continue
            number = flight_info.flight_number
            flight = self._get_flight(number)
            date_data = self._get_flight_instance(
                flight_number=flight_info.flight_number,
                date=flight_info.date,
            )
            if date_data["status"] != "available":
                raise ValueError(
                    f"Flight {flight_info.flight_number} not available on date {flight_info.date}"
                )
            if date_data["available_seats"][cabin] < len(reservation["passengers"]):
                raise ValueError(f"Not enough seats on flight {flight_info.flight_number}")
            booked_flight = ReservationFlight(
                flight_number=flight_info.flight_number,
                date=flight_info.date,
                price=date_data["prices"][cabin],
                origin=flight["origin"],
                destination=flight["destination"],
            )
            total_price += booked_flight.price * len(reservation["passengers"])
            new_flights.append(booked_flight.model_dump())

        total_price -= sum(booked["price"] for booked in reservation["flights"]) * len(
            reservation["passengers"]
        )
        payment = self._payment_for_update(user, payment_id, total_price)
        if payment is not None:
            reservation["payment_history"].append(payment)
        reservation["flights"] = new_flights
        reservation["cabin"] = _stored(cabin)
        return Dump(reservation)

    @tool(kind="write", keys=("reservation_id",))
    def update_reservation_passengers(
        self, reservation_id: str, passengers: list[Passenger | dict[str, Any]]
    ) -> Dump:
        """Replace a reservation's passengers (the number of passengers cannot change).

        Args:
            reservation_id: The reservation's id, such as 'ZFA04Y'.
            passengers: Each passenger: first_name, last_name and dob.
        """
        people: Any = passengers
        if all(isinstance(passenger, dict) for passenger in people):
            people = [Passenger(**passenger) for passenger in people]
        reservation = self._get_reservation(reservation_id)
        if len(people) != len(reservation["passengers"]):
            raise ValueError("Number of passengers does not match")
        reservation["passengers"] = _stored(people)
        return Dump(reservation)

    @tool(kind="read")
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """A flight's status on a date.

        Args:
            flight_number: The flight number, such as 'HAT001'.
            date: The date, 'YYYY-MM-DD'.
        """
        status: str = self._get_flight_instance(flight_number, date)["status"]
        return status
