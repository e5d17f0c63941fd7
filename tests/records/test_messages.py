"""ToolCall's parsed view: decoded once, shared by every reader, never stored."""

from __future__ import annotations

from deedbench.records import ToolCall


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
