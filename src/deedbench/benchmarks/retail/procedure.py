"""The retail policy's procedure: what it says of the tools beyond their own roles.

Each write tool names its key ids itself (``keys``: what a customer can recognise in
a proposal: the order, the items and the replacement items, the payment method when
that is what changes, the new street address and zip); the policy adds who may be
acted for (a customer found by email, or by name and zip), which reads are personal,
and that an order's items change once.
"""

from __future__ import annotations

from deedbench.benchmarks.servicedesk.procedure import Procedure

__all__ = ["RETAIL_PROCEDURE"]

RETAIL_PROCEDURE = Procedure(
    auth_tools=frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"}),
    personal_read_tools=frozenset({"get_user_details", "get_order_details"}),
    once_per_order_tools=frozenset(
        {"modify_pending_order_items", "exchange_delivered_order_items"}
    ),
)
