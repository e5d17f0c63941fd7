"""The airline policy's procedure: what it says of the tools beyond their own roles.

Each write tool names its key ids itself (``keys``: what a customer recognises in a
proposal: the reservation, a new booking's airports (its flights are objects, which
consent cannot match as text), a certificate's amount). The airline has no
authentication tool: the user states their user id. With no `auth_tools`,
`authentication` would flag the first personal read of every conversation and
`one_user` could never fire, and the airline policy has no once-per-order tool, so
only `AIRLINE_PROCEDURE_RULES` apply.
"""

from __future__ import annotations

from deedbench.benchmarks.servicedesk.procedure import Procedure
from deedbench.scoring.procedure import AFTER_TRANSFER, CONSENT, ONE_TOOL_CALL_PER_TURN

__all__ = ["AIRLINE_PROCEDURE", "AIRLINE_PROCEDURE_RULES"]

AIRLINE_PROCEDURE_RULES: tuple[str, ...] = (CONSENT, ONE_TOOL_CALL_PER_TURN, AFTER_TRANSFER)
"""The generic rules that apply to the airline."""

AIRLINE_PROCEDURE = Procedure(
    personal_read_tools=frozenset({"get_user_details", "get_reservation_details"}),
    rules=AIRLINE_PROCEDURE_RULES,
)
