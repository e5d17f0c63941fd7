"""The 16 retail service-desk tools, faithful to τ-bench's retail tools.

Names, arguments, checks (and the order they run in), error conditions and every
change to the database follow τ-bench (sierra-research/tau-bench,
``tau_bench/envs/retail/tools``), including its arithmetic: refunds to gift
cards and balance changes are rounded to cents, but the price difference a
pending-order item change records in ``payment_history`` is not. Replaying a
τ-bench task's gold actions with these tools therefore gives the database
τ-bench's own code gives, hash for hash.

Two deliberate differences, neither of which changes a database τ-bench would
produce: every check runs before anything is written (τ-bench could half-apply a
call that crashed midway), and `calculate` evaluates arithmetic with a small
interpreter instead of ``eval``.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable
from typing import Any, Literal

from deedbench.benchmarks.retail.world import Record, RetailWorld, copy_json
from deedbench.engine import ToolError, tool

__all__ = ["CANCEL_REASONS", "RETAIL_TOOLS", "WRITE_TOOLS", "evaluate_arithmetic"]

CANCEL_REASONS = ("no longer needed", "ordered by mistake")

CancelReason = Literal["no longer needed", "ordered by mistake"]


# --- lookups shared by the tools ------------------------------------------------------------


def _order(world: RetailWorld, order_id: str) -> Record:
    order = world.get("orders", order_id)
    if order is None:
        raise ToolError("order not found")
    return order


def _owner(world: RetailWorld, order: Record) -> Record:
    user = world.get("users", order["user_id"])
    if user is None:
        raise ToolError("user not found")
    return user


def _first_item(order: Record, item_id: str) -> Record:
    """The first line of the order holding `item_id` (τ-bench always takes the first)."""
    return next(item for item in order["items"] if item["item_id"] == item_id)


def _check_items_in_order(order: Record, item_ids: list[str], message: str) -> None:
    """Every id must occur in the order at least as often as it occurs in `item_ids`."""
    in_order = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > in_order.count(item_id):
            raise ToolError(message.format(item_id=item_id))


def _price_difference(
    world: RetailWorld, order: Record, item_ids: list[str], new: list[str]
) -> Any:
    """Sum of new minus old prices, in τ-bench's order of float additions (starts at int 0)."""
    if len(item_ids) != len(new):
        raise ToolError("the number of items to be exchanged should match")
    difference: Any = 0
    for item_id, new_item_id in zip(item_ids, new, strict=True):
        item = _first_item(order, item_id)
        variant = _variant(world, item["product_id"], new_item_id)
        if variant is None or not variant["available"]:
            raise ToolError(f"new item {new_item_id} not found or available")
        difference += variant["price"] - item["price"]
    return difference


def _variant(world: RetailWorld, product_id: str, item_id: str) -> Record | None:
    product = world.get("products", product_id)
    return None if product is None else product["variants"].get(item_id)


def _payment_method(user: Record, payment_method_id: str) -> Record:
    method = user["payment_methods"].get(payment_method_id)
    if method is None:
        raise ToolError("payment method not found")
    return method


def _add_to_balance(world: RetailWorld, user_id: str, method_id: str, amount: Any) -> None:
    """Change a gift card's balance, rounded to cents as τ-bench does after every change."""
    method = world.for_update("users", user_id)["payment_methods"][method_id]
    method["balance"] = round(method["balance"] + amount, 2)


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


# --- reading tools ----------------------------------------------------------------------------


@tool
def find_user_id_by_email(world: RetailWorld, email: str) -> str:
    """Find a customer's user id from their email address (case does not matter).
    Returns an error if no customer has that email.

    Args:
        email: The customer's email address, for example 'jane.doe1234@example.com'.
    """
    wanted = email.lower()
    for user_id, user in world.items("users"):
        if user["email"].lower() == wanted:
            return user_id
    raise ToolError("user not found")


@tool
def find_user_id_by_name_zip(world: RetailWorld, first_name: str, last_name: str, zip: str) -> str:
    """Find a customer's user id from their first name, last name and zip code.
    Look customers up by email first; use this only when the email is unknown or
    not found. Returns an error if no customer matches.

    Args:
        first_name: The customer's first name, for example 'Jane' (case does not matter).
        last_name: The customer's last name, for example 'Doe' (case does not matter).
        zip: The zip code of the customer's default address, for example '10001'.
    """
    first, last = first_name.lower(), last_name.lower()
    for user_id, user in world.items("users"):
        name = user["name"]
        if (
            name["first_name"].lower() == first
            and name["last_name"].lower() == last
            and user["address"]["zip"] == zip
        ):
            return user_id
    raise ToolError("user not found")


@tool
def get_user_details(world: RetailWorld, user_id: str) -> str:
    """Get a customer's profile: name, address, email, payment methods and order ids.

    Args:
        user_id: The user id, for example 'jane_doe_1234'.
    """
    user = world.get("users", user_id)
    if user is None:
        raise ToolError("user not found")
    return json.dumps(user)


@tool
def get_order_details(world: RetailWorld, order_id: str) -> str:
    """Get an order's status, items, address, fulfilments and payment history.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
    """
    return json.dumps(_order(world, order_id))


@tool
def get_product_details(world: RetailWorld, product_id: str) -> str:
    """Get a product's inventory: every variant (item) with its options, price and availability.

    Args:
        product_id: The product id, for example '6086499569'. A product id is not
            an item id: items are the variants listed inside a product.
    """
    product = world.get("products", product_id)
    if product is None:
        raise ToolError("product not found")
    return json.dumps(product)


@tool
def list_all_product_types(world: RetailWorld) -> str:
    """List every product type the store sells (50 of them) by name, with its product id.
    Each product type has many items (variants) with their own item ids and options.
    """
    by_name = {product["name"]: product["product_id"] for _, product in world.items("products")}
    return json.dumps(dict(sorted(by_name.items())))


@tool
def calculate(world: RetailWorld, expression: str) -> str:
    """Calculate an arithmetic expression; the result is rounded to 2 decimals.

    Args:
        expression: The expression, for example '(109.99 + 35.5) * 2 - 10'. It may
            contain numbers, the operators + - * /, parentheses and spaces.
    """
    value = evaluate_arithmetic(expression)
    try:
        return str(round(float(value), 2))
    except OverflowError:
        raise ToolError("result is too large") from None


@tool
def think(world: RetailWorld, thought: str) -> str:
    """Write down a thought, for reasoning through a complex case or remembering something.
    It neither looks anything up nor changes the database.

    Args:
        thought: The thought.
    """
    return ""


@tool(ends_episode=True)
def transfer_to_human_agents(world: RetailWorld, summary: str) -> str:
    """Hand the customer over to a human agent, with a summary of their issue. Transfer
    only if the customer explicitly asks for a human, or if their issue cannot be
    resolved with the available tools.

    Args:
        summary: A summary of the customer's issue for the human agent.
    """
    return "Transfer successful"


# --- writing tools ----------------------------------------------------------------------------


@tool(writes=True)
def cancel_pending_order(world: RetailWorld, order_id: str, reason: CancelReason) -> str:
    """Cancel a pending order; processed or delivered orders cannot be cancelled. Explain
    the cancellation to the customer and get an explicit "yes" before calling this.
    The order becomes 'cancelled' and every payment is refunded: at once to a gift
    card, otherwise in 5-7 business days. Returns the order after cancellation.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        reason: Why the order is cancelled: 'no longer needed' or 'ordered by mistake'.
    """
    order = _order(world, order_id)
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise ToolError("invalid reason")
    user = _owner(world, order)
    payments = order["payment_history"]
    for payment in payments:
        method_id = payment["payment_method_id"]
        if "gift_card" in method_id and method_id not in user["payment_methods"]:
            raise ToolError(f"payment method {method_id} not found")

    refunds = []
    for payment in payments:
        method_id = payment["payment_method_id"]
        refunds.append(
            {
                "transaction_type": "refund",
                "amount": payment["amount"],
                "payment_method_id": method_id,
            }
        )
        if "gift_card" in method_id:
            _add_to_balance(world, order["user_id"], method_id, payment["amount"])
    order = world.for_update("orders", order_id)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return json.dumps(order)


@tool(writes=True)
def modify_pending_order_address(
    world: RetailWorld,
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
    order = _order(world, order_id)
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be modified")
    order = world.for_update("orders", order_id)
    order["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(order)


@tool(writes=True)
def modify_pending_order_payment(world: RetailWorld, order_id: str, payment_method_id: str) -> str:
    """Pay for a pending order with a different payment method: the new method is charged
    and the old one refunded. Explain the change to the customer and get an explicit
    "yes" before calling this. Returns the updated order.

    Args:
        order_id: The order id, which starts with '#', for example '#W0000000'.
        payment_method_id: The new payment method's id, for example 'gift_card_0000000'
            or 'credit_card_0000000', as listed in the customer's or the order's details.
    """
    order = _order(world, order_id)
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be modified")
    user = _owner(world, order)
    method = _payment_method(user, payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ToolError("there should be exactly one payment for a pending order")
    old_method_id = history[0]["payment_method_id"]
    if old_method_id == payment_method_id:
        raise ToolError("the new payment method should be different from the current one")
    amount = history[0]["amount"]
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise ToolError("insufficient gift card balance to pay for the order")
    if "gift_card" in old_method_id and old_method_id not in user["payment_methods"]:
        raise ToolError(f"payment method {old_method_id} not found")

    order = world.for_update("orders", order_id)
    order["payment_history"].extend(
        [
            {
                "transaction_type": "payment",
                "amount": amount,
                "payment_method_id": payment_method_id,
            },
            {"transaction_type": "refund", "amount": amount, "payment_method_id": old_method_id},
        ]
    )
    if method["source"] == "gift_card":
        _add_to_balance(world, order["user_id"], payment_method_id, -amount)
    if "gift_card" in old_method_id:
        _add_to_balance(world, order["user_id"], old_method_id, amount)
    return json.dumps(order)


@tool(writes=True)
def modify_pending_order_items(
    world: RetailWorld,
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
    order = _order(world, order_id)
    if order["status"] != "pending":
        raise ToolError("non-pending order cannot be modified")
    _check_items_in_order(order, item_ids, "{item_id} not found")
    difference = _price_difference(world, order, item_ids, new_item_ids)
    user = _owner(world, order)
    method = _payment_method(user, payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < difference:
        raise ToolError("insufficient gift card balance to pay for the new item")

    order = world.for_update("orders", order_id)
    order["payment_history"].append(
        {
            "transaction_type": "payment" if difference > 0 else "refund",
            "amount": abs(difference),
            "payment_method_id": payment_method_id,
        }
    )
    if method["source"] == "gift_card":
        _add_to_balance(world, order["user_id"], payment_method_id, -difference)
    # One by one, like τ-bench: each replacement takes the first line still holding
    # the old id, so a later pair sees the lines an earlier pair already changed.
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = _first_item(order, item_id)
        variant = _variant(world, item["product_id"], new_item_id)
        assert variant is not None  # checked above, and products never change
        item["item_id"] = new_item_id
        item["price"] = variant["price"]
        item["options"] = copy_json(variant["options"])
    order["status"] = "pending (item modified)"
    return json.dumps(order)


@tool(writes=True)
def modify_user_address(
    world: RetailWorld,
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
    if world.get("users", user_id) is None:
        raise ToolError("user not found")
    user = world.for_update("users", user_id)
    user["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(user)


@tool(writes=True)
def return_delivered_order_items(
    world: RetailWorld, order_id: str, item_ids: list[str], payment_method_id: str
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
    order = _order(world, order_id)
    if order["status"] != "delivered":
        raise ToolError("non-delivered order cannot be returned")
    user = _owner(world, order)
    _payment_method(user, payment_method_id)
    history = order["payment_history"]
    original = history[0]["payment_method_id"] if history else None
    if "gift_card" not in payment_method_id and payment_method_id != original:
        raise ToolError(
            "payment method should be either the original payment method or a gift card"
        )
    _check_items_in_order(order, item_ids, "some item not found")

    order = world.for_update("orders", order_id)
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return json.dumps(order)


@tool(writes=True)
def exchange_delivered_order_items(
    world: RetailWorld,
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
    order = _order(world, order_id)
    if order["status"] != "delivered":
        raise ToolError("non-delivered order cannot be exchanged")
    _check_items_in_order(order, item_ids, "{item_id} not found")
    difference = round(_price_difference(world, order, item_ids, new_item_ids), 2)
    user = _owner(world, order)
    method = _payment_method(user, payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < difference:
        raise ToolError("insufficient gift card balance to pay for the price difference")

    order = world.for_update("orders", order_id)
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = difference
    return json.dumps(order)


# --- calculate: arithmetic without eval -------------------------------------------------------

_EXPRESSION_CHARACTERS = frozenset("0123456789+-*/(). ")
_MAX_EXPRESSION_LENGTH = 2_000
_MAX_POWER_BITS = 10_000

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def evaluate_arithmetic(expression: str) -> int | float:
    """The value of an arithmetic expression, with Python's semantics for + - * / // **.

    Only the characters τ-bench allows get through, then only number literals and
    those operators are evaluated (never ``eval``); powers that would build huge
    integers are refused instead of hanging the process.
    """
    if not set(expression) <= _EXPRESSION_CHARACTERS:
        raise ToolError("invalid characters in expression")
    if len(expression) > _MAX_EXPRESSION_LENGTH:
        raise ToolError(f"expression is longer than {_MAX_EXPRESSION_LENGTH} characters")
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ToolError("invalid expression") from None
    try:
        value = _evaluate(tree.body)
    except ZeroDivisionError as exc:
        raise ToolError(str(exc)) from None
    except OverflowError:
        raise ToolError("result is too large") from None
    except RecursionError:
        raise ToolError("expression is too deeply nested") from None
    if isinstance(value, complex):
        raise ToolError("result is not a real number")
    return value


def _evaluate(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _BINARY[type(node.op)](left, right)
    raise ToolError("only numbers, + - * /, parentheses and spaces are allowed")


def _check_power(base: Any, exponent: Any) -> None:
    if isinstance(base, complex) or isinstance(exponent, complex):
        raise ToolError("result is not a real number")
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and abs(base) > 1
        and abs(exponent) * base.bit_length() > _MAX_POWER_BITS
    ):
        raise ToolError("result is too large")


RETAIL_TOOLS = (
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
)
"""All 16 tools, reading tools first, in a stable order."""

WRITE_TOOLS = frozenset(t.name for t in RETAIL_TOOLS if t.writes)
"""The 7 tools that change the database."""
