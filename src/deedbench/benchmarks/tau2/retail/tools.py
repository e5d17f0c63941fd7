"""τ²'s retail desk tools (``RetailTools``) over deedbench's copy of its database.

τ² calls a tool with whatever arguments the agent sent and reports any exception
as the result, so each tool below takes τ²'s steps in τ²'s order: the same
checks, the same messages, the same float arithmetic, and the same changes left
behind when a tool fails half-way (a cancellation that refunds one gift card and
then meets an unknown payment method keeps that refund, as τ²'s does). Records
are the dumps of τ²'s models, so a value τ² assigns without validation (an
exchange's price difference of ``0``) is stored as it is, and new records (an
address, a payment) are built through `schema`, as τ² builds its models.
"""

from __future__ import annotations

import json
from typing import Any

from deedbench.benchmarks.servicedesk.world import Record
from deedbench.benchmarks.tau2.convention import Dump
from deedbench.benchmarks.tau2.retail.schema import OrderPayment, RetailDB, UserAddress
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.benchmarks.tau2.toolkit import calculate as _calculate
from deedbench.engine import tool

__all__ = ["RetailTools"]


def _is_gift_card(method: Record) -> bool:
    """τ²'s ``isinstance(method, GiftCard)``: only a gift card validates as one."""
    return bool(method["source"] == "gift_card")


class RetailTools(Toolkit):
    """The retail desk's tools: look-ups, and changes to pending and delivered orders."""

    tau2_module = "tau2.domains.retail.tools"
    schema = RetailDB
    tables = frozenset({"products", "users", "orders"})

    # -- look-ups τ²'s tools share (not tools themselves) --------------------------

    def _get_order(self, order_id: Any) -> Record:
        if order_id not in self.db["orders"]:
            raise ValueError("Order not found")
        return self.db["orders"][order_id]

    def _get_user(self, user_id: Any) -> Record:
        if user_id not in self.db["users"]:
            raise ValueError("User not found")
        return self.db["users"][user_id]

    def _get_product(self, product_id: Any) -> Record:
        """The shared product record: products are only ever read."""
        if product_id not in self.db["products"]:
            raise ValueError("Product not found")
        return self.db["products"][product_id]

    def _get_item(self, item_id: Any) -> Record:
        for product in self.db["products"].values():
            if item_id in product["variants"]:
                variant: Record = product["variants"][item_id]
                return variant
        raise ValueError("Item not found")

    def _get_variant(self, product_id: Any, variant_id: Any) -> Record:
        product = self._get_product(product_id)
        if variant_id not in product["variants"]:
            raise ValueError("Variant not found")
        variant: Record = product["variants"][variant_id]
        return variant

    def _get_payment_method(self, user_id: Any, payment_method_id: Any) -> Record:
        user = self._get_user(user_id)
        if payment_method_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        method: Record = user["payment_methods"][payment_method_id]
        return method

    # -- tools, in τ²'s order ------------------------------------------------------

    @tool(kind="generic")
    def calculate(self, expression: str) -> str:
        """Work out an arithmetic expression, rounded to 2 decimals.

        Args:
            expression: The expression, e.g. '2 + 2': digits, + - * /, parentheses and
                spaces only.
        """
        return _calculate(expression)

    @tool(kind="write", keys=("order_id",))
    def cancel_pending_order(self, order_id: str, reason: str) -> Dump:
        """Cancel a pending order and refund its payments (gift cards at once, other
        methods in 5-7 business days). List the details and get the user's explicit
        yes first. Returns the order afterwards.

        Args:
            order_id: The order's id, e.g. '#W0000000' (mind the leading '#').
            reason: 'no longer needed' or 'ordered by mistake'.
        """
        order = self._get_order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        if reason not in {"no longer needed", "ordered by mistake"}:
            raise ValueError("Invalid reason")
        refunds = []
        for payment in order["payment_history"]:
            method_id = payment["payment_method_id"]
            refund = OrderPayment(
                transaction_type="refund", amount=payment["amount"], payment_method_id=method_id
            )
            refunds.append(refund.model_dump())
            user = self._get_user(order["user_id"])
            method = self._get_payment_method(user["user_id"], method_id)
            if _is_gift_card(method):
                method["balance"] += payment["amount"]
                method["balance"] = round(method["balance"], 2)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return Dump(order)

    @tool(kind="write", keys=("order_id", "item_ids", "new_item_ids"))
    def exchange_delivered_order_items(
        self,
        order_id: str,
        item_ids: list[str],
        new_item_ids: list[str],
        payment_method_id: str,
    ) -> Dump:
        """Exchange items of a delivered order for other items of the same products
        (once per delivered order). List the details and get the user's explicit yes
        first. Returns the order afterwards.

        Args:
            order_id: The order's id, e.g. '#W0000000' (mind the leading '#').
            item_ids: The item ids to exchange, e.g. '1008292230'; may repeat.
            new_item_ids: The item ids to exchange them for, position by position, each
                of the same product as the item it replaces; may repeat.
            payment_method_id: The payment method that pays or receives the price
                difference, e.g. 'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._get_order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be exchanged")
        all_item_ids = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > all_item_ids.count(item_id):
                raise ValueError(f"Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match.")
        diff_price: Any = 0
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            item = next((item for item in order["items"] if item["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._get_variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_item_id} not found or available")
            diff_price += variant["price"] - item["price"]
        diff_price = round(diff_price, 2)
        method = self._get_payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < diff_price:
            raise ValueError("Insufficient gift card balance to pay for the price difference")
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff_price
        return Dump(order)

    @tool(kind="read")
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a user's id from their first name, last name and zip code. Try the email
        first; use this only when the email is not found or not remembered.

        Args:
            first_name: The customer's first name, e.g. 'John'.
            last_name: The customer's last name, e.g. 'Doe'.
            zip: The customer's zip code, e.g. '12345'.
        """
        for user_id, user in self.db["users"].items():
            if (
                user["name"]["first_name"].lower() == first_name.lower()
                and user["name"]["last_name"].lower() == last_name.lower()
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ValueError("User not found")

    @tool(kind="read")
    def find_user_id_by_email(self, email: str) -> str:
        """Find a user's id from their email address.

        Args:
            email: The user's email, e.g. 'something@example.com'.
        """
        for user_id, user in self.db["users"].items():
            if user["email"].lower() == email.lower():
                return user_id
        raise ValueError("User not found")

    @tool(kind="read")
    def get_order_details(self, order_id: str) -> Dump:
        """An order's status and details.

        Args:
            order_id: The order's id, e.g. '#W0000000' (mind the leading '#').
        """
        return Dump(self._get_order(order_id))

    @tool(kind="read")
    def get_product_details(self, product_id: str) -> Dump:
        """A product's inventory: its variants, their options, stock and prices.

        Args:
            product_id: The product's id, e.g. '6086499569' (not an item id).
        """
        return Dump(self._get_product(product_id))

    @tool(kind="read")
    def get_item_details(self, item_id: str) -> Dump:
        """One item's inventory details.

        Args:
            item_id: The item's id, e.g. '6086499569' (not a product id).
        """
        return Dump(self._get_item(item_id))

    @tool(kind="read")
    def get_user_details(self, user_id: str) -> Dump:
        """A user's details, their orders among them.

        Args:
            user_id: The user's id, e.g. 'sara_doe_496'.
        """
        return Dump(self._get_user(user_id))

    @tool(kind="read")
    def list_all_product_types(self) -> str:
        """Every product type's name and product id (the store has 50), as JSON mapping
        names to ids in alphabetical order."""
        names = {product["name"]: product["product_id"] for product in self.db["products"].values()}
        return json.dumps(names, sort_keys=True)

    @tool(kind="write", keys=("order_id", "address1", "zip"))
    def modify_pending_order_address(
        self,
        order_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Dump:
        """Change a pending order's shipping address. List the details and get the
        user's explicit yes first. Returns the order afterwards.

        Args:
            order_id: The order's id, e.g. '#W0000000' (mind the leading '#').
            address1: The address's first line, e.g. '123 Main St'.
            address2: Its second line, e.g. 'Apt 1' or ''.
            city: The city, e.g. 'San Francisco'.
            state: The state, e.g. 'CA'.
            country: The country, e.g. 'USA'.
            zip: The zip code, e.g. '12345'.
        """
        order = self._get_order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        order["address"] = UserAddress(
            address1=address1,
            address2=address2,
            city=city,
            state=state,
            country=country,
            zip=zip,
        ).model_dump()
        return Dump(order)

    @tool(kind="write", keys=("order_id", "item_ids", "new_item_ids"))
    def modify_pending_order_items(
        self,
        order_id: str,
        item_ids: list[str],
        new_item_ids: list[str],
        payment_method_id: str,
    ) -> Dump:
        """Swap items of a pending order for other items of the same products (once per
        pending order). List the details and get the user's explicit yes first.
        Returns the order afterwards.

        Args:
            order_id: The order's id, e.g. '#W0000000' (mind the leading '#').
            item_ids: The item ids to change, e.g. '1008292230'; may repeat.
            new_item_ids: The item ids to change them to, position by position, each of
                the same product as the item it replaces; may repeat.
            payment_method_id: The payment method that pays or receives the price
                difference, e.g. 'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._get_order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be modified")
        all_item_ids = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > all_item_ids.count(item_id):
                raise ValueError(f"{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match")
        diff_price: Any = 0
        variant: Record | None = None
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            if item_id == new_item_id:
                raise ValueError("The new item id should be different from the old item id")
            item = next((item for item in order["items"] if item["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._get_variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_item_id} not found or available")
            diff_price += variant["price"] - item["price"]
        method = self._get_payment_method(order["user_id"], payment_method_id)
        if _is_gift_card(method) and method["balance"] < diff_price:
            raise ValueError("Insufficient gift card balance to pay for the new item")
        payment = OrderPayment(
            transaction_type="payment" if diff_price > 0 else "refund",
            amount=abs(diff_price),
            payment_method_id=payment_method_id,
        )
        order["payment_history"].append(payment.model_dump())
        if _is_gift_card(method):
            method["balance"] -= diff_price
            method["balance"] = round(method["balance"], 2)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
            item = next((item for item in order["items"] if item["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            # τ² gives every changed item the price and options of the *last* new item
            # (its loop variable left over from the check above); so does this.
            assert variant is not None
            item["item_id"] = new_item_id
            item["price"] = variant["price"]
            item["options"] = dict(variant["options"])
        order["status"] = "pending (item modified)"
        return Dump(order)

    @tool(kind="write", keys=("order_id", "payment_method_id"))
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Dump:
        """Pay a pending order with another payment method. List the details and get the
        user's explicit yes first. Returns the order afterwards.

        Args:
            order_id: The order's id, e.g. '#W0000000' (mind the leading '#').
            payment_method_id: The new payment method, e.g. 'gift_card_0000000' or
                'credit_card_0000000'.
        """
        order = self._get_order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        method = self._get_payment_method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ValueError("There should be exactly one payment for a pending order")
        if history[0]["payment_method_id"] == payment_method_id:
            raise ValueError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if _is_gift_card(method) and method["balance"] < amount:
            raise ValueError("Insufficient gift card balance to pay for the order")
        history.extend(
            [
                OrderPayment(
                    transaction_type="payment", amount=amount, payment_method_id=payment_method_id
                ).model_dump(),
                OrderPayment(
                    transaction_type="refund",
                    amount=amount,
                    payment_method_id=history[0]["payment_method_id"],
                ).model_dump(),
            ]
        )
        if _is_gift_card(method):
            method["balance"] -= amount
            method["balance"] = round(method["balance"], 2)
        old_method = self._get_payment_method(order["user_id"], history[0]["payment_method_id"])
        if _is_gift_card(old_method):
            old_method["balance"] += amount
            old_method["balance"] = round(old_method["balance"], 2)
        return Dump(order)

    @tool(kind="write", keys=("address1", "zip"))
    def modify_user_address(
        self,
        user_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Dump:
        """Change a user's default address. List the details and get the user's explicit
        yes first. Returns the user afterwards.

        Args:
            user_id: The user's id, e.g. 'sara_doe_496'.
            address1: The address's first line, e.g. '123 Main St'.
            address2: Its second line, e.g. 'Apt 1' or ''.
            city: The city, e.g. 'San Francisco'.
            state: The state, e.g. 'CA'.
            country: The country, e.g. 'USA'.
            zip: The zip code, e.g. '12345'.
        """
        user = self._get_user(user_id)
        user["address"] = UserAddress(
            address1=address1,
            address2=address2,
            city=city,
            state=state,
            country=country,
            zip=zip,
        ).model_dump()
        return Dump(user)

    @tool(kind="write", keys=("order_id", "item_ids"))
    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> Dump:
        """Request the return of items of a delivered order; the order becomes 'return
        requested' and the user is emailed how to send them. List the details and get
        the user's explicit yes first. Returns the order afterwards.

        Args:
            order_id: The order's id, e.g. '#W0000000' (mind the leading '#').
            item_ids: The item ids to return, e.g. '1008292230'; may repeat.
            payment_method_id: Where the refund goes: the order's original payment method
                or a gift card, e.g. 'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._get_order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be returned")
        user = self._get_user(order["user_id"])
        method = self._get_payment_method(user["user_id"], payment_method_id)
        if (
            not _is_gift_card(method)
            and payment_method_id != order["payment_history"][0]["payment_method_id"]
        ):
            raise ValueError("Payment method should be the original payment method")
        all_item_ids = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > all_item_ids.count(item_id):
                raise ValueError("Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return Dump(order)

    @tool(kind="generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the user over to a human agent, with a summary of their issue: only when
        they ask for one, or when the policy and these tools cannot solve it.

        Args:
            summary: What the customer needs, in short.
        """
        return "Transfer successful"
