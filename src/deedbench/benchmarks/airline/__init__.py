"""Airline: τ-bench's airline customer-service domain.

`domain.py` holds the domain as the desk runs it (`AIRLINE`), `world.py` the
loading of its database (flights, reservations, users), `tools.py` the 14 tools
that act on it, faithful to τ-bench's airline tools, with their argument types
in `types.py`; `procedure.py` holds what the generic procedure rules need to
know, `rules.py` the policy rules the tools never check (the compensation rule
in `compensation.py`, what every rule reads and cites in `evidence.py`), and
`ledger.py` the database as a conversation leaves it, which those rules judge calls
against.
"""

from deedbench.benchmarks.airline.domain import AIRLINE
from deedbench.benchmarks.airline.procedure import AIRLINE_PROCEDURE, AIRLINE_PROCEDURE_RULES
from deedbench.benchmarks.airline.rules import AIRLINE_RULES, check_airline_policy
from deedbench.benchmarks.airline.tools import AIRLINE_TOOLS, AIRLINE_WRITE_TOOLS
from deedbench.benchmarks.airline.world import load_airline_data

__all__ = [
    "AIRLINE",
    "AIRLINE_PROCEDURE",
    "AIRLINE_PROCEDURE_RULES",
    "AIRLINE_RULES",
    "AIRLINE_TOOLS",
    "AIRLINE_WRITE_TOOLS",
    "check_airline_policy",
    "load_airline_data",
]
