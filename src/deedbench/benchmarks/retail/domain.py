"""The retail domain as the desk's machinery needs it: tools, data, procedure, customers.

A retail customer identifies themselves by email or by name and zip code, which
the agent looks up (`find_user_id_by_email`, `find_user_id_by_name_zip`, whose
arguments are the details the customer gives), and answers what a change to an
order needs: the reason, the new item, the payment method, the address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deedbench.benchmarks.retail.procedure import RETAIL_PROCEDURE
from deedbench.benchmarks.retail.tools import RETAIL_TOOLS
from deedbench.benchmarks.retail.world import load_retail_data
from deedbench.benchmarks.servicedesk import Answer, Customer, Domain, Identity

__all__ = ["RETAIL", "RETAIL_CUSTOMER"]

_ADDRESS_FIELDS = ("address1", "address2", "city", "state", "zip", "country")


def _new_items(kwargs: Mapping[str, Any]) -> str:
    return "i'd like item " + " and item ".join(kwargs["new_item_ids"]) + " instead"


def _address(kwargs: Mapping[str, Any]) -> str:
    return "the address is " + ", ".join(str(kwargs[f]) for f in _ADDRESS_FIELDS)


RETAIL_CUSTOMER = Customer(
    desk="an online shop's help desk",
    prompt_version="retail-user-1",
    identities={
        "email": Identity(
            says="my email is {email}",
            gives="your email, {email}",
            asked_as="the email address on your account",
            lookup="find_user_id_by_email",
            cue="email",
        ),
        "name_zip": Identity(
            says="i'm {first_name} {last_name}, zip code {zip}",
            gives="your name, {first_name} {last_name}, and zip code {zip}",
            asked_as="your first and last name and zip code",
            lookup="find_user_id_by_name_zip",
        ),
    },
    verbs={
        "cancel": ("cancel",),
        "return": ("return",),
        "exchange": ("exchange", "swap", "replace"),
        "modify": ("modify", "change", "update", "switch", "replace", "swap"),
    },
    answers=(
        Answer(re.compile(r"\breason\b"), "reason", lambda k: f"the reason is: {k['reason']}"),
        Answer(
            re.compile(r"\b(option|size|colou?r|which item|variant|replace it with)\b"),
            "new_item_ids",
            _new_items,
        ),
        Answer(
            re.compile(r"\b(payment|refund|pay with|card|gift card|paypal)\b"),
            "payment_method_id",
            lambda k: f"please use {k['payment_method_id']}",
        ),
        Answer(re.compile(r"\baddress\b"), "address1", _address),
    ),
    persona="{first_name} {last_name}",
)
"""How retail customers talk, to the scripted and the model-played customer and the oracle."""

RETAIL = Domain(
    name="retail",
    load=load_retail_data,
    tools=RETAIL_TOOLS,
    procedure=RETAIL_PROCEDURE,
    unordered=frozenset({"orders.*.items", "orders.*.fulfillments", "orders.*.payment_history"}),
    customer=RETAIL_CUSTOMER,
    kinds={
        "cancel_pending_order": "cancel",
        "modify_pending_order_address": "order_address",
        "modify_pending_order_payment": "order_payment",
        "modify_pending_order_items": "order_items",
        "return_delivered_order_items": "return",
        "exchange_delivered_order_items": "exchange",
        "modify_user_address": "user_address",
    },
)
"""τ-bench's retail tools, deedbench's retail procedure and customers."""
