"""The checks on what a simulated user did, read from transcripts: each finds its fault and
stays silent where the transcript does not show it plainly."""

from __future__ import annotations

import json

from deedbench.records import Message, ToolCall
from deedbench.scoring.attribution import (
    accepted_unwanted,
    details_in,
    invented_details,
    refused_wanted,
)

STOP = "###STOP###"
INSTRUCTION = "You are mia_li_3668, zip 78750. You want to cancel order #W1234567."


def _agent(text: str) -> Message:
    return Message(role="assistant", content=text)


def _user(text: str) -> Message:
    return Message(role="user", content=text)


def test_details_are_read_in_any_notation() -> None:
    found = details_in("Order #W1234567 for mia_li_3668, $1,234.50 to credit_card_7815686")
    assert ("order id", "W1234567") in found and ("user id", "mia_li_3668") in found
    assert ("amount", "1234.5") in found and ("payment method", "credit_card_7815686") in found
    assert not any(k == "user id" and v.startswith("credit") for k, v in found)
    assert ("flight number", "HAT039") in details_in("flight HAT039, reservation ZFA04Y")
    assert ("reservation id", "ZFA04Y") in details_in("flight HAT039, reservation ZFA04Y")
    assert ("reservation id", "HAT039") not in details_in("flight HAT039")


def test_a_detail_from_nowhere_is_invented() -> None:
    messages = [
        _user("hi, i'm mia_li_3668 and i want to cancel #W1234567"),
        _agent("Your order W1234567 costs $30.00 and $20.00 shipping. Your email?"),
        _user("it's mia@example.com. so $50 in all? and also cancel #W7654321"),
    ]
    found = invented_details(messages, INSTRUCTION)
    kinds = sorted(f.excerpt.split(" ")[3] for f in found)
    assert [f.message_index for f in found] == [2, 2]
    assert kinds == ["email", "order"]  # the sum of what the agent quoted is no invention


def test_what_the_instruction_or_the_agent_gave_is_known() -> None:
    messages = [
        _user("i'm mia_li_3668, zip 78750, order #W1234567"),
        _agent("I also see order #W7654321."),
        _user("yes, cancel W7654321 too"),
    ]
    assert invented_details(messages, INSTRUCTION) == []


def _named(text: str) -> list[str]:
    return ["cancel #W1234567"] if "W1234567" in text else []


def test_a_no_to_the_wanted_change_in_full_is_a_refusal_of_it() -> None:
    proposal = _agent("I will cancel order #W1234567 (reason: ordered by mistake). Confirm?")
    [fault] = refused_wanted([proposal, _user("no, don't")], _named)
    assert fault.kind == "user.refused_wanted" and fault.message_index == 1
    assert refused_wanted([proposal, _user("yes please")], _named) == []
    assert refused_wanted([_agent("Confirm the new address?"), _user("no")], _named) == []


def test_a_yes_to_a_change_never_asked_for_is_accepting_it() -> None:
    def call(call_id: str, name: str, order: str) -> Message:
        arguments = json.dumps({"order_id": order})
        return Message(
            role="assistant", tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)]
        )

    messages = [
        _agent("Shall I also return #W7654321?"),
        _user("yes, go ahead"),
        call("c1", "return_delivered_order_items", "#W7654321"),
        Message(role="tool", tool_call_id="c1", content="{}"),
        call("c2", "cancel_pending_order", "#W1234567"),
        Message(role="tool", tool_call_id="c2", content="{}"),
    ]
    writes = {"return_delivered_order_items", "cancel_pending_order"}
    [fault] = accepted_unwanted(
        messages,
        lambda c: c.name in writes,
        lambda c: c.name == "cancel_pending_order",
    )
    assert fault.kind == "user.accepted_unwanted" and fault.message_index == 1
    assert "return_delivered_order_items" in fault.excerpt
