"""The 16 retail tools on a small hand-made world in τ-bench's shape (the three every desk
has, `calculate`, `think` and `transfer_to_human_agents`, are tested with the desk).

Every success path checks the exact change τ-bench makes (and that nothing else
was touched); every error path checks the message and that nothing changed.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from deedbench.benchmarks.retail.tools import RETAIL_TOOLS, WRITE_TOOLS, cancel_pending_order
from deedbench.benchmarks.servicedesk import DeskWorld
from deedbench.engine import ToolBox
from deedbench.errors import ToolError
from deedbench.records import Message, ToolCall

ADDRESS = {
    "address1": "1 Elm St",
    "address2": "",
    "city": "Springfield",
    "country": "USA",
    "state": "IL",
    "zip": "62701",
}
COUNT_MISMATCH = "the number of items to be exchanged should match"
LOW_GIFT_CARD_ITEMS = "insufficient gift card balance to pay for the new item"
LOW_GIFT_CARD_EXCHANGE = "insufficient gift card balance to pay for the price difference"
WRONG_REFUND_METHOD = "payment method should be either the original payment method or a gift card"
NEW_ADDRESS = {
    "address1": "9 Oak Ave",
    "address2": "Apt 4",
    "city": "Chicago",
    "state": "IL",
    "country": "USA",
    "zip": "60601",
}


def _item(product_id: str, name: str, item_id: str, price: float, **options: str) -> dict[str, Any]:
    return {
        "name": name,
        "product_id": product_id,
        "item_id": item_id,
        "price": price,
        "options": options,
    }


def _variant(item_id: str, price: float, available: bool, **options: str) -> dict[str, Any]:
    return {"item_id": item_id, "options": options, "available": available, "price": price}


def _order(
    order_id: str, user_id: str, status: str, items: list[dict[str, Any]], *payments: Any
) -> dict[str, Any]:
    return {
        "order_id": order_id,
        "user_id": user_id,
        "address": dict(ADDRESS),
        "items": items,
        "fulfillments": [],
        "status": status,
        "payment_history": [
            {"transaction_type": kind, "amount": amount, "payment_method_id": method}
            for kind, amount, method in payments
        ],
    }


def make_base() -> dict[str, Any]:
    """Two customers, two products, eight orders: enough for every path of every tool."""
    shirt, mug = "P1", "P2"
    return {
        "users": {
            "ann_lee_1": {
                "name": {"first_name": "Ann", "last_name": "Lee"},
                "address": dict(ADDRESS, zip="10001"),
                "email": "Ann.Lee@example.com",
                "payment_methods": {
                    "credit_card_1": {"source": "credit_card", "id": "credit_card_1"},
                    "gift_card_1": {"source": "gift_card", "balance": 100, "id": "gift_card_1"},
                    "paypal_1": {"source": "paypal", "id": "paypal_1"},
                },
                "orders": ["#W1", "#W2", "#W3", "#W7", "#W8"],
            },
            "bob_ray_2": {
                "name": {"first_name": "Bob", "last_name": "Ray"},
                "address": dict(ADDRESS, zip="94105"),
                "email": "bob.ray@example.com",
                "payment_methods": {
                    "gift_card_2": {"source": "gift_card", "balance": 5, "id": "gift_card_2"},
                    "credit_card_2": {"source": "credit_card", "id": "credit_card_2"},
                },
                "orders": ["#W4", "#W5", "#W6"],
            },
        },
        "orders": {
            "#W1": _order(
                "#W1",
                "ann_lee_1",
                "pending",
                [
                    _item(shirt, "T-Shirt", "100", 20.0, color="blue", size="M"),
                    _item(shirt, "T-Shirt", "100", 20.0, color="blue", size="M"),
                    _item(mug, "Mug", "200", 10.0, color="white"),
                ],
                ("payment", 50.0, "gift_card_1"),
            ),
            "#W2": _order(
                "#W2",
                "ann_lee_1",
                "delivered",
                [
                    _item(shirt, "T-Shirt", "101", 25.5, color="red", size="M"),
                    _item(mug, "Mug", "200", 10.0, color="white"),
                ],
                ("payment", 35.5, "credit_card_1"),
            ),
            "#W3": _order(
                "#W3",
                "ann_lee_1",
                "processed",
                [_item(mug, "Mug", "201", 12.25, color="black")],
                ("payment", 12.25, "credit_card_1"),
            ),
            "#W4": _order(
                "#W4",
                "bob_ray_2",
                "pending",
                [_item(shirt, "T-Shirt", "100", 20.0, color="blue", size="M")],
                ("payment", 20.0, "credit_card_2"),
            ),
            "#W5": _order(
                "#W5",
                "bob_ray_2",
                "pending",
                [_item(mug, "Mug", "200", 10.0, color="white")],
                ("payment", 5.0, "credit_card_2"),
                ("payment", 5.0, "gift_card_2"),
            ),
            "#W6": _order(
                "#W6",
                "bob_ray_2",
                "delivered",
                [_item(mug, "Mug", "200", 10.0, color="white")],
                ("payment", 10.0, "credit_card_2"),
            ),
            "#W7": _order(
                "#W7",
                "ann_lee_1",
                "pending",
                [_item(shirt, "T-Shirt", "101", 25.5, color="red", size="M")],
                ("payment", 25.5, "credit_card_1"),
            ),
            "#W8": _order(
                "#W8",
                "ann_lee_1",
                "pending",
                [
                    _item(shirt, "T-Shirt", "100", 20.0, color="blue", size="M"),
                    _item(shirt, "T-Shirt", "101", 25.5, color="red", size="M"),
                ],
                ("payment", 45.5, "credit_card_1"),
            ),
        },
        "products": {
            shirt: {
                "name": "T-Shirt",
                "product_id": shirt,
                "variants": {
                    "100": _variant("100", 20.0, True, color="blue", size="M"),
                    "101": _variant("101", 25.5, True, color="red", size="M"),
                    "102": _variant("102", 30.0, False, color="green", size="L"),
                    "103": _variant("103", 20.1, True, color="grey", size="S"),
                },
            },
            mug: {
                "name": "Mug",
                "product_id": mug,
                "variants": {
                    "200": _variant("200", 10.0, True, color="white"),
                    "201": _variant("201", 12.25, True, color="black"),
                    "202": _variant("202", 30.0, True, color="gold"),
                },
            },
        },
    }


def exact(value: Any) -> str:
    return json.dumps(value)


@pytest.fixture
def world() -> Iterator[DeskWorld]:
    """A fresh world; afterwards its base must be exactly as it was built."""
    base = make_base()
    yield DeskWorld(base)
    assert exact(base) == exact(make_base()), "a tool mutated the shared base"


def call(world: DeskWorld, name: str, **kwargs: Any) -> Message:
    box = ToolBox(RETAIL_TOOLS, world)
    return box.call(ToolCall(id="call-1", name=name, arguments=json.dumps(kwargs)))


def ok(world: DeskWorld, name: str, **kwargs: Any) -> str:
    message = call(world, name, **kwargs)
    assert not message.error, message.content
    return message.content


def fails(world: DeskWorld, name: str, expected: str, **kwargs: Any) -> None:
    """The call returns exactly `Error: expected` and leaves the world untouched."""
    before = world.touched()
    message = call(world, name, **kwargs)
    assert message.error
    assert message.content == f"Error: {expected}"
    assert world.touched() == before


def order(world: DeskWorld, order_id: str) -> dict[str, Any]:
    found = world.get("orders", order_id)
    assert found is not None
    return found


def balance(world: DeskWorld, user_id: str, method_id: str) -> Any:
    user = world.get("users", user_id)
    assert user is not None
    return user["payment_methods"][method_id]["balance"]


# --- the tool set -----------------------------------------------------------------------------


REQUIRED = {
    "find_user_id_by_email": ["email"],
    "find_user_id_by_name_zip": ["first_name", "last_name", "zip"],
    "get_user_details": ["user_id"],
    "get_order_details": ["order_id"],
    "get_product_details": ["product_id"],
    "list_all_product_types": [],
    "calculate": ["expression"],
    "think": ["thought"],
    "transfer_to_human_agents": ["summary"],
    "cancel_pending_order": ["order_id", "reason"],
    "modify_pending_order_address": [
        "order_id",
        "address1",
        "address2",
        "city",
        "state",
        "country",
        "zip",
    ],
    "modify_pending_order_payment": ["order_id", "payment_method_id"],
    "modify_pending_order_items": ["order_id", "item_ids", "new_item_ids", "payment_method_id"],
    "modify_user_address": ["user_id", "address1", "address2", "city", "state", "country", "zip"],
    "return_delivered_order_items": ["order_id", "item_ids", "payment_method_id"],
    "exchange_delivered_order_items": [
        "order_id",
        "item_ids",
        "new_item_ids",
        "payment_method_id",
    ],
}


def test_the_sixteen_tools_in_order_with_their_required_arguments() -> None:
    assert [t.name for t in RETAIL_TOOLS] == list(REQUIRED)
    for t in RETAIL_TOOLS:
        assert t.parameters["required"] == REQUIRED[t.name], t.name
        assert set(t.parameters["properties"]) == set(REQUIRED[t.name]), t.name
        assert t.description, t.name
        for name, prop in t.parameters["properties"].items():
            assert prop.get("description"), f"{t.name}.{name} has no description"


def test_schemas_type_lists_of_item_ids_and_the_cancel_reasons() -> None:
    by_name = {t.name: t for t in RETAIL_TOOLS}
    for name in (
        "modify_pending_order_items",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
    ):
        item_ids = by_name[name].parameters["properties"]["item_ids"]
        assert item_ids["type"] == "array" and item_ids["items"] == {"type": "string"}
    reason = by_name["cancel_pending_order"].parameters["properties"]["reason"]
    assert reason["enum"] == ["no longer needed", "ordered by mistake"]


def test_exactly_seven_tools_write() -> None:
    writes = {
        "cancel_pending_order",
        "modify_pending_order_address",
        "modify_pending_order_payment",
        "modify_pending_order_items",
        "modify_user_address",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
    }
    assert writes == WRITE_TOOLS
    assert {t.name for t in RETAIL_TOOLS if t.writes} == WRITE_TOOLS
    assert isinstance(RETAIL_TOOLS, tuple) and len(RETAIL_TOOLS) == 16


def test_write_tools_ask_for_explicit_confirmation() -> None:
    for t in RETAIL_TOOLS:
        if t.name in WRITE_TOOLS:
            assert '"yes"' in t.description, t.name


# --- reading tools ----------------------------------------------------------------------------


def test_find_user_by_email_ignores_case(world: DeskWorld) -> None:
    assert ok(world, "find_user_id_by_email", email="ann.lee@EXAMPLE.com") == "ann_lee_1"
    fails(world, "find_user_id_by_email", "user not found", email="ann@example.com")


def test_find_user_by_name_and_zip(world: DeskWorld) -> None:
    found = ok(world, "find_user_id_by_name_zip", first_name="bob", last_name="RAY", zip="94105")
    assert found == "bob_ray_2"
    fails(
        world,
        "find_user_id_by_name_zip",
        "user not found",
        first_name="Bob",
        last_name="Ray",
        zip="10001",
    )


def test_find_user_by_name_and_zip_sees_a_changed_address(world: DeskWorld) -> None:
    ok(world, "modify_user_address", user_id="bob_ray_2", **NEW_ADDRESS)
    args = {"first_name": "Bob", "last_name": "Ray"}
    assert ok(world, "find_user_id_by_name_zip", zip="60601", **args) == "bob_ray_2"
    fails(world, "find_user_id_by_name_zip", "user not found", zip="94105", **args)


def test_get_details_return_the_records_as_json(world: DeskWorld) -> None:
    assert ok(world, "get_user_details", user_id="ann_lee_1") == json.dumps(
        world.get("users", "ann_lee_1")
    )
    assert ok(world, "get_order_details", order_id="#W2") == json.dumps(order(world, "#W2"))
    assert ok(world, "get_product_details", product_id="P2") == json.dumps(
        world.get("products", "P2")
    )


def test_get_details_errors(world: DeskWorld) -> None:
    fails(world, "get_user_details", "user not found", user_id="nobody")
    fails(world, "get_order_details", "order not found", order_id="W1")
    fails(world, "get_product_details", "product not found", product_id="100")


def test_list_all_product_types_is_sorted_by_name(world: DeskWorld) -> None:
    assert ok(world, "list_all_product_types") == '{"Mug": "P2", "T-Shirt": "P1"}'


def test_reads_never_touch_the_world(world: DeskWorld) -> None:
    ok(world, "find_user_id_by_email", email="bob.ray@example.com")
    ok(world, "find_user_id_by_name_zip", first_name="Ann", last_name="Lee", zip="10001")
    ok(world, "get_user_details", user_id="ann_lee_1")
    ok(world, "get_order_details", order_id="#W1")
    ok(world, "get_product_details", product_id="P1")
    ok(world, "list_all_product_types")
    ok(world, "calculate", expression="1 + 1")
    ok(world, "think", thought="hmm")
    ok(world, "transfer_to_human_agents", summary="help")
    call(world, "get_order_details", order_id="#W999")
    call(world, "calculate", expression="1 / 0")
    assert world.touched() == {}


def test_bad_arguments_are_rejected_before_the_tool_runs(world: DeskWorld) -> None:
    message = call(world, "return_delivered_order_items", order_id="#W2", item_ids="101")
    assert message.error
    assert "item_ids" in message.content and "payment_method_id" in message.content
    assert world.touched() == {}


# --- cancel_pending_order ---------------------------------------------------------------------


def test_cancel_refunds_a_gift_card_at_once(world: DeskWorld) -> None:
    text = ok(world, "cancel_pending_order", order_id="#W1", reason="ordered by mistake")
    cancelled = order(world, "#W1")
    assert json.loads(text) == cancelled
    assert cancelled["status"] == "cancelled"
    assert cancelled["cancel_reason"] == "ordered by mistake"
    assert cancelled["payment_history"][1:] == [
        {"transaction_type": "refund", "amount": 50.0, "payment_method_id": "gift_card_1"}
    ]
    assert balance(world, "ann_lee_1", "gift_card_1") == 150.0
    assert world.touched() == {"orders": {"#W1"}, "users": {"ann_lee_1"}}


def test_cancel_refunds_a_card_without_touching_the_customer(world: DeskWorld) -> None:
    ok(world, "cancel_pending_order", order_id="#W4", reason="no longer needed")
    assert order(world, "#W4")["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 20.0,
        "payment_method_id": "credit_card_2",
    }
    assert world.touched() == {"orders": {"#W4"}}


def test_cancel_refunds_every_payment(world: DeskWorld) -> None:
    ok(world, "cancel_pending_order", order_id="#W5", reason="no longer needed")
    refunds = order(world, "#W5")["payment_history"][2:]
    assert [(r["amount"], r["payment_method_id"]) for r in refunds] == [
        (5.0, "credit_card_2"),
        (5.0, "gift_card_2"),
    ]
    assert balance(world, "bob_ray_2", "gift_card_2") == 10.0


def test_cancel_after_a_payment_change_refunds_every_history_entry(world: DeskWorld) -> None:
    """τ-bench refunds each payment_history entry, refunds included: a gift card that was
    already refunded by the payment change is credited twice more."""
    ok(world, "modify_pending_order_payment", order_id="#W1", payment_method_id="paypal_1")
    assert order(world, "#W1")["status"] == "pending"
    ok(world, "cancel_pending_order", order_id="#W1", reason="no longer needed")
    refunds = order(world, "#W1")["payment_history"][3:]
    assert [(r["transaction_type"], r["payment_method_id"]) for r in refunds] == [
        ("refund", "gift_card_1"),
        ("refund", "paypal_1"),
        ("refund", "gift_card_1"),
    ]
    assert balance(world, "ann_lee_1", "gift_card_1") == 250.0


def test_cancel_errors(world: DeskWorld) -> None:
    fails(
        world, "cancel_pending_order", "order not found", order_id="#W0", reason="no longer needed"
    )
    for status_order in ("#W2", "#W3"):
        fails(
            world,
            "cancel_pending_order",
            "non-pending order cannot be cancelled",
            order_id=status_order,
            reason="no longer needed",
        )
    message = call(world, "cancel_pending_order", order_id="#W1", reason="too expensive")
    assert message.error and "reason" in message.content
    assert world.touched() == {}


def test_cancel_checks_the_reason_even_when_called_directly(world: DeskWorld) -> None:
    with pytest.raises(ToolError, match="invalid reason"):
        cancel_pending_order.function(world, "#W1", "too expensive")
    assert world.touched() == {}


def test_an_order_with_modified_items_can_no_longer_be_cancelled(world: DeskWorld) -> None:
    ok(
        world,
        "modify_pending_order_items",
        order_id="#W4",
        item_ids=["100"],
        new_item_ids=["101"],
        payment_method_id="credit_card_2",
    )
    fails(
        world,
        "cancel_pending_order",
        "non-pending order cannot be cancelled",
        order_id="#W4",
        reason="no longer needed",
    )


# --- modify_pending_order_address and modify_user_address -------------------------------------


def test_modify_order_address(world: DeskWorld) -> None:
    text = ok(world, "modify_pending_order_address", order_id="#W4", **NEW_ADDRESS)
    assert order(world, "#W4")["address"] == NEW_ADDRESS
    assert list(order(world, "#W4")["address"]) == list(NEW_ADDRESS)
    assert json.loads(text) == order(world, "#W4")
    assert world.touched() == {"orders": {"#W4"}}


def test_modify_order_address_errors(world: DeskWorld) -> None:
    fails(world, "modify_pending_order_address", "order not found", order_id="#W0", **NEW_ADDRESS)
    fails(
        world,
        "modify_pending_order_address",
        "non-pending order cannot be modified",
        order_id="#W2",
        **NEW_ADDRESS,
    )


def test_the_same_address_is_accepted_as_in_tau_bench(world: DeskWorld) -> None:
    """τ-bench has no same-address check; setting the current address changes nothing."""
    current = dict(order(world, "#W4")["address"])
    ok(world, "modify_pending_order_address", order_id="#W4", **current)
    assert order(world, "#W4")["address"] == current


def test_modify_user_address(world: DeskWorld) -> None:
    text = ok(world, "modify_user_address", user_id="ann_lee_1", **NEW_ADDRESS)
    user = world.get("users", "ann_lee_1")
    assert user is not None and user["address"] == NEW_ADDRESS
    assert json.loads(text) == user
    assert world.touched() == {"users": {"ann_lee_1"}}
    assert order(world, "#W1")["address"] == ADDRESS  # orders keep their own address
    fails(world, "modify_user_address", "user not found", user_id="nobody", **NEW_ADDRESS)


# --- modify_pending_order_payment -------------------------------------------------------------


def test_modify_payment_from_a_gift_card_refunds_it(world: DeskWorld) -> None:
    text = ok(world, "modify_pending_order_payment", order_id="#W1", payment_method_id="paypal_1")
    history = order(world, "#W1")["payment_history"]
    assert history[1:] == [
        {"transaction_type": "payment", "amount": 50.0, "payment_method_id": "paypal_1"},
        {"transaction_type": "refund", "amount": 50.0, "payment_method_id": "gift_card_1"},
    ]
    assert balance(world, "ann_lee_1", "gift_card_1") == 150.0
    assert json.loads(text) == order(world, "#W1")
    assert world.touched() == {"orders": {"#W1"}, "users": {"ann_lee_1"}}


def test_modify_payment_to_a_gift_card_charges_it(world: DeskWorld) -> None:
    ok(world, "modify_pending_order_payment", order_id="#W7", payment_method_id="gift_card_1")
    assert balance(world, "ann_lee_1", "gift_card_1") == 74.5
    assert order(world, "#W7")["payment_history"][-1]["payment_method_id"] == "credit_card_1"


def test_modify_payment_between_cards_leaves_the_customer_alone(world: DeskWorld) -> None:
    ok(world, "modify_pending_order_payment", order_id="#W7", payment_method_id="paypal_1")
    assert world.touched() == {"orders": {"#W7"}}


@pytest.mark.parametrize(
    ("order_id", "method", "error"),
    [
        ("#W0", "paypal_1", "order not found"),
        ("#W2", "paypal_1", "non-pending order cannot be modified"),
        ("#W1", "credit_card_2", "payment method not found"),
        ("#W5", "credit_card_2", "there should be exactly one payment for a pending order"),
        ("#W1", "gift_card_1", "the new payment method should be different from the current one"),
        ("#W4", "gift_card_2", "insufficient gift card balance to pay for the order"),
    ],
)
def test_modify_payment_errors(world: DeskWorld, order_id: str, method: str, error: str) -> None:
    fails(world, "modify_pending_order_payment", error, order_id=order_id, payment_method_id=method)


# --- modify_pending_order_items ---------------------------------------------------------------


def modify_items(world: DeskWorld, order_id: str, old: list[str], new: list[str], pay: str) -> str:
    return ok(
        world,
        "modify_pending_order_items",
        order_id=order_id,
        item_ids=old,
        new_item_ids=new,
        payment_method_id=pay,
    )


def test_modify_items_charges_the_difference(world: DeskWorld) -> None:
    text = modify_items(world, "#W1", ["100"], ["101"], "credit_card_1")
    changed = order(world, "#W1")
    assert json.loads(text) == changed
    assert changed["status"] == "pending (item modified)"
    assert [i["item_id"] for i in changed["items"]] == ["101", "100", "200"]
    assert changed["items"][0]["price"] == 25.5
    assert changed["items"][0]["options"] == {"color": "red", "size": "M"}
    assert changed["payment_history"][-1] == {
        "transaction_type": "payment",
        "amount": 5.5,
        "payment_method_id": "credit_card_1",
    }
    assert world.touched() == {"orders": {"#W1"}}


def test_modify_items_with_duplicates_and_a_gift_card(world: DeskWorld) -> None:
    modify_items(world, "#W1", ["100", "100"], ["101", "103"], "gift_card_1")
    changed = order(world, "#W1")
    assert [i["item_id"] for i in changed["items"]] == ["101", "103", "200"]
    difference = 0 + (25.5 - 20.0) + (20.1 - 20.0)
    assert changed["payment_history"][-1]["amount"] == difference
    assert balance(world, "ann_lee_1", "gift_card_1") == round(100 - difference, 2)
    assert world.touched() == {"orders": {"#W1"}, "users": {"ann_lee_1"}}


def test_modify_items_records_an_unrounded_refund(world: DeskWorld) -> None:
    """τ-bench rounds gift-card balances but not the amount in payment_history."""
    modify_items(world, "#W7", ["101"], ["103"], "gift_card_1")
    entry = order(world, "#W7")["payment_history"][-1]
    assert entry["transaction_type"] == "refund"
    assert entry["amount"] == abs(0 + (20.1 - 25.5)) != 5.4
    assert balance(world, "ann_lee_1", "gift_card_1") == 105.4


def test_modify_items_to_the_same_item_records_a_zero_refund(world: DeskWorld) -> None:
    modify_items(world, "#W4", ["100"], ["100"], "credit_card_2")
    assert order(world, "#W4")["payment_history"][-1]["transaction_type"] == "refund"
    assert order(world, "#W4")["payment_history"][-1]["amount"] == 0.0


def test_modify_items_replaces_one_pair_at_a_time_like_tau_bench(world: DeskWorld) -> None:
    """Swapping two variants is a no-op: the second pair finds the line the first changed."""
    modify_items(world, "#W8", ["100", "101"], ["101", "100"], "credit_card_1")
    changed = order(world, "#W8")
    assert [(i["item_id"], i["price"]) for i in changed["items"]] == [("100", 20.0), ("101", 25.5)]
    assert changed["payment_history"][-1]["amount"] == 0.0
    assert changed["status"] == "pending (item modified)"


def test_modify_items_copies_the_variant_options(world: DeskWorld) -> None:
    modify_items(world, "#W4", ["100"], ["101"], "credit_card_2")
    options = order(world, "#W4")["items"][0]["options"]
    product = world.get("products", "P1")
    assert product is not None
    assert options == product["variants"]["101"]["options"]
    assert options is not product["variants"]["101"]["options"]


@pytest.mark.parametrize(
    ("order_id", "old", "new", "method", "error"),
    [
        ("#W0", ["100"], ["101"], "credit_card_1", "order not found"),
        ("#W2", ["101"], ["100"], "credit_card_1", "non-pending order cannot be modified"),
        ("#W1", ["999"], ["101"], "credit_card_1", "999 not found"),
        ("#W1", ["200", "200"], ["201", "201"], "credit_card_1", "200 not found"),
        ("#W1", ["100"], ["101", "103"], "credit_card_1", COUNT_MISMATCH),
        ("#W1", ["100"], ["102"], "credit_card_1", "new item 102 not found or available"),
        ("#W1", ["100"], ["200"], "credit_card_1", "new item 200 not found or available"),
        ("#W1", ["100"], ["101"], "credit_card_2", "payment method not found"),
        ("#W4", ["100"], ["101"], "gift_card_2", LOW_GIFT_CARD_ITEMS),
    ],
)
def test_modify_items_errors(
    world: DeskWorld, order_id: str, old: list[str], new: list[str], method: str, error: str
) -> None:
    fails(
        world,
        "modify_pending_order_items",
        error,
        order_id=order_id,
        item_ids=old,
        new_item_ids=new,
        payment_method_id=method,
    )


# --- return_delivered_order_items -------------------------------------------------------------


def test_return_to_the_original_payment_method(world: DeskWorld) -> None:
    text = ok(
        world,
        "return_delivered_order_items",
        order_id="#W2",
        item_ids=["200", "101"],
        payment_method_id="credit_card_1",
    )
    returned = order(world, "#W2")
    assert json.loads(text) == returned
    assert returned["status"] == "return requested"
    assert returned["return_items"] == ["101", "200"]
    assert returned["return_payment_method_id"] == "credit_card_1"
    assert len(returned["payment_history"]) == 1
    assert world.touched() == {"orders": {"#W2"}}


def test_return_to_a_gift_card_changes_no_balance(world: DeskWorld) -> None:
    ok(
        world,
        "return_delivered_order_items",
        order_id="#W2",
        item_ids=["101"],
        payment_method_id="gift_card_1",
    )
    assert balance(world, "ann_lee_1", "gift_card_1") == 100
    assert world.touched() == {"orders": {"#W2"}}


@pytest.mark.parametrize(
    ("order_id", "items", "method", "error"),
    [
        ("#W0", ["101"], "credit_card_1", "order not found"),
        ("#W1", ["100"], "gift_card_1", "non-delivered order cannot be returned"),
        ("#W2", ["101"], "credit_card_2", "payment method not found"),
        ("#W2", ["101"], "paypal_1", WRONG_REFUND_METHOD),
        ("#W2", ["100"], "credit_card_1", "some item not found"),
        ("#W2", ["101", "101"], "credit_card_1", "some item not found"),
    ],
)
def test_return_errors(
    world: DeskWorld, order_id: str, items: list[str], method: str, error: str
) -> None:
    fails(
        world,
        "return_delivered_order_items",
        error,
        order_id=order_id,
        item_ids=items,
        payment_method_id=method,
    )


def test_empty_item_lists_are_accepted_as_in_tau_bench(world: DeskWorld) -> None:
    args = {"order_id": "#W2", "item_ids": [], "payment_method_id": "credit_card_1"}
    ok(world, "return_delivered_order_items", **args)
    assert order(world, "#W2")["status"] == "return requested"
    assert order(world, "#W2")["return_items"] == []
    modify_items(world, "#W4", [], [], "credit_card_2")
    entry = order(world, "#W4")["payment_history"][-1]
    assert (entry["transaction_type"], entry["amount"]) == ("refund", 0)
    assert type(entry["amount"]) is int  # τ-bench's sum starts at int 0


def test_a_returned_order_cannot_be_returned_or_exchanged_again(world: DeskWorld) -> None:
    args = {"order_id": "#W2", "item_ids": ["101"], "payment_method_id": "credit_card_1"}
    ok(world, "return_delivered_order_items", **args)
    fails(world, "return_delivered_order_items", "non-delivered order cannot be returned", **args)
    fails(
        world,
        "exchange_delivered_order_items",
        "non-delivered order cannot be exchanged",
        new_item_ids=["100"],
        **args,
    )


# --- exchange_delivered_order_items -----------------------------------------------------------


def test_exchange_records_a_rounded_price_difference(world: DeskWorld) -> None:
    text = ok(
        world,
        "exchange_delivered_order_items",
        order_id="#W2",
        item_ids=["200", "101"],
        new_item_ids=["201", "103"],
        payment_method_id="gift_card_1",
    )
    exchanged = order(world, "#W2")
    assert json.loads(text) == exchanged
    assert exchanged["status"] == "exchange requested"
    assert exchanged["exchange_items"] == ["101", "200"]
    assert exchanged["exchange_new_items"] == ["103", "201"]
    assert exchanged["exchange_payment_method_id"] == "gift_card_1"
    assert exchanged["exchange_price_difference"] == round(0 + 2.25 + (20.1 - 25.5), 2) == -3.15
    assert [i["item_id"] for i in exchanged["items"]] == ["101", "200"]  # items are unchanged
    assert len(exchanged["payment_history"]) == 1
    assert balance(world, "ann_lee_1", "gift_card_1") == 100
    assert world.touched() == {"orders": {"#W2"}}


@pytest.mark.parametrize(
    ("order_id", "old", "new", "method", "error"),
    [
        ("#W0", ["101"], ["100"], "credit_card_1", "order not found"),
        ("#W1", ["100"], ["101"], "credit_card_1", "non-delivered order cannot be exchanged"),
        ("#W2", ["100"], ["101"], "credit_card_1", "100 not found"),
        ("#W2", ["101"], ["100", "103"], "credit_card_1", COUNT_MISMATCH),
        ("#W2", ["101"], ["102"], "credit_card_1", "new item 102 not found or available"),
        ("#W2", ["200"], ["100"], "credit_card_1", "new item 100 not found or available"),
        ("#W2", ["101"], ["100"], "gift_card_9", "payment method not found"),
        ("#W6", ["200"], ["202"], "gift_card_2", LOW_GIFT_CARD_EXCHANGE),
    ],
)
def test_exchange_errors(
    world: DeskWorld, order_id: str, old: list[str], new: list[str], method: str, error: str
) -> None:
    fails(
        world,
        "exchange_delivered_order_items",
        error,
        order_id=order_id,
        item_ids=old,
        new_item_ids=new,
        payment_method_id=method,
    )


def test_exchange_to_a_cheaper_item_is_allowed_on_a_small_gift_card(world: DeskWorld) -> None:
    """The balance check is against the (negative) difference, as in τ-bench."""
    ok(
        world,
        "exchange_delivered_order_items",
        order_id="#W2",
        item_ids=["101"],
        new_item_ids=["100"],
        payment_method_id="gift_card_1",
    )
    assert order(world, "#W2")["exchange_price_difference"] == -5.5


def test_writes_leave_every_other_record_shared(world: DeskWorld) -> None:
    """Every write leaves the base as built (checked by the fixture) and the
    other records shared with it."""
    ok(world, "cancel_pending_order", order_id="#W1", reason="no longer needed")
    fresh = make_base()
    assert world.get("orders", "#W2") is world.base["orders"]["#W2"]
    assert world.base["orders"]["#W1"] == fresh["orders"]["#W1"]
    assert copy.deepcopy(world.base) == fresh
