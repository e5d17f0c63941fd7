"""τ²'s airline domain as deedbench declares it: one desk, no customer tools."""

from __future__ import annotations

from deedbench.benchmarks.servicedesk.procedure import Procedure
from deedbench.benchmarks.tau2.airline.tools import AirlineTools
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.scoring.procedure import CONSENT, ONE_TOOL_CALL_PER_TURN

__all__ = ["AIRLINE", "AIRLINE_PROCEDURE", "AIRLINE_PROCEDURE_RULES"]

AIRLINE_PROCEDURE_RULES: tuple[str, ...] = (CONSENT, ONE_TOOL_CALL_PER_TURN)
"""What the airline policy demands: explicit confirmation before each change, and
one tool call at a time with no reply beside it. Without an authentication tool,
`authentication` would flag every conversation's first look-up and `one_user` could
never fire; no change is limited to once per reservation; and a transfer does not
end a τ² episode, so `after_transfer` does not apply."""

AIRLINE_PROCEDURE = Procedure(
    personal_read_tools=frozenset({"get_user_details", "get_reservation_details"}),
    rules=AIRLINE_PROCEDURE_RULES,
)
"""The policy's roles beside the tools' own (each change names its key ids: the
reservation; for a new booking, its airports, its flights being objects, which consent
cannot match as text; a certificate's amount). No tool identifies the customer (they
state their user id), so there are no `auth_tools`."""

AIRLINE = Tau2Domain(
    name="airline",
    tau2_name="airline",
    toolkit=AirlineTools,
    procedure=AIRLINE_PROCEDURE,
)
"""τ²'s airline: a single-control desk over flights, users and reservations."""
