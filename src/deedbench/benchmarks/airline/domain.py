"""The airline domain as the desk's machinery needs it: tools, data, procedure, customers.

An airline customer identifies themselves by their user id, which the agent
takes as said (τ-bench's airline has no lookup tool); the generic procedure
rules that fit the airline apply, beside the airline's own policy rules.
"""

from __future__ import annotations

from deedbench.benchmarks.airline.procedure import AIRLINE_PROCEDURE
from deedbench.benchmarks.airline.rules import check_airline_policy
from deedbench.benchmarks.airline.tools import AIRLINE_TOOLS
from deedbench.benchmarks.airline.world import load_airline_data
from deedbench.benchmarks.servicedesk import Customer, Domain, Identity

__all__ = ["AIRLINE", "AIRLINE_CUSTOMER"]

AIRLINE_CUSTOMER = Customer(
    desk="an airline's help desk",
    prompt_version="airline-user-1",
    identities={
        "user_id": Identity(
            says="my user id is {user_id}",
            gives="your user id, {user_id}",
            asked_as="your user id",
        ),
    },
    verbs={
        "book": ("book", "reserve"),
        "cancel": ("cancel",),
        "update": ("update", "change", "modify", "switch", "add"),
        "send": ("send", "issue", "certificate", "compensat"),
    },
    persona="{first_name} {last_name}",
)
"""How airline customers talk, to the scripted and the model-played customer and the oracle."""

AIRLINE = Domain(
    name="airline",
    load=load_airline_data,
    tools=AIRLINE_TOOLS,
    procedure=AIRLINE_PROCEDURE,
    unordered=frozenset({"reservations.*.payment_history", "reservations.*.passengers"}),
    customer=AIRLINE_CUSTOMER,
    policy_check=check_airline_policy,
)
"""τ-bench's airline tools, deedbench's airline procedure, policy rules and customers."""
