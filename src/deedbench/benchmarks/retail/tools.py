"""The 16 retail service-desk tools: τ-bench's retail tools, call for call.

Each tool does what τ-bench's does (sierra-research/tau-bench,
``tau_bench/envs/retail/tools``), in the same order, on the same values: the
same checks, the same error texts, the same changes to the database and the same
output, for any arguments. An error τ-bench returns is raised here as a
`ToolError` with its text; anything else that goes wrong goes wrong as in
τ-bench (a ``KeyError`` on an unknown id, a ``TypeError`` on an argument of the
wrong type, a change half made when a call fails midway), so that
`TauToolBox`, which runs tools as τ-bench's environment does, gives τ-bench's
observation for every call. deedbench's own retail benchmark checks every call
against the tool's schema first (`ToolBox`), so its tools only ever see
well-formed arguments. Tools read and write the database as ``data[table]``
(see `DeskWorld.__getitem__`), as τ-bench's read and write theirs.

τ-bench's arithmetic is kept: refunds to gift cards and balance changes are
rounded to cents, but the price difference a pending-order item change records in
``payment_history`` is not. `calculate` evaluates arithmetic without ``eval``
(`servicedesk.arithmetic`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from deedbench.benchmarks.servicedesk import (
    DeskWorld,
    Record,
    Table,
    calculate,
    copy_json,
    taubench_named,
    think,
    transfer_to_human_agents,
)
from deedbench.engine import tool
from deedbench.errors import ToolError

__all__ = [
    "CANCEL_REASONS",
    "RETAIL_TOOLS",
    "WRITE_TOOLS",
    "CancelReason",
]

CANCEL_REASONS = ("no longer needed", "ordered by mistake")

CancelReason = Literal["no longer needed", "ordered by mistake"]


# --- reading tools ----------------------------------------------------------------------------


@tool
def find_user_id_by_email(data: DeskWorld, email: str) -> str:
    """Find a customer's user id from their email address (case does not matter).
    Returns an error if no customer has that email.

    Args:
        email: The customer's email address, for example 'jane.doe1234@example.com'.
    """
    users = data["users"]
    for user_id, profile in users.items():
        if profile["email"].lower() == email.lower():
            return user_id
    raise ToolError("user not found")


@tool
def find_user_id_by_name_zip(data: DeskWorld, first_name: str, last_name: str, zip: str) -> str:
    """Find a customer's user id from their first name, last name and zip code.
    Look customers up by email first; use this only when the email is unknown or
    not found. Returns an error if no customer matches.

    Args:
        first_name: The customer's first name, for example 'Jane' (case does not matter).
        last_name: The customer's last name, for example 'Doe' (case does not matter).
        zip: The zip code of the customer's default address, for example '10001'.
    """
    users = data["users"]
    for user_id, profile in users.items():
        if (
            profile["name"]["first_name"].lower() == first_name.lower()
            and profile["name"]["last_name"].lower() == last_name.lower()
            and profile["address"]["zip"] == zip
        ):
            return user_id
    raise ToolError("user not found")


@tool
def get_user_details(data: DeskWorld, user_id: str) -> str:
    """Get a customer's profile: name, address, email, payment methods and order ids.

    Args:
        user_id: The user id, for example 'jane_doe_1234'.
    """
    users = data["users"]
    if user_id in users:
        return json.dumps(users[user_id])
    raise ToolError("user not found")


@tool
def get_order_details(data: DeskWorld, order_id: str) -> str:
    """Get an order's status, items, address, fulfilments and payment history.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
    """
    orders = data["orders"]
    if order_id in orders:
        return json.dumps(orders[order_id])
    raise ToolError("order not found")


@tool
def get_product_details(data: DeskWorld, product_id: str) -> str:
    """Get a product's inventory: every variant (item) with its options, price and availability.

    Args:
        product_id: The product id, for example '6086499569'. A product id is not
            an item id: items are the variants listed inside a product.
    """
    products = data["products"]
    if product_id in products:
        return json.dumps(products[product_id])
    raise ToolError("product not found")


@tool
def list_all_product_types(data: DeskWorld) -> str:
    """List every product type the store sells (50 of them) by name, with its product id.
    Each product type has many items (variants) with their own item ids and options.
    """
    by_name = {product["name"]: product["product_id"] for product in data["products"].values()}
    return json.dumps(dict(sorted(by_name.items())))


# --- writing tools ----------------------------------------------------------------------------


@tool(kind="write", keys=("order_id",))
def cancel_pending_order(data: DeskWorld, order_id: str, reason: CancelReason) -> str:
    """Cancel a pending order; processed or delivered orders cannot be cancelled. Explain
    the cancellation to the customer and get an explicit "yes" before calling this.
    The order becomes 'cancelled' and every payment is refunded: at once to a gift
    card, otherwise in 5-7 business days. Returns the order after cancellation.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        reason: Why the order is cancelled: 'no longer needed' or 'ordered by mistake'.
    """
    orders = data["orders"]
    if order_id not in orders:
        raise ToolError("order not found")
    order = orders[order_id]
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be cancelled")
    if reason not in list(CANCEL_REASONS):
        raise ToolError("invalid reason")
    refunds = []
    for payment in order["payment_history"]:
        payment_id = payment["payment_method_id"]
        refunds.append(
            {
                "transaction_type": "refund",
                "amount": payment["amount"],
                "payment_method_id": payment_id,
            }
        )
        if "gift_card" in payment_id:  # a gift card is refunded at once
            method = data["users"][order["user_id"]]["payment_methods"][payment_id]
            method["balance"] += payment["amount"]
            method["balance"] = round(method["balance"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return json.dumps(order)


@tool(kind="write", keys=("order_id", "address1", "zip"))
def modify_pending_order_address(
    data: DeskWorld,
    order_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> str:
    """Change the shipping address of a pending order. Explain the change to the customer
    and get an explicit "yes" before calling this. Returns the updated order.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        address1: The first address line, for example '123 Main St'.
        address2: The second address line, for example 'Apt 1', or '' if there is none.
        city: The city, for example 'San Francisco'.
        state: The state or province, for example 'CA'.
        country: The country, for example 'USA'.
        zip: The zip code, for example '12345'.
    """
    orders = data["orders"]
    if order_id not in orders:
        raise ToolError("order not found")
    order = orders[order_id]
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be modified")
    order["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(order)


@tool(kind="write", keys=("order_id", "payment_method_id"))
def modify_pending_order_payment(data: DeskWorld, order_id: str, payment_method_id: str) -> str:
    """Pay for a pending order with a different payment method: the new method is charged
    and the old one refunded. Explain the change to the customer and get an explicit
    "yes" before calling this. Returns the updated order.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        payment_method_id: The new payment method's id, for example 'gift_card_0000000'
            or 'credit_card_0000000', as listed in the customer's or the order's details.
    """
    orders = data["orders"]
    if order_id not in orders:
        raise ToolError("order not found")
    order = orders[order_id]
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be modified")
    if payment_method_id not in data["users"][order["user_id"]]["payment_methods"]:
        raise ToolError("payment method not found")
    history = order["payment_history"]
    if len(history) > 1 or history[0]["transaction_type"] != "payment":
        raise ToolError("there should be exactly one payment for a pending order")
    if history[0]["payment_method_id"] == payment_method_id:
        raise ToolError("the new payment method should be different from the current one")
    amount = history[0]["amount"]
    method = data["users"][order["user_id"]]["payment_methods"][payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise ToolError("insufficient gift card balance to pay for the order")
    history.extend(
        [
            {
                "transaction_type": "payment",
                "amount": amount,
                "payment_method_id": payment_method_id,
            },
            {
                "transaction_type": "refund",
                "amount": amount,
                "payment_method_id": history[0]["payment_method_id"],
            },
        ]
    )
    if method["source"] == "gift_card":
        method["balance"] -= amount
        method["balance"] = round(method["balance"], 2)
    if "gift_card" in history[0]["payment_method_id"]:  # the old gift card is refunded at once
        old = data["users"][order["user_id"]]["payment_methods"][history[0]["payment_method_id"]]
        old["balance"] += amount
        old["balance"] = round(old["balance"], 2)
    return json.dumps(order)


@tool(kind="write", keys=("order_id", "item_ids", "new_item_ids"))
def modify_pending_order_items(
    data: DeskWorld,
    order_id: str,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: str,
) -> str:
    """Change items of a pending order to other items (variants) of the same product. This
    can be done only once per pending order. Explain the change to the customer and get
    an explicit "yes" before calling this. Returns the updated order.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        item_ids: The ids of the items to change, for example ['1008292230']; an id may
            appear more than once.
        new_item_ids: The ids of the new items, in the same positions as `item_ids`;
            each must be an available variant of the same product as the item it replaces.
        payment_method_id: The id of the payment method that pays the price difference or
            receives its refund, for example 'gift_card_0000000' or 'credit_card_0000000'.
    """
    products, orders, users = data["products"], data["orders"], data["users"]
    if order_id not in orders:
        raise ToolError("order not found")
    order = orders[order_id]
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be modified")
    _check_items_in_order(order, item_ids, "{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("the number of items to be exchanged should match")
    difference = _price_difference(products, order, item_ids, new_item_ids)
    if payment_method_id not in users[order["user_id"]]["payment_methods"]:
        raise ToolError("payment method not found")
    method = users[order["user_id"]]["payment_methods"][payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < difference:
        raise ToolError("insufficient gift card balance to pay for the new item")
    order["payment_history"].append(
        {
            "transaction_type": "payment" if difference > 0 else "refund",
            "amount": abs(difference),
            "payment_method_id": payment_method_id,
        }
    )
    if method["source"] == "gift_card":
        method["balance"] -= difference
        method["balance"] = round(method["balance"], 2)
    # One pair at a time: each takes the first line still holding the old id, so a
    # later pair sees the lines an earlier pair already changed.
    for item_id, new_item_id in zip(item_ids, new_item_ids):  # noqa: B905 - τ-bench's zip
        item = [line for line in order["items"] if line["item_id"] == item_id][0]  # noqa: RUF015
        item["item_id"] = new_item_id
        variants = products[item["product_id"]]["variants"]
        item["price"] = variants[new_item_id]["price"]
        # τ-bench shares the variant's options dict with the order; no tool ever changes
        # one in place, so a copy is the same database and keeps records apart.
        item["options"] = copy_json(variants[new_item_id]["options"])
    order["status"] = "pending (item modified)"
    return json.dumps(order)


@tool(kind="write", keys=("address1", "zip"))
def modify_user_address(
    data: DeskWorld,
    user_id: str,
    address1: str,
    address2: str,
    city: str,
    state: str,
    country: str,
    zip: str,
) -> str:
    """Change a customer's default address. Explain the change to the customer and get an
    explicit "yes" before calling this. Returns the updated profile.

    Args:
        user_id: The user id, for example 'jane_doe_1234'.
        address1: The first address line, for example '123 Main St'.
        address2: The second address line, for example 'Apt 1', or '' if there is none.
        city: The city, for example 'San Francisco'.
        state: The state, for example 'CA'.
        country: The country, for example 'USA'.
        zip: The zip code, for example '12345'.
    """
    users = data["users"]
    if user_id not in users:
        raise ToolError("user not found")
    user = users[user_id]
    user["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(user)


@tool(kind="write", keys=("order_id", "item_ids"))
def return_delivered_order_items(
    data: DeskWorld, order_id: str, item_ids: list[str], payment_method_id: str
) -> str:
    """Return items of a delivered order; its status becomes 'return requested' and the
    customer gets an email on how to send the items back. Explain the return to the
    customer and get an explicit "yes" before calling this. Returns the updated order.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        item_ids: The ids of the items to return, for example ['1008292230']; an id may
            appear more than once.
        payment_method_id: The id of the payment method that receives the refund: the
            order's original payment method or a gift card, for example 'gift_card_0000000'.
    """
    orders = data["orders"]
    if order_id not in orders:
        raise ToolError("order not found")
    order = orders[order_id]
    if order["status"] != "delivered":
        raise ToolError("non-delivered order cannot be returned")
    if payment_method_id not in data["users"][order["user_id"]]["payment_methods"]:
        raise ToolError("payment method not found")
    if (
        "gift_card" not in payment_method_id
        and payment_method_id != order["payment_history"][0]["payment_method_id"]
    ):
        raise ToolError(
            "payment method should be either the original payment method or a gift card"
        )
    _check_items_in_order(order, item_ids, "some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return json.dumps(order)


@tool(kind="write", keys=("order_id", "item_ids", "new_item_ids"))
def exchange_delivered_order_items(
    data: DeskWorld,
    order_id: str,
    item_ids: list[str],
    new_item_ids: list[str],
    payment_method_id: str,
) -> str:
    """Exchange items of a delivered order for other items (variants) of the same product.
    A delivered order can be returned or exchanged only once. Explain the exchange to
    the customer and get an explicit "yes" before calling this. Returns the updated order.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        item_ids: The ids of the items to exchange, for example ['1008292230']; an id may
            appear more than once.
        new_item_ids: The ids of the new items, in the same positions as `item_ids`;
            each must be an available variant of the same product as the item it replaces.
        payment_method_id: The id of the payment method that pays the price difference or
            receives its refund, for example 'gift_card_0000000' or 'credit_card_0000000'.
    """
    products, orders, users = data["products"], data["orders"], data["users"]
    if order_id not in orders:
        raise ToolError("order not found")
    order = orders[order_id]
    if order["status"] != "delivered":
        raise ToolError("non-delivered order cannot be exchanged")
    _check_items_in_order(order, item_ids, "{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise ToolError("the number of items to be exchanged should match")
    difference = round(_price_difference(products, order, item_ids, new_item_ids), 2)
    if payment_method_id not in users[order["user_id"]]["payment_methods"]:
        raise ToolError("payment method not found")
    method = users[order["user_id"]]["payment_methods"][payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < difference:
        raise ToolError("insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = difference
    return json.dumps(order)


# --- helpers, each doing its part of a tool in τ-bench's order ------------------------------


def _check_items_in_order(order: Record, item_ids: list[str], message: str) -> None:
    """Every id must occur in the order at least as often as it occurs in `item_ids`."""
    in_order = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > in_order.count(item_id):
            raise ToolError(message.format(item_id=item_id))


def _price_difference(products: Table, order: Record, item_ids: list[str], new: list[str]) -> Any:
    """Sum of new minus old prices, in τ-bench's order of float additions (from int 0)."""
    difference: Any = 0
    for item_id, new_item_id in zip(item_ids, new):  # noqa: B905 - τ-bench's zip
        item = [line for line in order["items"] if line["item_id"] == item_id][0]  # noqa: RUF015
        variants = products[item["product_id"]]["variants"]
        if not (new_item_id in variants and variants[new_item_id]["available"]):
            raise ToolError(f"new item {new_item_id} not found or available")
        difference += variants[new_item_id]["price"] - item["price"]
    return difference


def _address(
    address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, str]:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "state": state,
        "country": country,
        "zip": zip,
    }


RETAIL_TOOLS = taubench_named(
    "retail",
    (
        find_user_id_by_email,
        find_user_id_by_name_zip,
        get_user_details,
        get_order_details,
        get_product_details,
        list_all_product_types,
        calculate,
        think,
        transfer_to_human_agents,
        cancel_pending_order,
        modify_pending_order_address,
        modify_pending_order_payment,
        modify_pending_order_items,
        modify_user_address,
        return_delivered_order_items,
        exchange_delivered_order_items,
    ),
)
"""All 16 tools, reading tools first, in a stable order."""

WRITE_TOOLS = frozenset(t.name for t in RETAIL_TOOLS if t.writes)
"""The 7 tools that change the database."""
