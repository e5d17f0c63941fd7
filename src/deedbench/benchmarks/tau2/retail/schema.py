"""deedbench's copy of τ²'s retail database model (``RetailDB`` and its records).

The fields, their types, defaults and order are τ²'s, so a database file read
through `RetailDB` dumps (and hashes) as τ²'s does, and a record built here
(an address, a payment) has the keys and number types τ²'s has. The class names
are τ²'s too: a validation error names the model, and the agent reads it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "CancelReason",
    "CreditCard",
    "GiftCard",
    "Order",
    "OrderFullfilment",
    "OrderItem",
    "OrderPayment",
    "OrderPaymentType",
    "OrderStatus",
    "PaymentMethod",
    "PaymentMethodBase",
    "Paypal",
    "Product",
    "RetailDB",
    "User",
    "UserAddress",
    "UserName",
    "Variant",
]


class Variant(BaseModel):
    """One purchasable item of a product: its options, stock flag and price."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Product(BaseModel):
    """A product type and its variants, keyed by item id."""

    name: str
    product_id: str
    variants: dict[str, Variant]


class UserName(BaseModel):
    first_name: str
    last_name: str


class UserAddress(BaseModel):
    """A postal address (a user's default one, or an order's shipping one)."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class PaymentMethodBase(BaseModel):
    source: str
    id: str


class CreditCard(PaymentMethodBase):
    source: Literal["credit_card"]
    brand: str
    last_four: str


class Paypal(PaymentMethodBase):
    source: Literal["paypal"]


class GiftCard(PaymentMethodBase):
    source: Literal["gift_card"]
    balance: float
    id: str


PaymentMethod = CreditCard | GiftCard | Paypal


class User(BaseModel):
    """A customer: name, default address, email, payment methods and order ids."""

    user_id: str
    name: UserName
    address: UserAddress
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class OrderFullfilment(BaseModel):
    """One shipment of an order (τ²'s spelling kept)."""

    tracking_id: list[str]
    item_ids: list[str]


class OrderItem(BaseModel):
    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


OrderPaymentType = Literal["payment", "refund"]


class OrderPayment(BaseModel):
    """One payment or refund in an order's history."""

    transaction_type: OrderPaymentType
    amount: float
    payment_method_id: str


OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]

CancelReason = Literal["no longer needed", "ordered by mistake"]


class Order(BaseModel):
    """An order: items, status, shipments, payments, and what was requested of it."""

    order_id: str
    user_id: str
    address: UserAddress
    items: list[OrderItem]
    status: OrderStatus
    fulfillments: list[OrderFullfilment]
    payment_history: list[OrderPayment]
    cancel_reason: CancelReason | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


class RetailDB(BaseModel):
    """The retail database: products, users and orders, each keyed by its id."""

    model_config = ConfigDict(extra="forbid")
    products: dict[str, Product]
    users: dict[str, User]
    orders: dict[str, Order]
