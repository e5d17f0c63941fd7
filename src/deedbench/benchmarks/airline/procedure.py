"""The airline policy's procedure, as the shared checker (`scoring.procedure`) needs it."""

from __future__ import annotations

from deedbench.scoring.procedure import (
    AFTER_TRANSFER,
    CONSENT,
    ONE_TOOL_CALL_PER_TURN,
    ProcedureSpec,
)

__all__ = ["AIRLINE_PROCEDURE", "AIRLINE_PROCEDURE_RULES"]

AIRLINE_PROCEDURE = ProcedureSpec(
    write_tools={
        "book_reservation": ("origin", "destination"),
        "cancel_reservation": ("reservation_id",),
        "update_reservation_flights": ("reservation_id",),
        "update_reservation_baggages": ("reservation_id",),
        "update_reservation_passengers": ("reservation_id",),
        "send_certificate": ("amount",),
    },
    auth_tools=frozenset(),
    personal_read_tools=frozenset({"get_user_details", "get_reservation_details"}),
    transfer_tools=frozenset({"transfer_to_human_agents"}),
)
"""The airline tools as `check_procedure` needs them.

Key ids are what a customer recognises in a proposal: the reservation, a new
booking's airports (its flights are objects, which consent cannot match as text),
a certificate's amount. The airline has no authentication tool: the user states
their user id. With no `auth_tools`, `authentication` would flag the first
personal read of every conversation and `one_user` could never fire, and the
airline policy has no once-per-order tool, so use `AIRLINE_PROCEDURE_RULES`.
"""

AIRLINE_PROCEDURE_RULES: tuple[str, ...] = (CONSENT, ONE_TOOL_CALL_PER_TURN, AFTER_TRANSFER)
"""The generic rules that apply to the airline (pass as `check_procedure(rules=...)`)."""
