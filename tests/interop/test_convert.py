"""A deedbench message survives the trip through Inspect with what scorers read."""

from __future__ import annotations

import pytest

pytest.importorskip("inspect_ai", reason="Inspect AI is not installed (the 'inspect' extra)")

from inspect_ai.model import ChatMessageTool, ModelUsage
from inspect_ai.tool import ToolCallError, ToolInfo, ToolParams

from deedbench.benchmarks.tac.tools import TOOLS
from deedbench.engine import Tool
from deedbench.interop.convert import (
    from_inspect,
    to_inspect,
    tool_spec_from_inspect,
    usage_from_inspect,
    usage_to_inspect,
)
from deedbench.records import Message, ToolCall, Usage

MESSAGES = [
    Message(role="system", content="You book trips."),
    Message(role="user", content="bullfight tickets pls"),
    Message(
        role="assistant",
        content="Let me look.",
        reasoning="The user wants Seville.",
        tool_calls=[
            ToolCall(id="a", name="purchase_tickets", arguments='{"experience_id": "sev-01"}'),
            ToolCall(id="b", name="purchase_tickets", arguments='{"experience_id": "sev'),
            ToolCall(id="c", name="search_experiences", arguments="[1, 2]"),
        ],
    ),
    Message(role="tool", content="Booked.", tool_call_id="a", tool_name="purchase_tickets"),
    Message(
        role="tool",
        content="Error: arguments for purchase_tickets are not valid JSON.",
        tool_call_id="b",
        tool_name="purchase_tickets",
        error=True,
    ),
    Message(role="assistant", content="Done."),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.role)
def test_round_trip_keeps_roles_text_calls_and_errors(message: Message) -> None:
    assert from_inspect(to_inspect(message)) == message


def test_unparseable_arguments_stay_unparseable() -> None:
    [_, broken, not_an_object] = to_inspect(MESSAGES[2]).tool_calls or []
    assert broken.arguments == {} and broken.parse_error == '{"experience_id": "sev'
    assert not_an_object.parse_error == "[1, 2]"


def test_an_inspect_tool_error_reads_as_deedbench_writes_one() -> None:
    failed = ChatMessageTool(
        content="", tool_call_id="x", function="f", error=ToolCallError("parsing", "bad input")
    )
    message = from_inspect(failed)
    assert (message.content, message.error, message.tool_name) == ("Error: bad input", True, "f")


def test_usage_counts_cached_prompt_tokens_inside_input_tokens() -> None:
    inspect_usage = ModelUsage(
        input_tokens=70, output_tokens=9, total_tokens=109, input_tokens_cache_read=30
    )
    usage = usage_from_inspect(inspect_usage, calls=2)
    assert usage == Usage(input_tokens=100, output_tokens=9, cached_input_tokens=30, calls=2)
    back = usage_to_inspect(usage)
    assert (back.input_tokens, back.input_tokens_cache_read, back.total_tokens) == (70, 30, 109)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_an_inspect_tool_info_gives_back_the_spec_deedbench_gives_agents(tool: Tool) -> None:
    """Inspect describes deedbench's tools with their own schema; read back, it is the spec."""
    parameters = ToolParams.model_validate(tool.parameters)
    info = ToolInfo(name=tool.name, description=tool.description, parameters=parameters)
    assert tool_spec_from_inspect(info) == tool.spec
