"""The retail policy's procedure, as the shared checker needs it.

Key ids are what a customer can recognise in a proposal: the order, the items
and the replacement items, the payment method when that is what changes, the
new street address and zip.
"""

from __future__ import annotations

from deedbench.scoring.procedure import ProcedureSpec

__all__ = ["RETAIL_PROCEDURE"]

RETAIL_PROCEDURE = ProcedureSpec(
    write_tools={
        "cancel_pending_order": ("order_id",),
        "modify_pending_order_address": ("order_id", "address1", "zip"),
        "modify_pending_order_payment": ("order_id", "payment_method_id"),
        "modify_pending_order_items": ("order_id", "item_ids", "new_item_ids"),
        "modify_user_address": ("address1", "zip"),
        "return_delivered_order_items": ("order_id", "item_ids"),
        "exchange_delivered_order_items": ("order_id", "item_ids", "new_item_ids"),
    },
    auth_tools=frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"}),
    personal_read_tools=frozenset({"get_user_details", "get_order_details"}),
    transfer_tools=frozenset({"transfer_to_human_agents"}),
    once_per_order_tools=frozenset(
        {"modify_pending_order_items", "exchange_delivered_order_items"}
    ),
)
