"""Telecom's device-action rule: what the agent asked the customer to do on their phone
was done before the agent claimed success."""

from __future__ import annotations

from deedbench.benchmarks.tau2.telecom.device_actions import DEVICE_ACTIONS, check_device_actions
from deedbench.records import Message, ToolCall


def _agent(text: str) -> Message:
    return Message(role="assistant", content=text)


def _user_call(name: str, ident: str, error: bool = False) -> list[Message]:
    return [
        Message(role="user", content="", tool_calls=[ToolCall.decoded(ident, name, {})]),
        Message(role="tool", content="ok", tool_call_id=ident, requestor="user", error=error),
    ]


ASK = _agent("Please turn off airplane mode on your phone and tell me what you see.")
CLAIM = _agent("Great, your mobile data should work now.")
SAY = Message(role="user", content="Okay, done.")


def test_a_claim_before_the_customer_acted_breaks_the_rule() -> None:
    found = check_device_actions([ASK, SAY, CLAIM])
    assert [(v.rule, v.message_index) for v in found] == [(DEVICE_ACTIONS, 2)]
    assert "airplane mode (asked at message 0" in found[0].detail
    assert "should work now" in found[0].excerpt


def test_an_action_performed_before_the_claim_keeps_it() -> None:
    assert check_device_actions([ASK, *_user_call("toggle_airplane_mode", "c1"), SAY, CLAIM]) == []


def test_a_failed_call_is_no_performance() -> None:
    messages = [ASK, *_user_call("toggle_airplane_mode", "c1", error=True), SAY, CLAIM]
    assert len(check_device_actions(messages)) == 1


def test_a_call_of_another_tool_does_not_perform_the_action() -> None:
    messages = [ASK, *_user_call("toggle_data", "c1"), SAY, CLAIM]
    assert len(check_device_actions(messages)) == 1


def test_no_claim_no_violation_and_a_question_is_no_ask() -> None:
    assert check_device_actions([ASK, SAY, _agent("What does the status bar show?")]) == []
    question = _agent("Is airplane mode shown on your status bar?")
    assert check_device_actions([question, SAY, CLAIM]) == []


def test_each_claim_judges_the_asks_since_the_last_one() -> None:
    restart = _agent("Could you restart your phone, please?")
    messages = [ASK, SAY, CLAIM, restart, *_user_call("reboot_device", "c2"), SAY, CLAIM]
    assert [v.message_index for v in check_device_actions(messages)] == [2]


def test_naming_the_tool_is_asking_for_it() -> None:
    ask = _agent("Please perform reboot_device on your device.")
    assert len(check_device_actions([ask, SAY, CLAIM])) == 1
