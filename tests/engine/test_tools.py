"""Tools: schemas derived from typed functions, and every bad call turned into a tool error."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from deedbench.engine import Tool, ToolBox, tool
from deedbench.errors import ToolError
from deedbench.records import Message, ToolCall


@dataclass
class Shop:
    """The state the tools act on; records what the tools saw."""

    orders: list[tuple[str, int, float, bool, str]] = field(default_factory=list)


@tool
def order(
    shop: Shop,
    item: str,
    quantity: int,
    price: float = 1.5,
    gift: bool = False,
    size: Literal["small", "large"] = "small",
) -> str:
    """Order an item from the shop.

    Charges nothing until shipped.

    Args:
        item: The item to order,
            as shown in the catalogue.
        quantity (int): How many to order.
        price: The unit price.
    Returns:
        A confirmation.
    """
    shop.orders.append((item, quantity, price, gift, size))
    return f"ordered {quantity} x {item}"


@tool(writes=True, name="cancel_everything")
def cancel(shop: Shop, reason: str) -> dict[str, Any]:
    """Cancel every order.

    Args:
        reason: Why.
    """
    if reason == "refuse":
        raise ToolError("cancellation is not allowed today")
    cancelled = len(shop.orders)
    shop.orders.clear()
    return {"cancelled": cancelled, "reason": reason}


@tool
def ping(shop: Shop) -> str:
    """Answer pong."""
    return "pong"


def call(box: ToolBox, name: str, arguments: str, call_id: str = "call_1") -> Message:
    return box.call(ToolCall(id=call_id, name=name, arguments=arguments))


@pytest.fixture
def shop() -> Shop:
    return Shop()


@pytest.fixture
def box(shop: Shop) -> ToolBox:
    return ToolBox([order, cancel, ping], shop)


# --- schema ---------------------------------------------------------------------------------


def test_decorator_builds_a_tool_with_name_summary_and_writes_flag() -> None:
    assert isinstance(order, Tool)
    assert order.name == "order"
    assert order.description == "Order an item from the shop. Charges nothing until shipped."
    assert order.writes is False
    assert cancel.name == "cancel_everything"
    assert cancel.writes is True


def test_schema_types_required_and_descriptions() -> None:
    params = order.parameters
    assert params["type"] == "object"
    assert params["additionalProperties"] is False
    # The first parameter is the state and never part of the schema.
    assert list(params["properties"]) == ["item", "quantity", "price", "gift", "size"]
    assert "shop" not in params["properties"]
    # Parameters with defaults are optional.
    assert params["required"] == ["item", "quantity"]
    props = params["properties"]
    assert props["item"] == {
        "type": "string",
        "description": "The item to order, as shown in the catalogue.",
    }
    assert props["quantity"] == {"type": "integer", "description": "How many to order."}
    assert props["price"]["type"] == "number"
    assert props["price"]["default"] == 1.5
    assert props["price"]["description"] == "The unit price."
    assert props["gift"]["type"] == "boolean"
    assert props["gift"]["default"] is False
    assert "description" not in props["gift"]  # not documented under Args:
    assert props["size"]["enum"] == ["small", "large"]
    assert props["size"]["default"] == "small"
    assert all("title" not in p for p in props.values())


def test_tool_without_agent_parameters_has_empty_schema() -> None:
    assert ping.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_spec_is_openai_function_format() -> None:
    assert cancel.spec == {
        "type": "function",
        "function": {
            "name": "cancel_everything",
            "description": "Cancel every order.",
            "parameters": cancel.parameters,
        },
    }


def test_toolbox_specs_lists_every_tool() -> None:
    box = ToolBox([order, ping], Shop())
    assert [s["function"]["name"] for s in box.specs()] == ["order", "ping"]


def test_tool_needs_a_state_parameter() -> None:
    def no_state() -> str:
        return ""

    with pytest.raises(TypeError, match="first parameter"):
        tool(no_state)


def test_tool_parameters_need_type_hints() -> None:
    def untyped(state: Shop, item):  # type: ignore[no-untyped-def]
        return item

    with pytest.raises(TypeError, match="'item' has no type hint"):
        tool(untyped)


# --- roles ----------------------------------------------------------------------------------


def test_a_tools_role_is_stated_where_it_is_defined() -> None:
    """What a tool does, whose it is and what a proposal of its change names, on the
    decorator; a read by default, the agent's, naming nothing."""
    assert (order.kind, order.writes, order.side, order.keys) == ("read", False, "agent", ())

    @tool(kind="write", keys=("reason",), side="user")
    def undo(shop: Shop, reason: str) -> str:
        """Undo."""
        return reason

    assert (undo.kind, undo.writes, undo.side, undo.keys) == ("write", True, "user", ("reason",))
    assert cancel.kind == "write"  # writes=True: a write unless a kind says otherwise


def test_keys_belong_to_a_tool_that_writes_and_name_its_arguments() -> None:
    def change(shop: Shop, item: str) -> str:
        return item

    with pytest.raises(TypeError, match="'change' changes nothing, so it has no keys"):
        tool(keys=("item",))(change)
    with pytest.raises(TypeError, match=r"keys \['order_id'\] are none of its arguments"):
        tool(kind="write", keys=("item", "order_id"))(change)


# --- valid calls ----------------------------------------------------------------------------


def test_valid_call_runs_function_on_the_state(box: ToolBox, shop: Shop) -> None:
    result = call(box, "order", '{"item": "tea", "quantity": 3}', call_id="c7")
    assert result.role == "tool"
    assert result.error is False
    assert result.content == "ordered 3 x tea"
    assert result.tool_call_id == "c7"
    assert result.tool_name == "order"
    # Defaults are filled in and the state object the toolbox holds was passed.
    assert shop.orders == [("tea", 3, 1.5, False, "small")]


def test_valid_call_with_every_optional_argument(box: ToolBox, shop: Shop) -> None:
    arguments = json.dumps(
        {"item": "mug", "quantity": 1, "price": 4, "gift": True, "size": "large"}
    )
    result = call(box, "order", arguments)
    assert result.error is False
    # An int is a valid JSON number for a float parameter.
    assert shop.orders == [("mug", 1, 4.0, True, "large")]


def test_non_string_result_is_returned_as_json(box: ToolBox, shop: Shop) -> None:
    shop.orders.append(("x", 1, 1.0, False, "small"))
    result = call(box, "cancel_everything", '{"reason": "moving"}')
    assert result.error is False
    assert json.loads(result.content) == {"cancelled": 1, "reason": "moving"}
    assert shop.orders == []


@pytest.mark.parametrize("arguments", ["", "   ", "{}"])
def test_empty_arguments_mean_no_arguments(box: ToolBox, arguments: str) -> None:
    result = call(box, "ping", arguments)
    assert result.error is False
    assert result.content == "pong"


# --- bad calls ------------------------------------------------------------------------------


def assert_tool_error(result: Message, *fragments: str) -> None:
    """A bad call is an error observation for the agent, naming what was wrong."""
    assert result.role == "tool"
    assert result.error is True
    assert result.content.startswith("Error:")
    for fragment in fragments:
        assert fragment in result.content


def test_invalid_json(box: ToolBox, shop: Shop) -> None:
    result = call(box, "order", '{"item": "tea", "quantity": ')
    assert_tool_error(result, "not valid JSON", "order")
    assert shop.orders == []


@pytest.mark.parametrize("arguments", ['["tea", 3]', '"tea"', "3", "null"])
def test_arguments_must_be_an_object(box: ToolBox, shop: Shop, arguments: str) -> None:
    assert_tool_error(call(box, "order", arguments), "must be a JSON object")
    assert shop.orders == []


def test_unknown_tool_lists_available_tools(box: ToolBox) -> None:
    result = call(box, "refund", "{}", call_id="c9")
    assert_tool_error(
        result, "unknown tool 'refund'", "Available tools: cancel_everything, order, ping"
    )
    assert result.tool_call_id == "c9"
    assert result.tool_name == "refund"


def test_missing_argument(box: ToolBox, shop: Shop) -> None:
    result = call(box, "order", '{"item": "tea"}')
    assert_tool_error(result, "missing required argument 'quantity'")
    assert "'item'" not in result.content
    assert shop.orders == []


def test_empty_arguments_for_tool_with_required_parameters(box: ToolBox) -> None:
    result = call(box, "order", "")
    assert_tool_error(
        result, "missing required argument 'item'", "missing required argument 'quantity'"
    )


def test_extra_argument(box: ToolBox, shop: Shop) -> None:
    result = call(box, "order", '{"item": "tea", "quantity": 1, "colour": "red"}')
    assert_tool_error(result, "unexpected argument 'colour'")
    assert shop.orders == []


@pytest.mark.parametrize(
    ("arguments", "argument", "got"),
    [
        ('{"item": "tea", "quantity": "2"}', "quantity", "'2'"),
        ('{"item": "tea", "quantity": 2.5}', "quantity", "2.5"),
        ('{"item": 7, "quantity": 2}', "item", "7"),
        ('{"item": "tea", "quantity": 2, "gift": 1}', "gift", "1"),
        ('{"item": "tea", "quantity": 2, "price": "cheap"}', "price", "'cheap'"),
        ('{"item": "tea", "quantity": 2, "size": "huge"}', "size", "'huge'"),
    ],
)
def test_wrong_type(box: ToolBox, shop: Shop, arguments: str, argument: str, got: str) -> None:
    result = call(box, "order", arguments)
    assert_tool_error(result, f"argument '{argument}'", f"(got {got})")
    assert shop.orders == []


def test_several_problems_are_all_named(box: ToolBox) -> None:
    result = call(box, "order", '{"quantity": "2", "colour": "red"}')
    assert_tool_error(
        result,
        "missing required argument 'item'",
        "argument 'quantity'",
        "unexpected argument 'colour'",
    )


def test_tool_error_becomes_error_message(box: ToolBox) -> None:
    result = call(box, "cancel_everything", '{"reason": "refuse"}')
    assert result.error is True
    assert result.content == "Error: cancellation is not allowed today"
