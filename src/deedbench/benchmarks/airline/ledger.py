"""The airline database as a conversation leaves it: what the policy rules judge a call against.

The rules read the INITIAL database (τ-bench's ``{"flights", "reservations",
"users"}`` as ``json.load`` gives them) and replay what each earlier successful
write of the transcript did: its recorded result when that is the reservation,
else its arguments (`Ledger.apply`). The ledger also answers the questions the
rules ask of a flight: its status on a date, whether it was flown, how late it
was (`DELAY_MINUTES`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.scoring.procedure import PairedCall

__all__ = [
    "DELAY_MINUTES",
    "Ledger",
    "Record",
    "flight_segments",
    "json_object",
    "segment_key",
]

DELAY_MINUTES = 15
"""A flight flown this many minutes late counts as delayed (the US DOT's threshold; the
policy names none)."""

_FLOWN = frozenset({"landed", "flying"})

Record = dict[str, Any]


def json_object(text: str | None) -> Record | None:
    """The JSON object a text holds, or None (a tool's result that is not one)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def flight_segments(value: Any) -> list[Record]:
    """The flight objects of a list (``flights`` of a reservation or a call), others dropped."""
    if not isinstance(value, list):
        return []
    return [s for s in value if isinstance(s, dict)]


def segment_key(segment: Record) -> tuple[str, str]:
    """A flight segment's flight number and date."""
    return (str(segment.get("flight_number", "")), str(segment.get("date", "")))


def _late_minutes(date: str, scheduled: Any, actual: Any) -> int | None:
    """Minutes `actual` (ISO time) is after `date` + `scheduled` ("HH:MM:SS", "+1" = next day)."""
    if not isinstance(scheduled, str) or not isinstance(actual, str):
        return None
    clock, _, days = scheduled.partition("+")
    try:
        planned = datetime.fromisoformat(f"{date}T{clock}") + timedelta(days=int(days or 0))
        return int((datetime.fromisoformat(actual) - planned).total_seconds() // 60)
    except ValueError:
        return None


@dataclass
class Ledger:
    """The initial database plus what successful writes of this transcript changed."""

    db: DeskWorld
    now: datetime
    changed: dict[str, Record] = field(default_factory=dict)
    read: dict[str, Record] = field(default_factory=dict)
    booked: dict[str, list[str]] = field(default_factory=dict)
    writes: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    def before(self, table: str, key: Any) -> Record | None:
        """A record as the conversation found it (None for a key that is no id)."""
        found = self.db.get(table, key) if isinstance(key, str) else None
        return found if isinstance(found, dict) else None

    def reservation(self, reservation_id: Any) -> Record | None:
        if not isinstance(reservation_id, str):
            return None
        changed = self.changed.get(reservation_id)
        return changed if isinstance(changed, dict) else self.original(reservation_id)

    def original(self, reservation_id: str) -> Record | None:
        """The reservation before this conversation changed it, if known."""
        found = self.before("reservations", reservation_id)
        if found is None:
            read = self.read.get(reservation_id)
            found = read if isinstance(read, dict) else None
        return found

    def user(self, user_id: Any) -> Record | None:
        return self.before("users", user_id)

    def user_reservations(self, user_id: Any) -> list[str]:
        user = self.user(user_id) or {}
        ids = [r for r in user.get("reservations") or [] if isinstance(r, str)]
        return ids + [r for r in self.booked.get(str(user_id), []) if r not in ids]

    def on_date(self, segment: Record) -> Record | None:
        number, date = segment_key(segment)
        flight = self.before("flights", number)
        if flight is None:
            return None
        found = (flight.get("dates") or {}).get(date)
        return found if isinstance(found, dict) else None

    def status(self, segment: Record) -> str | None:
        found = self.on_date(segment)
        return found.get("status") if found else None

    def endpoints(self, segment: Record) -> tuple[str, str] | None:
        flight = self.before("flights", segment_key(segment)[0])
        source = flight if flight is not None else segment
        origin, destination = source.get("origin"), source.get("destination")
        if isinstance(origin, str) and isinstance(destination, str):
            return origin, destination
        return None

    def flown(self, segment: Record) -> str | None:
        """Why the segment counts as flown, or None."""
        status = self.status(segment)
        if status in _FLOWN:
            return f"status {status}"
        if (
            status is None
            and segment_key(segment)[1]
            and segment_key(segment)[1] < self.now.date().isoformat()
        ):
            return "dated before today"
        return None

    def delay(self, segment: Record) -> str | None:
        """Why the segment counts as delayed, or None.

        Status "delayed", or flown at least `DELAY_MINUTES` after schedule at
        departure or arrival (the US DOT's threshold for a late flight): the policy
        names no threshold, and flights here often land a few minutes off.
        """
        on_date = self.on_date(segment)
        if on_date is None:
            return None
        status = on_date.get("status")
        if status == "delayed":
            return "status delayed"
        if status not in _FLOWN:
            return None
        flight = self.before("flights", segment_key(segment)[0]) or {}
        date = segment_key(segment)[1]
        departure = flight.get("scheduled_departure_time_est")
        arrival = flight.get("scheduled_arrival_time_est")
        late = [
            _late_minutes(date, departure, on_date.get("actual_departure_time_est")),
            _late_minutes(date, arrival, on_date.get("actual_arrival_time_est")),
            _late_minutes(date, arrival, on_date.get("estimated_arrival_time_est")),
        ]
        worst = max((m for m in late if m is not None), default=None)
        if worst is None or worst < DELAY_MINUTES:
            return None
        return f"{status} {worst} min late"

    def apply(self, call: PairedCall) -> None:
        """Record what a successful call did, from its result or else its arguments."""
        name, args = call.call.name, call.args
        result = json_object(call.result)
        result_id = result.get("reservation_id") if result else None
        if name == "get_reservation_details":
            known = isinstance(result_id, str) and self.reservation(result_id) is not None
            if result is not None and isinstance(result_id, str) and not known:
                self.read[result_id] = result
            return
        if name == "book_reservation":
            if result is not None and isinstance(result_id, str):
                self.changed[result_id] = result
                self.booked.setdefault(str(args.get("user_id")), []).append(result_id)
                self.writes.setdefault(result_id, []).append((call.index, name))
            return
        reservation_id = args.get("reservation_id")
        current = self.reservation(reservation_id)  # None unless the id is a known str
        if current is None or not isinstance(reservation_id, str):
            return
        if not name.startswith(("update_reservation_", "cancel_reservation")):
            return
        if result is not None and result_id == reservation_id:
            new = dict(result)
        else:
            new = dict(current)
            if name == "update_reservation_flights":
                new["flights"] = flight_segments(args.get("flights"))
            elif name == "update_reservation_baggages":
                new["total_baggages"] = args.get("total_baggages", new.get("total_baggages"))
                new["nonfree_baggages"] = args.get("nonfree_baggages", new.get("nonfree_baggages"))
            elif name == "update_reservation_passengers":
                new["passengers"] = args.get("passengers", new.get("passengers"))
        if name == "update_reservation_flights" and isinstance(args.get("cabin"), str):
            new["cabin"] = args["cabin"]  # τ-bench leaves the stored cabin as it was
        if name == "cancel_reservation":
            new["status"] = "cancelled"
        self.changed[reservation_id] = new
        self.writes.setdefault(reservation_id, []).append((call.index, name))
