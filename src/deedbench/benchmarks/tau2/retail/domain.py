"""τ²'s retail domain as deedbench declares it: one desk toolkit, no customer tools.

The procedure rules are the ones τ²'s retail policy states: authenticate first
(by email, or name and zip), one user per conversation, one tool call per turn
with no text beside it, an explicit yes before any change, and item exchanges or
modifications at most once per order.
"""

from __future__ import annotations

from deedbench.benchmarks.servicedesk.procedure import Procedure
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.benchmarks.tau2.retail.tools import RetailTools
from deedbench.scoring.procedure import (
    AUTHENTICATION,
    CONSENT,
    ONE_CHANGE_PER_ORDER,
    ONE_TOOL_CALL_PER_TURN,
    ONE_USER,
)

__all__ = ["RETAIL", "RETAIL_PROCEDURE"]

RETAIL_PROCEDURE = Procedure(
    auth_tools=frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"}),
    personal_read_tools=frozenset({"get_user_details", "get_order_details"}),
    once_per_order_tools=frozenset(
        {"exchange_delivered_order_items", "modify_pending_order_items"}
    ),
    rules=(CONSENT, AUTHENTICATION, ONE_USER, ONE_TOOL_CALL_PER_TURN, ONE_CHANGE_PER_ORDER),
)
"""The policy's roles beside the tools' own (each change names its key ids, what a
consent request must name), and the rules that apply."""

RETAIL = Tau2Domain(
    name="retail",
    tau2_name="retail",
    toolkit=RetailTools,
    procedure=RETAIL_PROCEDURE,
)
