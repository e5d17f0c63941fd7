"""τ²'s airline domain on deedbench's τ² framework.

`schema.py` holds deedbench's copy of τ²'s database model (``FlightDB``), `tools.py`
the desk's tools (`AirlineTools`, τ²'s 14 tools over the episode's database), and
`domain.py` the domain as deedbench declares it (`AIRLINE`) with its procedure.
"""

from deedbench.benchmarks.tau2.airline.domain import (
    AIRLINE,
    AIRLINE_PROCEDURE,
    AIRLINE_PROCEDURE_RULES,
)
from deedbench.benchmarks.tau2.airline.schema import FlightDB
from deedbench.benchmarks.tau2.airline.tools import AirlineTools

__all__ = ["AIRLINE", "AIRLINE_PROCEDURE", "AIRLINE_PROCEDURE_RULES", "AirlineTools", "FlightDB"]
