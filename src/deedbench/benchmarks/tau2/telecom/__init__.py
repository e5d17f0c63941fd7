"""τ²'s telecom domain on deedbench's τ² framework (dual control).

- ``schema.py``: the network's database models (plans, customers, lines, bills, devices).
- ``user_schema.py``: the customer's database models (their phone and surroundings).
- ``tools.py``: `TelecomTools`, the desk's tools, set-up calls and assertions.
- ``user_tools.py``: `TelecomUserTools`, the phone's tools, set-up calls and assertions.
- ``sync.py``: `sync_telecom`, the phone kept in step with the network after each call.
- ``policy.py``: `policy`, the agent's policy text for each variant, as τ² builds it.
- ``domain.py``: `TELECOM` and `TELECOM_WORKFLOW`, the domain as deedbench declares it
  (technical support as a manual or as a workflow), with its procedure rules.
"""

from deedbench.benchmarks.tau2.telecom.domain import (
    TELECOM,
    TELECOM_PROCEDURE,
    TELECOM_PROCEDURE_RULES,
    TELECOM_WORKFLOW,
)
from deedbench.benchmarks.tau2.telecom.policy import VARIANTS, policy, policy_files
from deedbench.benchmarks.tau2.telecom.sync import sync_telecom
from deedbench.benchmarks.tau2.telecom.tools import TelecomTools
from deedbench.benchmarks.tau2.telecom.user_tools import TelecomUserTools

__all__ = [
    "TELECOM",
    "TELECOM_PROCEDURE",
    "TELECOM_PROCEDURE_RULES",
    "TELECOM_WORKFLOW",
    "VARIANTS",
    "TelecomTools",
    "TelecomUserTools",
    "policy",
    "policy_files",
    "sync_telecom",
]
