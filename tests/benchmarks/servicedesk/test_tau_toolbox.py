"""Turns run as τ-bench runs them: the first call of a turn, any arguments, `respond` calls
as replies, a transfer ending the episode whatever its arguments, and the actions that
make τ-bench's own run fail; and deedbench's loop over the same tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deedbench.benchmarks.retail import RETAIL, RETAIL_TOOLS, generate_world
from deedbench.benchmarks.servicedesk import DeskWorld, TauToolBox, agent_replies, conversation
from deedbench.engine import TurnOutcome
from deedbench.records import Message, Termination, ToolCall
from deedbench.scoring.procedure import ONE_TOOL_CALL_PER_TURN, check_procedure


@pytest.fixture(scope="module")
def base() -> dict[str, Any]:
    return generate_world(seed=3, users=8, orders=12, products=6)


def turn(*calls: tuple[str, Any], text: str = "") -> Message:
    made = [
        ToolCall(id=f"c{i}", name=name, arguments=a if isinstance(a, str) else json.dumps(a))
        for i, (name, a) in enumerate(calls)
    ]
    return Message(role="assistant", content=text, tool_calls=made)


def take(base: dict[str, Any], message: Message, *, taubench_loop: bool = True) -> TurnOutcome:
    return TauToolBox(RETAIL_TOOLS, DeskWorld(base), taubench_loop=taubench_loop).take_turn(message)


def a_user(base: dict[str, Any]) -> str:
    return next(iter(base["users"]))


def test_only_the_first_call_runs_and_the_rest_are_kept_as_dropped(base: dict[str, Any]) -> None:
    user = a_user(base)
    message = turn(("get_user_details", {"user_id": user}), ("think", {"thought": "x"}))
    outcome = take(base, message)
    assert [c.name for c in outcome.turn.tool_calls] == ["get_user_details"]
    assert [c.name for c in outcome.turn.dropped_tool_calls] == ["think"]
    assert [r.tool_call_id for r in outcome.results] == ["c0"]
    assert not outcome.hands_over and outcome.ends is None
    found = check_procedure([outcome.turn], RETAIL.procedure_spec, rules=[ONE_TOOL_CALL_PER_TURN])
    assert [v.detail for v in found] == ["2 tool calls in one message"]


def test_deedbench_loop_runs_every_call(base: dict[str, Any]) -> None:
    message = turn(("think", {"thought": "a"}), ("think", {"thought": "b"}))
    outcome = take(base, message, taubench_loop=False)
    assert len(outcome.results) == 2 and outcome.turn.dropped_tool_calls == []


def test_arguments_are_not_checked_and_errors_are_python_s(base: dict[str, Any]) -> None:
    outcome = take(base, turn(("get_order_details", {"order_id": ["#W1"]})))
    assert outcome.results[0].content == "Error: unhashable type: 'list'"
    assert outcome.results[0].error and outcome.ends is None
    missing = take(base, turn(("cancel_pending_order", {"order_id": "#W0"})))
    assert missing.results[0].content == (
        "Error: CancelPendingOrder.invoke() missing 1 required positional argument: 'reason'"
    )
    clash = take(base, turn(("think", {"thought": "x", "data": 1})))
    assert clash.results[0].content == (
        "Error: tau_bench.envs.retail.tools.think.Think.invoke() got multiple values for "
        "keyword argument 'data'"
    )


def test_an_unknown_tool_is_an_unknown_action(base: dict[str, Any]) -> None:
    outcome = take(base, turn(("refund_everything", {})))
    assert outcome.results[0].content == "Unknown action refund_everything"
    assert outcome.results[0].error and outcome.ends is None


def test_a_transfer_ends_the_episode_with_any_arguments(base: dict[str, Any]) -> None:
    for arguments in ({"summary": "help"}, {}, {"summary": 1, "extra": 2}):
        outcome = take(base, turn(("transfer_to_human_agents", arguments)))
        assert outcome.ends is Termination.TRANSFERRED, arguments


@pytest.mark.parametrize("arguments", ['{"order_id": "#W1"', "[1, 2]", "null", "", "7"])
def test_arguments_that_are_no_json_object_end_tau_bench_s_run(
    base: dict[str, Any], arguments: str
) -> None:
    outcome = take(base, turn(("get_order_details", arguments)))
    assert outcome.ends is Termination.INVALID_ACTION
    assert outcome.results[0].error and "τ-bench's run stops here" in outcome.results[0].content
    deedbench = take(base, turn(("get_order_details", arguments)), taubench_loop=False)
    assert deedbench.ends is None and deedbench.results[0].error


def test_a_respond_call_is_a_reply(base: dict[str, Any]) -> None:
    outcome = take(base, turn(("respond", {"content": "Your order is on its way."})))
    assert outcome.hands_over and outcome.ends is None and not outcome.results[0].error
    transcript = [Message(role="user", content="hi"), outcome.turn, *outcome.results]
    assert agent_replies(transcript) == ["Your order is on its way."]
    for broken in ({}, {"content": 7}):
        assert take(base, turn(("respond", broken))).ends is Termination.INVALID_ACTION


def test_a_fourth_certificate_ends_tau_bench_s_run() -> None:
    from deedbench.benchmarks.airline.tools import AIRLINE_TOOLS

    user = {
        "payment_methods": {
            f"certificate_32213{n}": {"source": "certificate", "amount": 10, "id": "x"}
            for n in (22, 23, 24)
        }
    }
    world = DeskWorld({"users": {"u": user}, "reservations": {}, "flights": {}})
    box = TauToolBox(AIRLINE_TOOLS, world)
    outcome = box.take_turn(turn(("send_certificate", {"user_id": "u", "amount": 5})))
    assert outcome.ends is Termination.INVALID_ACTION
    assert "returned None" in outcome.results[0].content


def test_text_that_came_with_a_call_is_no_reply(base: dict[str, Any]) -> None:
    user = a_user(base)
    box = TauToolBox(RETAIL_TOOLS, DeskWorld(base))
    with_call = box.take_turn(turn(("get_user_details", {"user_id": user}), text="One moment"))
    transcript = [
        Message(role="user", content="hi"),
        with_call.turn,
        *with_call.results,
        Message(role="assistant", content="Done."),
    ]
    assert agent_replies(transcript) == ["Done."]
    assert [m.role for m in conversation(transcript)] == ["user", "assistant"]
