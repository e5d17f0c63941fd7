"""τ²'s airline domain as deedbench declares it: one desk, no customer tools."""

from __future__ import annotations

from deedbench.benchmarks.tau2.airline.tools import AirlineTools
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.scoring.procedure import CONSENT, ONE_TOOL_CALL_PER_TURN, ProcedureSpec

__all__ = ["AIRLINE", "AIRLINE_PROCEDURE", "AIRLINE_PROCEDURE_RULES"]

AIRLINE_PROCEDURE = ProcedureSpec(
    write_tools={
        "book_reservation": ("origin", "destination"),
        "cancel_reservation": ("reservation_id",),
        "send_certificate": ("amount",),
        "update_reservation_baggages": ("reservation_id",),
        "update_reservation_flights": ("reservation_id",),
        "update_reservation_passengers": ("reservation_id",),
    },
    personal_read_tools=frozenset({"get_user_details", "get_reservation_details"}),
    transfer_tools=frozenset({"transfer_to_human_agents"}),
)
"""The airline tools as the procedure rules need them. Key ids are what a customer
recognises in a proposal: the reservation; for a new booking, its airports (its
flights are objects, which consent cannot match as text); a certificate's amount.
No tool identifies the customer (they state their user id), so there are no
`auth_tools`."""

AIRLINE_PROCEDURE_RULES: tuple[str, ...] = (CONSENT, ONE_TOOL_CALL_PER_TURN)
"""What the airline policy demands: explicit confirmation before each change, and
one tool call at a time with no reply beside it. Without an authentication tool,
`authentication` would flag every conversation's first look-up and `one_user` could
never fire; no change is limited to once per reservation; and a transfer does not
end a τ² episode, so `after_transfer` does not apply."""

AIRLINE = Tau2Domain(
    name="airline",
    tau2_name="airline",
    toolkit=AirlineTools,
    procedure=AIRLINE_PROCEDURE,
    procedure_rules=AIRLINE_PROCEDURE_RULES,
)
"""τ²'s airline: a single-control desk over flights, users and reservations."""
