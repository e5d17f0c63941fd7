"""ToolCall's parsed view (decoded once, shared, never stored); calls paired with results."""

from __future__ import annotations

from deedbench.records import Message, ToolCall, answered_calls


def test_args_are_decoded_once_and_shared() -> None:
    call = ToolCall(id="c1", name="book", arguments='{"seat": "12A"}')
    assert call.args == {"seat": "12A"}
    assert call.args is call.args  # one decoding, however many readers ask


def test_args_are_none_for_text_that_is_no_json_object() -> None:
    assert ToolCall(id="c", name="n", arguments="[1, 2]").args is None
    assert ToolCall(id="c", name="n", arguments="{not json").args is None


def test_a_copy_with_other_text_decodes_anew_and_dumps_carry_no_cache() -> None:
    call = ToolCall(id="c", name="n", arguments='{"a": 1}')
    assert call.args == {"a": 1}
    changed = call.model_copy(update={"arguments": '{"a": 2}'})
    assert changed.args == {"a": 2}
    assert call.model_dump() == {"id": "c", "name": "n", "arguments": '{"a": 1}'}


def test_decoded_arguments_serve_as_they_came() -> None:
    given = {"order_id": "#W1"}
    call = ToolCall.decoded("toolu_1", "cancel", given)
    assert call.arguments == '{"order_id": "#W1"}'
    assert call.args is given


def _call(call_id: str, name: str = "n") -> ToolCall:
    return ToolCall(id=call_id, name=name)


def test_a_result_answers_the_earliest_open_call_of_its_id_not_every_call() -> None:
    """gpt-4o reuses call ids across turns: a later failure must not fail an earlier call."""
    messages = [
        Message(role="assistant", tool_calls=[_call("x", "respond")]),
        Message(role="tool", tool_call_id="x", content="sent"),
        Message(role="assistant", tool_calls=[_call("x", "lookup")]),
        Message(role="tool", tool_call_id="x", content="Error: no", error=True),
        Message(role="assistant", tool_calls=[_call("y")]),  # never answered
    ]
    first, second, third = answered_calls(messages)
    assert (first.index, first.call.name, first.failed) == (0, "respond", False)
    assert first.result is messages[1]
    assert (second.index, second.failed) == (2, True)
    assert third.result is None and not third.failed  # cut short: not a failure


def test_the_user_s_calls_are_answered_by_the_user_s_results_only() -> None:
    messages = [
        Message(role="assistant", tool_calls=[_call("c")]),
        Message(role="user", tool_calls=[_call("c", "toggle")]),
        Message(role="tool", tool_call_id="c", requestor="user", content="Error", error=True),
        Message(role="tool", tool_call_id="c", content="ok"),
    ]
    agent, user = answered_calls(messages)
    assert agent.result is messages[3] and not agent.failed
    assert user.result is messages[2] and user.failed
