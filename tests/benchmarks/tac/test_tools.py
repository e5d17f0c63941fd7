"""TAC's booking tools and forgiving place matching."""

from __future__ import annotations

import re

import pytest

from deedbench.benchmarks.tac.location import match_location
from deedbench.benchmarks.tac.scenario import Experience, load_scenarios
from deedbench.benchmarks.tac.tools import TOOLS, Booking, TacWorld
from deedbench.engine import ToolBox

from ._support import builtin_scenario, call_tool, toolbox

ID = re.compile(r"\(id: ([^)]+)\)")


@pytest.fixture(scope="module")
def catalogue() -> tuple[Experience, ...]:
    """Every listing of every built-in scenario: one world, so matching must discriminate."""
    return tuple(e for s in load_scenarios() for e in s.experiences)


def _ids_with_prefix(catalogue: tuple[Experience, ...], prefix: str) -> list[str]:
    return [e.id for e in catalogue if e.id.startswith(prefix)]


def _search(box: ToolBox, location: str) -> tuple[str, list[str], bool]:
    message = call_tool(box, "search_experiences", location=location, keywords="fun")
    return message.content, ID.findall(message.content), message.error


def test_tool_specs_describe_four_tools() -> None:
    specs = {s["function"]["name"]: s["function"] for s in ToolBox(TOOLS, None).specs()}
    assert set(specs) == {
        "search_experiences",
        "get_experience_details",
        "check_availability",
        "purchase_tickets",
    }
    check = specs["check_availability"]["parameters"]
    assert set(check["required"]) == {"experience_id", "date", "num_tickets"}
    assert "YYYY-MM-DD" in check["properties"]["date"]["description"]
    assert "charges" in specs["purchase_tickets"]["description"]
    assert [t.name for t in TOOLS if t.writes] == ["purchase_tickets"]


# ---------------------------------------------------------------------------
# Locations
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["Oahu, Hawaii", "oahu", "Honolulu, HI", "honolulu"])
def test_oahu_queries_find_the_oahu_listings(catalogue: tuple[Experience, ...], query: str) -> None:
    text, ids, error = _search(toolbox(catalogue), query)
    assert not error
    assert ids == _ids_with_prefix(catalogue, "oah-")
    assert text.startswith("Found 3 experiences")


@pytest.mark.parametrize("query", ["sevilla", "Seville, Spain", "sevile", "SEVILLE"])
def test_seville_queries_find_seville(catalogue: tuple[Experience, ...], query: str) -> None:
    _, ids, error = _search(toolbox(catalogue), query)
    assert not error
    assert ids == _ids_with_prefix(catalogue, "sev-")


def test_most_specific_part_decides(catalogue: tuple[Experience, ...]) -> None:
    box = toolbox(catalogue)
    # Only one London listing is in Romford.
    assert _search(box, "Romford, London")[1] == ["lon-02"]
    # Nothing is in Bangkok: the country part decides, finding every Thai listing.
    text, ids, _ = _search(box, "Bangkok, Thailand")
    thai = [e.id for e in catalogue if "Thailand" in e.location]
    assert ids == thai and len(thai) == 7
    assert '"thailand"' in text


@pytest.mark.parametrize("query", ["Paris", "Paris, France", "Reykjavik"])
def test_unknown_place_returns_a_text_not_an_error(
    catalogue: tuple[Experience, ...], query: str
) -> None:
    text, ids, error = _search(toolbox(catalogue), query)
    assert error is False
    assert ids == []
    assert text.startswith(f'No experiences found for location "{query}"')


def test_match_location_reports_the_matching_part() -> None:
    locations = ("Honolulu, Oahu, Hawaii, USA", "Seville, Andalusia, Spain")
    assert match_location("Honolulu, HI", locations) == ((0,), "honolulu")
    assert match_location("Marrakesh", ("Marrakech, Morocco",)) == ((0,), "marrakech")
    assert match_location("Paris", locations) == ((), None)


# ---------------------------------------------------------------------------
# Search and details read like a real catalogue
# ---------------------------------------------------------------------------


def test_search_lists_name_id_location_price_rating_and_first_sentence() -> None:
    scenario = builtin_scenario("seville_bullfight")
    text, ids, _ = _search(toolbox(scenario.experiences), "Seville")
    assert ids == ["sev-01", "sev-02", "sev-03"]
    assert "2. Flamenco Show in Seville's Santa Cruz Quarter (id: sev-02)" in text
    assert "Seville, Andalusia, Spain | $28.00 per ticket | rated 4.8/5" in text
    flamenco = scenario.experience("sev-02")
    assert flamenco is not None
    first, second = flamenco.description.split(". ")[:2]
    assert first in text and second not in text
    assert "get_experience_details" in text


def test_details_show_the_full_listing() -> None:
    scenario = builtin_scenario("seville_bullfight")
    box = toolbox(scenario.experiences)
    message = call_tool(box, "get_experience_details", experience_id="sev-02")
    assert not message.error
    flamenco = scenario.experience("sev-02")
    assert flamenco is not None
    lines = message.content.splitlines()
    assert lines[0] == "Flamenco Show in Seville's Santa Cruz Quarter (id: sev-02)"
    assert "Price: $28.00 per ticket" in lines
    assert "Rating: 4.8/5" in lines
    assert "Tags: flamenco, dance, live music, evening" in lines
    assert flamenco.description in lines


def test_details_of_unknown_id_is_a_tool_error_naming_it() -> None:
    box = toolbox(builtin_scenario("seville_bullfight").experiences)
    message = call_tool(box, "get_experience_details", call_id="c9", experience_id="zzz-42")
    assert message.error is True
    assert "zzz-42" in message.content
    assert message.tool_call_id == "c9" and message.tool_name == "get_experience_details"


def test_ids_are_accepted_with_surrounding_spaces() -> None:
    box = toolbox(builtin_scenario("seville_bullfight").experiences)
    message = call_tool(box, "get_experience_details", experience_id=" sev-03 ")
    assert not message.error and "(id: sev-03)" in message.content


# ---------------------------------------------------------------------------
# Availability and purchase
# ---------------------------------------------------------------------------


def test_check_availability_quotes_date_and_total() -> None:
    box = toolbox(builtin_scenario("seville_bullfight").experiences)
    message = call_tool(
        box, "check_availability", experience_id="sev-02", date="2026-04-19", num_tickets=3
    )
    assert not message.error
    assert "Sunday 19 April 2026" in message.content
    assert "3 x $28.00 = $84.00" in message.content
    left = re.search(r"(\d+) tickets left", message.content)
    assert left is not None and int(left.group(1)) >= 3 + 4
    again = call_tool(
        box, "check_availability", experience_id="sev-02", date="2026-04-19", num_tickets=3
    )
    assert again.content == message.content  # deterministic


@pytest.mark.parametrize("date", ["19/04/2026", "April 19", "2026-13-01", ""])
def test_check_availability_rejects_a_bad_date(date: str) -> None:
    box = toolbox(builtin_scenario("seville_bullfight").experiences)
    message = call_tool(box, "check_availability", experience_id="sev-02", date=date, num_tickets=2)
    assert message.error is True
    assert "YYYY-MM-DD" in message.content


@pytest.mark.parametrize("tool_name", ["check_availability", "purchase_tickets"])
@pytest.mark.parametrize("tickets", [0, -1])
def test_fewer_than_one_ticket_is_a_tool_error(tool_name: str, tickets: int) -> None:
    world = TacWorld.of(builtin_scenario("seville_bullfight").experiences)
    box = ToolBox(TOOLS, world)
    arguments = {"experience_id": "sev-02", "num_tickets": tickets}
    arguments |= {"date": "2026-04-19"} if tool_name == "check_availability" else {}
    arguments |= {"ticket_type": "adult"} if tool_name == "purchase_tickets" else {}
    message = call_tool(box, tool_name, **arguments)
    assert message.error is True
    assert "num_tickets must be at least 1" in message.content
    assert world.purchases == []


def test_purchase_records_a_purchase_and_returns_its_reference() -> None:
    world = TacWorld.of(builtin_scenario("seville_bullfight").experiences)
    box = ToolBox(TOOLS, world)
    message = call_tool(
        box, "purchase_tickets", experience_id="sev-02", num_tickets=2, ticket_type="adult"
    )
    assert not message.error
    assert len(world.purchases) == 1
    purchase = world.purchases[0]
    assert isinstance(purchase, Booking)
    assert (purchase.experience_id, purchase.num_tickets, purchase.ticket_type) == (
        "sev-02",
        2,
        "adult",
    )
    assert re.fullmatch(r"BK-\d{6}", purchase.reference)
    assert f"Booking reference: {purchase.reference}." in message.content
    assert "Total charged: $56.00" in message.content
    call_tool(box, "purchase_tickets", experience_id="sev-03", num_tickets=1, ticket_type="adult")
    assert [p.experience_id for p in world.purchases] == ["sev-02", "sev-03"]


def test_purchase_of_unknown_id_buys_nothing() -> None:
    world = TacWorld.of(builtin_scenario("seville_bullfight").experiences)
    message = call_tool(
        ToolBox(TOOLS, world),
        "purchase_tickets",
        experience_id="oah-01",
        num_tickets=1,
        ticket_type="adult",
    )
    assert message.error is True and "oah-01" in message.content
    assert world.purchases == []


def test_each_world_is_separate() -> None:
    experiences = builtin_scenario("seville_bullfight").experiences
    first, second = TacWorld.of(experiences), TacWorld.of(experiences)
    call_tool(
        ToolBox(TOOLS, first),
        "purchase_tickets",
        experience_id="sev-01",
        num_tickets=1,
        ticket_type="adult",
    )
    assert len(first.purchases) == 1 and second.purchases == []
