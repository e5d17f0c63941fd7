"""The airline rule `compensation`: a certificate (`send_certificate`) only when the user
asked, for a reservation the airline cancelled or delayed a flight of, to a member or
reservation the policy covers, for the amount it gives (`rules.py` says each point)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from deedbench.benchmarks.airline.evidence import (
    RuleContext,
    first_match,
    money,
    number,
    passenger_count,
    plural,
    segment_text,
    user_text_before,
    violation,
)
from deedbench.benchmarks.airline.ledger import Record, flight_segments, segment_key
from deedbench.records.messages import Message
from deedbench.scoring.procedure import PairedCall, Violation

__all__ = [
    "CANCELLED_FLIGHT_PER_PASSENGER",
    "COMPENSATION",
    "DELAYED_FLIGHT_PER_PASSENGER",
    "check_compensation",
]

COMPENSATION = "compensation"
CANCELLED_FLIGHT_PER_PASSENGER = 100
DELAYED_FLIGHT_PER_PASSENGER = 50
_COMPENSATION_ASK = re.compile(
    r"\b(compensat\w*|certificate\w*|voucher\w*|refund\w*|reimburs\w*|goodwill|gesture\w*)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Situation:
    """A reservation that could justify a certificate, what is wrong with it, how relevant."""

    reservation_id: str
    problems: tuple[str, ...]
    relevance: tuple[bool, bool, bool]


def _names(messages: Sequence[Message], index: int, value: str, calls: bool) -> bool:
    """Whether a user or agent text (or, with `calls`, a tool call) before `index` names `value`."""
    pattern = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)
    for message in messages[:index]:
        if message.role in ("user", "assistant") and pattern.search(message.content):
            return True
        if calls and any(pattern.search(c.arguments or "") for c in message.tool_calls):
            return True
    return False


def _situation(call: PairedCall, ctx: RuleContext, reservation_id: str) -> _Situation | None:
    state = ctx.state
    reservation = state.reservation(reservation_id)
    if reservation is None:
        return None
    # The facts the user complained about: a change in this conversation may have
    # replaced the delayed flight, so the reservation as it was counts too.
    versions = [state.original(reservation_id), reservation]
    flights: list[Record] = []
    for version in versions:
        for segment in flight_segments((version or {}).get("flights")):
            if segment_key(segment) not in {segment_key(f) for f in flights}:
                flights.append(segment)
    cancelled = [s for s in flights if state.status(s) == "cancelled"]
    delayed = [(s, why) for s in flights if (why := state.delay(s))]
    if not cancelled and not delayed:
        return None
    amount = number(call.args.get("amount"))
    problems: list[str] = []
    user = state.user(call.args.get("user_id")) or {}
    membership = user.get("membership")
    if not (
        membership in ("silver", "gold")
        or any((v or {}).get("insurance") == "yes" for v in versions)
        or any((v or {}).get("cabin") == "business" for v in versions)
    ):
        problems.append(
            f"not eligible: {membership or 'unknown'} member, reservation {reservation_id} has "
            f"insurance {reservation.get('insurance')} and cabin {reservation.get('cabin')}"
        )
    passengers = passenger_count(reservation)
    allowed: list[str] = []
    fits = False
    if cancelled:
        due = CANCELLED_FLIGHT_PER_PASSENGER * passengers
        allowed.append(
            f"{money(due)} ({money(CANCELLED_FLIGHT_PER_PASSENGER)} x "
            f"{plural(passengers, 'passenger')}; cancelled "
            f"{', '.join(segment_text(s) for s in cancelled)})"
        )
        fits = amount == due
    if delayed and not fits:
        due = DELAYED_FLIGHT_PER_PASSENGER * passengers
        what = ", ".join(f"{segment_text(s)}, {why}" for s, why in delayed)
        allowed.append(
            f"{money(due)} ({money(DELAYED_FLIGHT_PER_PASSENGER)} x "
            f"{plural(passengers, 'passenger')}; delayed {what})"
        )
        if amount == due:
            fits = True
            if not state.writes.get(reservation_id):
                problems.append(
                    f"{reservation_id} has a delayed flight ({what}), which is compensated only "
                    "after changing or cancelling the reservation, and it was not changed or "
                    "cancelled"
                )
    if not fits:
        problems.append(
            f"amount {call.args.get('amount')} is not what the policy gives for "
            f"{reservation_id}: {' or '.join(allowed)}"
        )
    affected = cancelled + [s for s, _ in delayed]
    relevance = (
        any(_names(ctx.messages, call.index, segment_key(s)[0], False) for s in affected),
        _names(ctx.messages, call.index, reservation_id, True),
        bool(cancelled) or any(why == "status delayed" for _, why in delayed),
    )
    return _Situation(reservation_id, tuple(problems), relevance)


def check_compensation(call: PairedCall, ctx: RuleContext) -> list[Violation]:
    if call.call.name != "send_certificate":
        return []
    problems: list[str] = []
    if first_match(_COMPENSATION_ASK, user_text_before(ctx.messages, call.index)) is None:
        problems.append(
            "the user never asked for compensation (no user message mentions compensation, "
            "a certificate, voucher or refund); it must not be offered proactively"
        )
    user_id = call.args.get("user_id")
    reservation_ids = ctx.state.user_reservations(user_id)
    situations = [
        found for rid in reservation_ids if (found := _situation(call, ctx, rid)) is not None
    ]
    named = [s for s in situations if s.relevance[0] or s.relevance[1]]
    situations = named or situations
    if not situations:
        problems.append(
            f"no flight in user {user_id}'s reservations ({', '.join(reservation_ids) or 'none'})"
            " was cancelled or delayed"
        )
    elif all(s.problems for s in situations):
        best = max(situations, key=lambda s: (s.relevance, -len(s.problems)))
        problems.extend(best.problems)
    if not problems:
        return []
    return [violation(COMPENSATION, call, "; ".join(problems))]
