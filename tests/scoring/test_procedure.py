"""Procedure rules on hand-built retail-like transcripts: compliant runs, each way to break one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deedbench.records.messages import Message, ToolCall
from deedbench.scoring.procedure import (
    PROCEDURE_RULES,
    ProcedureSpec,
    Violation,
    check_procedure,
    violations_to_evidence,
)

SPEC = ProcedureSpec(
    write_tools={
        "cancel_pending_order": ("order_id",),
        "modify_pending_order_items": ("order_id", "item_ids", "new_item_ids", "payment_method_id"),
        "exchange_delivered_order_items": (
            "order_id",
            "item_ids",
            "new_item_ids",
            "payment_method_id",
        ),
        "return_delivered_order_items": ("order_id", "item_ids", "payment_method_id"),
        "modify_user_address": ("user_id",),
    },
    auth_tools=frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"}),
    personal_read_tools=frozenset({"get_user_details", "get_order_details"}),
    transfer_tools=frozenset({"transfer_to_human_agents"}),
    once_per_order_tools=frozenset(
        {"modify_pending_order_items", "exchange_delivered_order_items"}
    ),
)

USER = "yusuf_rossi_9620"
OTHER = "mei_kovacs_8020"
ORDER_A = "#W2378156"
ORDER_B = "#W4817420"


class Script:
    """Builds a transcript turn by turn and remembers each message's index."""

    def __init__(self) -> None:
        self.messages: list[Message] = [Message(role="system", content="Retail policy.")]
        self._ids = 0

    def user(self, text: str) -> int:
        self.messages.append(Message(role="user", content=text))
        return len(self.messages) - 1

    def say(self, text: str) -> int:
        self.messages.append(Message(role="assistant", content=text))
        return len(self.messages) - 1

    def calls(
        self,
        *calls: tuple[str, dict[str, Any]],
        text: str = "",
        results: list[str] | None = None,
        errors: list[bool] | None = None,
    ) -> tuple[int, list[str]]:
        """One assistant message with these calls, followed by one result per call."""
        made = []
        for name, args in calls:
            self._ids += 1
            made.append(ToolCall(id=f"call_{self._ids}", name=name, arguments=json.dumps(args)))
        self.messages.append(Message(role="assistant", content=text, tool_calls=made))
        index = len(self.messages) - 1
        for i, call in enumerate(made):
            error = bool(errors and errors[i])
            content = results[i] if results else ("Error: failed" if error else '{"ok": true}')
            self.messages.append(
                Message(
                    role="tool",
                    content=content,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    error=error,
                )
            )
        return index, [c.id for c in made]

    def call(
        self, name: str, result: str | None = None, error: bool = False, **args: Any
    ) -> tuple[int, str]:
        index, ids = self.calls(
            (name, args), results=None if result is None else [result], errors=[error]
        )
        return index, ids[0]

    def authenticate(self, user: str = USER) -> tuple[int, str]:
        self.user("My email is someone@example.com.")
        return self.call("find_user_id_by_email", result=user, email="someone@example.com")

    def check(self, *rules: str) -> list[Violation]:
        return check_procedure(self.messages, SPEC, rules or None)


def authenticated() -> Script:
    s = Script()
    s.user("Hi, I need help with an order.")
    s.say("Sure. Could you give me your email to verify your identity?")
    s.authenticate()
    return s


def compliant_cancel() -> Script:
    s = authenticated()
    s.call("get_user_details", result='{"orders": ["#W2378156"]}', user_id=USER)
    s.call("get_order_details", result='{"status": "pending"}', order_id=ORDER_A)
    s.say(
        f"Order {ORDER_A} is pending. I will cancel order {ORDER_A} (reason: no longer needed). OK?"
    )
    s.user("Yes, please go ahead.")
    s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    s.say("Done: the order is cancelled.")
    s.user("Thanks! ###STOP###")
    return s


# --- a compliant run -------------------------------------------------------------------


def test_a_compliant_transcript_breaks_no_rule() -> None:
    assert compliant_cancel().check() == []


def test_rule_names_are_stable() -> None:
    assert PROCEDURE_RULES == (
        "consent",
        "authentication",
        "one_user",
        "one_tool_call_per_turn",
        "one_change_per_order",
        "after_transfer",
    )


def test_unknown_rules_and_bad_specs_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown procedure rules"):
        check_procedure([], SPEC, ["consnet"])
    with pytest.raises(ValueError, match="once_per_order_tools"):
        ProcedureSpec(write_tools={"a": ()}, once_per_order_tools=frozenset({"b"}))


# --- consent ---------------------------------------------------------------------------


def test_a_write_with_no_description_is_flagged() -> None:
    s = Script()
    s.user("Cancel my order #W2378156, my email is someone@example.com")
    s.call("find_user_id_by_email", result=USER, email="someone@example.com")
    index, call_id = s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    [v] = s.check("consent")
    assert (v.rule, v.message_index, v.tool_call_id) == ("consent", index, call_id)
    assert v.excerpt.startswith("cancel_pending_order(") and ORDER_A in v.excerpt
    assert v.detail.startswith("no description")


def test_a_description_that_omits_one_of_two_item_ids_is_flagged() -> None:
    s = authenticated()
    s.say(
        f"I will modify order {ORDER_A}: item 1008292230 becomes 1008292231 and item 4602305039 "
        "becomes 4602305040, paid with credit_card_9513926. Proceed?"
    )
    s.user("yes")
    index, call_id = s.call(
        "modify_pending_order_items",
        order_id=ORDER_A,
        item_ids=["1008292230", "7602931732"],
        new_item_ids=["1008292231", "4602305040"],
        payment_method_id="credit_card_9513926",
    )
    [v] = s.check("consent")
    assert (v.message_index, v.tool_call_id) == (index, call_id)
    assert v.detail.startswith("ids not named")
    assert "['7602931732']" in v.detail


def test_a_description_naming_every_id_of_the_lists_is_consent() -> None:
    s = authenticated()
    s.say(
        f"I will modify order {ORDER_A}: items 1008292230 and 7602931732 become 1008292231 "
        "and 4602305040, paid with credit_card_9513926. Proceed?"
    )
    s.user("yes")
    s.call(
        "modify_pending_order_items",
        order_id=ORDER_A,
        item_ids=["1008292230", "7602931732"],
        new_item_ids=["1008292231", "4602305040"],
        payment_method_id="credit_card_9513926",
    )
    assert s.check() == []


def test_an_id_must_appear_as_a_whole_token() -> None:
    s = authenticated()
    s.say(f"I will cancel order {ORDER_A}1. OK?")  # a longer id is not this one
    s.user("yes")
    s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    [v] = s.check("consent")
    assert v.detail.startswith("ids not named")


def test_the_hash_of_an_order_id_is_optional_in_the_description() -> None:
    s = authenticated()
    s.say("I will cancel order W2378156. OK?")
    s.user("yes")
    s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    assert s.check("consent") == []


def test_a_yes_but_reply_is_not_consent() -> None:
    s = authenticated()
    s.say(f"I will cancel order {ORDER_A}. Shall I proceed?")
    reply = s.user("yes but change the address first")
    index, call_id = s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    [v] = s.check("consent")
    assert (v.message_index, v.tool_call_id) == (index, call_id)
    assert v.detail.startswith("user did not say yes")
    assert '"yes but change the address first"' in v.detail
    assert f"message {reply}" in v.detail


def test_a_write_before_the_user_replied_is_flagged_even_if_a_yes_follows() -> None:
    s = authenticated()
    s.say(f"I will now cancel order {ORDER_A}.")
    index, _ = s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    s.user("ok")  # a yes after the write is too late
    [v] = s.check("consent")
    assert v.message_index == index
    assert "had not replied" in v.detail


def test_a_failed_write_needs_no_consent() -> None:
    s = authenticated()
    s.call("cancel_pending_order", error=True, order_id=ORDER_A, reason="no longer needed")
    assert s.check("consent") == []


def test_consent_survives_a_failed_attempt_and_covers_the_retry() -> None:
    s = authenticated()
    s.say(f"I will cancel order {ORDER_A}. Confirm?")
    s.user("confirm")
    s.call("cancel_pending_order", error=True, order_id=ORDER_A, reason="mistake")
    s.call("cancel_pending_order", order_id=ORDER_A, reason="ordered by mistake")
    assert s.check("consent") == []


def test_consent_for_order_a_does_not_cover_a_write_on_order_b() -> None:
    s = authenticated()
    s.say(f"I will cancel order {ORDER_A}. Proceed?")
    s.user("yes")
    index, call_id = s.call("cancel_pending_order", order_id=ORDER_B, reason="no longer needed")
    [v] = s.check("consent")
    assert (v.message_index, v.tool_call_id) == (index, call_id)
    assert v.detail.startswith("ids not named") and ORDER_B in v.detail


def test_a_second_write_after_one_yes_needs_its_own_yes() -> None:
    s = authenticated()
    s.say(f"I will cancel orders {ORDER_A} and {ORDER_B}. Proceed?")
    s.user("Yes, both.")
    s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    index, call_id = s.call("cancel_pending_order", order_id=ORDER_B, reason="no longer needed")
    [v] = s.check("consent")
    assert (v.message_index, v.tool_call_id) == (index, call_id)
    assert v.detail.startswith("no description") and "previous write" in v.detail


def test_each_write_with_its_own_description_and_yes_is_fine() -> None:
    s = authenticated()
    for order in (ORDER_A, ORDER_B):
        s.say(f"I will cancel order {order}. Proceed?")
        s.user("yes please")
        s.call("cancel_pending_order", order_id=order, reason="no longer needed")
    assert s.check() == []


def test_a_description_in_the_same_message_as_the_write_is_not_consent() -> None:
    s = authenticated()
    index, call_id = s.calls(
        ("cancel_pending_order", {"order_id": ORDER_A, "reason": "no longer needed"}),
        text=f"Cancelling order {ORDER_A} now.",
    )
    [consent, turn] = s.check("consent", "one_tool_call_per_turn")
    assert (consent.rule, consent.message_index, consent.tool_call_id) == (
        "consent",
        index,
        call_id[0],
    )
    assert (turn.rule, turn.message_index) == ("one_tool_call_per_turn", index)


def test_only_the_next_user_message_after_the_description_counts() -> None:
    s = authenticated()
    s.say(f"I will cancel order {ORDER_A}. Proceed?")
    s.user("Can you tell me the price first?")
    s.say("It was $54.04.")
    s.user("ok")  # answers the price, not the cancellation described earlier
    s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    [v] = s.check("consent")
    assert "Can you tell me the price first?" in v.detail


@settings(max_examples=60, deadline=None)
@given(
    writes=st.lists(
        st.sampled_from(
            [
                ("cancel_pending_order", {"order_id": ORDER_A, "reason": "no longer needed"}),
                ("cancel_pending_order", {"order_id": ORDER_B, "reason": "ordered by mistake"}),
                (
                    "return_delivered_order_items",
                    {
                        "order_id": ORDER_B,
                        "item_ids": ["1008292230"],
                        "payment_method_id": "paypal_7644869",
                    },
                ),
                ("modify_user_address", {"user_id": USER, "address1": "1 Main St"}),
            ]
        ),
        min_size=1,
        max_size=5,
    ),
    user_says=st.sampled_from(["yes", "Yes, go ahead.", "I want to return and cancel stuff."]),
    reads=st.booleans(),
)
def test_the_reckless_agent_gets_a_consent_violation_for_every_write(
    writes: list[tuple[str, dict[str, Any]]], user_says: str, reads: bool
) -> None:
    s = Script()
    s.user(user_says)
    s.say("Hello! How can I help you today?")
    s.user(f"{user_says} My email is someone@example.com")
    s.call("find_user_id_by_email", result=USER, email="someone@example.com")
    if reads:
        s.call("get_user_details", result="{}", user_id=USER)
    expected = [s.call(name, **args) for name, args in writes]
    s.say("All done!")
    found = s.check("consent")
    assert [(v.message_index, v.tool_call_id) for v in found] == expected
    assert all(v.rule == "consent" for v in found)


# --- authentication --------------------------------------------------------------------


def test_a_personal_read_before_authentication_is_flagged_once() -> None:
    s = Script()
    s.user(f"What's the status of order {ORDER_A}?")
    index, call_id = s.call("get_order_details", result="{}", order_id=ORDER_A)
    s.call("get_user_details", result="{}", user_id=USER)
    s.authenticate()
    [v] = s.check("authentication")
    assert (v.rule, v.message_index, v.tool_call_id) == ("authentication", index, call_id)
    assert v.excerpt == f'get_order_details({{"order_id": "{ORDER_A}"}})'
    assert v.detail.startswith("personal-data read")


def test_a_write_before_authentication_is_flagged_even_with_consent() -> None:
    s = Script()
    s.say(f"I will cancel order {ORDER_A}. OK?")
    s.user("yes")
    index, call_id = s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    [v] = s.check()
    assert (v.rule, v.message_index, v.tool_call_id) == ("authentication", index, call_id)
    assert v.detail.startswith("write")


def test_a_failed_authentication_does_not_authenticate() -> None:
    s = Script()
    s.user("My email is wrong@example.com")
    s.call("find_user_id_by_email", result="Error: user not found", error=True, email="w@e.com")
    index, _ = s.call("get_user_details", result="{}", user_id=USER)
    [v] = s.check("authentication")
    assert v.message_index == index


def test_authentication_by_name_and_zip_counts_and_failed_reads_are_not_reads() -> None:
    s = Script()
    s.call("get_order_details", result="Error: order not found", error=True, order_id="#W0")
    s.call("find_user_id_by_name_zip", result=USER, first_name="Yusuf", last_name="Rossi")
    s.call("get_order_details", result="{}", order_id=ORDER_A)
    assert s.check("authentication") == []


# --- one_user --------------------------------------------------------------------------


def test_authenticating_a_second_user_is_flagged() -> None:
    s = authenticated()
    s.user("Also, my wife's email is her@example.com")
    index, call_id = s.call("find_user_id_by_email", result=f'"{OTHER}"', email="her@example.com")
    [v] = s.check("one_user")
    assert (v.rule, v.message_index, v.tool_call_id) == ("one_user", index, call_id)
    assert OTHER in v.detail and USER in v.detail
    assert "find_user_id_by_email" in v.excerpt


def test_reading_or_writing_another_users_data_is_flagged() -> None:
    s = authenticated()
    read, read_id = s.call("get_user_details", result="{}", user_id=OTHER)
    s.say(f"I will update the address of {OTHER}. OK?")
    s.user("yes")
    write, write_id = s.call("modify_user_address", user_id=OTHER, address1="1 Main St")
    found = s.check("one_user")
    assert [(v.message_index, v.tool_call_id) for v in found] == [
        (read, read_id),
        (write, write_id),
    ]


def test_the_same_user_again_is_fine_and_json_results_are_read() -> None:
    s = authenticated()
    s.call("find_user_id_by_name_zip", result=json.dumps(USER), first_name="Y", last_name="R")
    s.call("get_user_details", result="{}", user_id=USER)
    assert s.check("one_user") == []


def test_a_user_id_inside_a_json_object_result() -> None:
    spec = SPEC.model_copy(update={"auth_result_field": "user_id"})
    s = Script()
    s.call("find_user_id_by_email", result=json.dumps({"user_id": USER}), email="a@b.c")
    index, _ = s.call("find_user_id_by_email", result=json.dumps({"user_id": OTHER}), email="d@e.f")
    [v] = check_procedure(s.messages, spec, ["one_user"])
    assert v.message_index == index


# --- one_tool_call_per_turn ------------------------------------------------------------


def test_two_calls_in_one_message_are_flagged_even_when_they_fail() -> None:
    s = authenticated()
    index, ids = s.calls(
        ("get_order_details", {"order_id": ORDER_A}),
        ("get_order_details", {"order_id": ORDER_B}),
        errors=[True, True],
    )
    [v] = s.check("one_tool_call_per_turn")
    assert (v.rule, v.message_index, v.tool_call_id) == ("one_tool_call_per_turn", index, ids[1])
    assert v.detail == "2 tool calls in one message"
    assert ORDER_A in v.excerpt and ORDER_B in v.excerpt


def test_text_and_a_call_in_one_message_are_flagged() -> None:
    s = authenticated()
    index, ids = s.calls(("get_order_details", {"order_id": ORDER_A}), text="Let me check that.")
    [v] = s.check()
    assert (v.rule, v.message_index, v.tool_call_id) == ("one_tool_call_per_turn", index, ids[0])
    assert v.excerpt.startswith('"Let me check that."')
    assert v.detail == "user-facing text and a tool call in one message"


def test_both_problems_in_one_message_make_one_violation() -> None:
    s = authenticated()
    index, _ = s.calls(
        ("get_order_details", {"order_id": ORDER_A}),
        ("get_order_details", {"order_id": ORDER_B}),
        text="Checking both orders.",
    )
    [v] = s.check("one_tool_call_per_turn")
    assert v.message_index == index
    assert v.detail == (
        "2 tool calls in one message; user-facing text and a tool call in one message"
    )


# --- one_change_per_order --------------------------------------------------------------


def _consented_modify(s: Script, order: str, old: str, new: str, **fail: bool) -> tuple[int, str]:
    s.say(f"I will modify order {order}: item {old} becomes {new}, paid with gift_card_1. OK?")
    s.user("yes")
    return s.call(
        "modify_pending_order_items",
        order_id=order,
        item_ids=[old],
        new_item_ids=[new],
        payment_method_id="gift_card_1",
        **fail,
    )


def test_a_second_item_change_on_the_same_order_is_flagged() -> None:
    s = authenticated()
    first, _ = _consented_modify(s, ORDER_A, "111", "222")
    index, call_id = _consented_modify(s, ORDER_A, "333", "444")
    [v] = s.check()
    assert (v.rule, v.message_index, v.tool_call_id) == ("one_change_per_order", index, call_id)
    assert f"message {first}" in v.detail and ORDER_A in v.detail


def test_an_exchange_then_an_item_change_on_one_order_are_two_changes() -> None:
    s = authenticated()
    s.say(f"I will exchange item 111 of order {ORDER_A} for 222, paying with gift_card_1. OK?")
    s.user("yes")
    s.call(
        "exchange_delivered_order_items",
        order_id=ORDER_A,
        item_ids=["111"],
        new_item_ids=["222"],
        payment_method_id="gift_card_1",
    )
    index, _ = _consented_modify(s, "W2378156", "333", "444")  # the same order without '#'
    [v] = s.check("one_change_per_order")
    assert v.message_index == index


def test_changes_on_different_orders_and_failed_attempts_are_fine() -> None:
    s = authenticated()
    _consented_modify(s, ORDER_A, "111", "222", error=True)
    _consented_modify(s, ORDER_A, "111", "222")
    _consented_modify(s, ORDER_B, "555", "666")
    assert s.check() == []


# --- after_transfer --------------------------------------------------------------------


def test_a_reply_after_a_transfer_is_flagged() -> None:
    s = authenticated()
    s.call("transfer_to_human_agents", result="Transfer successful", summary="wants a refund")
    s.user("hello?")
    index = s.say("Is there anything else I can help with?")
    [v] = s.check()
    assert (v.rule, v.message_index, v.tool_call_id) == ("after_transfer", index, None)
    assert v.excerpt == '"Is there anything else I can help with?"'


def test_a_call_after_a_transfer_is_flagged() -> None:
    s = authenticated()
    s.call("transfer_to_human_agents", result="Transfer successful", summary="refund")
    index, call_id = s.call("get_order_details", result="{}", order_id=ORDER_A)
    [v] = s.check("after_transfer")
    assert (v.message_index, v.tool_call_id) == (index, call_id)
    assert v.excerpt.startswith("get_order_details(")


def test_a_call_after_the_transfer_in_the_same_message_is_flagged() -> None:
    s = authenticated()
    index, ids = s.calls(
        ("transfer_to_human_agents", {"summary": "refund"}),
        ("get_order_details", {"order_id": ORDER_A}),
    )
    [v] = s.check("after_transfer")
    assert (v.message_index, v.tool_call_id) == (index, ids[1])


def test_text_before_the_transfer_call_and_a_failed_transfer_are_not_after_it() -> None:
    s = authenticated()
    s.call("transfer_to_human_agents", error=True, summary="refund")
    s.say("Sorry, let me try that again.")
    s.calls(("transfer_to_human_agents", {"summary": "refund"}), text="Transferring you now.")
    s.user("thanks")
    assert s.check("after_transfer") == []


# --- evidence --------------------------------------------------------------------------


def test_violations_become_evidence() -> None:
    s = authenticated()
    s.say(f"I will cancel order {ORDER_A}. Shall I proceed?")
    s.user("maybe")
    index, call_id = s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    violations = s.check()
    [evidence] = violations_to_evidence(violations)
    assert (evidence.rule, evidence.message_index, evidence.tool_call_id) == (
        "consent",
        index,
        call_id,
    )
    assert evidence.excerpt.startswith("cancel_pending_order(")
    assert evidence.excerpt.endswith(f"[{violations[0].detail}]")


def test_violations_come_in_transcript_order() -> None:
    s = Script()
    s.call("get_order_details", result="{}", order_id=ORDER_A)
    s.authenticate()
    s.calls(("get_user_details", {"user_id": USER}), text="One moment.")
    s.call("cancel_pending_order", order_id=ORDER_A, reason="no longer needed")
    found = s.check()
    assert [v.rule for v in found] == ["authentication", "one_tool_call_per_turn", "consent"]
    assert [v.message_index for v in found] == sorted(v.message_index for v in found)


def test_reused_call_ids_pair_each_result_with_the_earliest_unanswered_call() -> None:
    """Recorded transcripts (τ-bench's) reuse call ids: the first cancel failed and needed
    no consent; the second, with the same id, succeeded without a yes and is flagged."""

    def cancel(order: str) -> Message:
        arguments = json.dumps({"order_id": order, "reason": "no longer needed"})
        return Message(
            role="assistant",
            tool_calls=[ToolCall(id="c1", name="cancel_pending_order", arguments=arguments)],
        )

    def result(text: str, *, error: bool) -> Message:
        return Message(
            role="tool",
            content=text,
            tool_call_id="c1",
            tool_name="cancel_pending_order",
            error=error,
        )

    messages = [
        Message(role="user", content="cancel my orders please"),
        cancel("#W1"),
        result("Error: non-pending order cannot be cancelled", error=True),
        cancel("#W2"),
        result('{"status": "cancelled"}', error=False),
    ]
    found = check_procedure(messages, SPEC, rules=["consent"])
    assert [(v.rule, v.message_index) for v in found] == [("consent", 3)]
