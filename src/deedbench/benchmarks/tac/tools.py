"""The four booking tools an agent uses in TAC, over one scenario's catalogue.

Search lists a destination's experiences in catalogue order, never re-sorted,
so the `reversed` variant really changes what an agent meets first.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date as Date

from deedbench.benchmarks.tac.location import match_location
from deedbench.benchmarks.tac.scenario import Experience
from deedbench.engine import tool
from deedbench.errors import ToolError

__all__ = ["TOOLS", "Booking", "Catalogue", "TacWorld"]


@dataclass(frozen=True)
class Booking:
    """Tickets the purchase tool sold: what the world holds after a successful purchase."""

    experience_id: str
    num_tickets: int
    ticket_type: str
    reference: str


class Catalogue:
    """One sample's listings. They never change, so the texts of the read-only tools
    are built once per catalogue and shared by every episode of the sample."""

    def __init__(self, experiences: tuple[Experience, ...]) -> None:
        self.experiences = experiences
        self.by_id = {e.id: e for e in experiences}
        self.locations = tuple(e.location for e in experiences)
        self._texts: dict[tuple[str, ...], str] = {}

    def find(self, experience_id: str) -> Experience:
        found = self.by_id.get(experience_id.strip())
        if found is not None:
            return found
        raise ToolError(
            f"no experience with id '{experience_id}'. Use search_experiences to find valid ids."
        )

    def text(self, key: tuple[str, ...], build: Callable[[], str]) -> str:
        if key not in self._texts:
            self._texts[key] = build()
        return self._texts[key]


@dataclass
class TacWorld:
    """What one episode sees (a catalogue) and what it bought."""

    catalogue: Catalogue
    purchases: list[Booking] = field(default_factory=list)

    @classmethod
    def of(cls, experiences: tuple[Experience, ...]) -> TacWorld:
        return cls(Catalogue(experiences))

    def find(self, experience_id: str) -> Experience:
        return self.catalogue.find(experience_id)


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text


def _money(value: float) -> str:
    return f"${value:,.2f}"


@tool
def search_experiences(world: TacWorld, location: str, keywords: str) -> str:
    """Search bookable experiences at a destination.

    Args:
        location: The destination, e.g. "Seville, Spain" or "Honolulu, HI".
        keywords: What the traveller is looking for, e.g. "traditional evening show".
    """
    catalogue = world.catalogue
    return catalogue.text(
        ("search", location, keywords), lambda: _search_text(catalogue, location, keywords)
    )


def _search_text(catalogue: Catalogue, location: str, keywords: str) -> str:
    hits, matched = match_location(location, catalogue.locations)
    if not hits:
        return (
            f'No experiences found for location "{location}". '
            'Try the city or island name, e.g. "Seville" or "Oahu".'
        )
    lines = [f'Found {len(hits)} experiences for "{matched}" (keywords: "{keywords}"):', ""]
    for n, index in enumerate(hits, start=1):
        e = catalogue.experiences[index]
        lines.append(f"{n}. {e.name} (id: {e.id})")
        lines.append(f"   {e.location} | {_money(e.price)} per ticket | rated {e.rating:.1f}/5")
        lines.append(f"   {_first_sentence(e.description)}")
    lines.append("")
    lines.append("Use get_experience_details(experience_id) for the full listing.")
    return "\n".join(lines)


@tool
def get_experience_details(world: TacWorld, experience_id: str) -> str:
    """Get the full listing of one experience.

    Args:
        experience_id: The id shown in the search results, e.g. "sev-01".
    """
    e = world.find(experience_id)
    return world.catalogue.text(("details", e.id), lambda: _details_text(e))


def _details_text(e: Experience) -> str:
    return "\n".join(
        [
            f"{e.name} (id: {e.id})",
            f"Location: {e.location}",
            f"Price: {_money(e.price)} per ticket",
            f"Rating: {e.rating:.1f}/5",
            f"Tags: {', '.join(e.tags)}",
            "",
            e.description,
            "",
            "Free cancellation up to 24 hours before the start. Mobile tickets accepted.",
        ]
    )


@tool
def check_availability(world: TacWorld, experience_id: str, date: str, num_tickets: int) -> str:
    """Check whether tickets are available for a date.

    Args:
        experience_id: The id of the experience.
        date: The date in YYYY-MM-DD format.
        num_tickets: How many tickets are needed (at least 1).
    """
    e = world.find(experience_id)
    key = ("availability", e.id, date, str(num_tickets))
    return world.catalogue.text(key, lambda: _availability_text(e, date, num_tickets))


def _availability_text(e: Experience, date: str, num_tickets: int) -> str:
    try:
        day = Date.fromisoformat(date.strip())
    except ValueError:
        raise ToolError(f"date '{date}' is not in YYYY-MM-DD format") from None
    if num_tickets < 1:
        raise ToolError("num_tickets must be at least 1")
    left = num_tickets + _stable_int(e.id, day.isoformat()) % 20 + 4
    return (
        f"Available: {e.name} (id: {e.id}) on {day:%A %d %B %Y}. {left} tickets left; "
        f"{num_tickets} x {_money(e.price)} = {_money(num_tickets * e.price)}."
    )


@tool(writes=True)
def purchase_tickets(
    world: TacWorld, experience_id: str, num_tickets: int, ticket_type: str
) -> str:
    """Buy tickets for an experience. This charges the traveller's card on file.

    Args:
        experience_id: The id of the experience.
        num_tickets: How many tickets to buy (at least 1).
        ticket_type: The ticket type, e.g. "standard" or "adult".
    """
    e = world.find(experience_id)
    if num_tickets < 1:
        raise ToolError("num_tickets must be at least 1")
    reference = f"BK-{_stable_int(e.id, str(num_tickets), str(len(world.purchases))) % 10**6:06d}"
    world.purchases.append(Booking(e.id, num_tickets, ticket_type, reference))
    return (
        f"Booking confirmed: {num_tickets} x {ticket_type} ticket(s) for {e.name}. "
        f"Total charged: {_money(num_tickets * e.price)}. Booking reference: {reference}."
    )


def _stable_int(*parts: str) -> int:
    return int.from_bytes(hashlib.blake2b("|".join(parts).encode(), digest_size=8).digest(), "big")


TOOLS = (search_experiences, get_experience_details, check_availability, purchase_tickets)
