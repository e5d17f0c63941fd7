"""τ²'s telecom domain declared for deedbench: the desk, the customer's phone, their sync."""

from __future__ import annotations

from dataclasses import replace

from deedbench.benchmarks.servicedesk.procedure import Procedure
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.benchmarks.tau2.telecom.device_actions import check_device_actions
from deedbench.benchmarks.tau2.telecom.sync import sync_telecom
from deedbench.benchmarks.tau2.telecom.tools import TelecomTools
from deedbench.benchmarks.tau2.telecom.user_tools import TelecomUserTools
from deedbench.scoring.procedure import AUTHENTICATION, ONE_TOOL_CALL_PER_TURN

__all__ = ["TELECOM", "TELECOM_PROCEDURE", "TELECOM_PROCEDURE_RULES", "TELECOM_WORKFLOW"]

TELECOM_PROCEDURE_RULES: tuple[str, ...] = (AUTHENTICATION, ONE_TOOL_CALL_PER_TURN)
"""What the telecom policy demands: identify the customer before acting on their account,
and make one tool call at a time with no reply beside it. It asks for no confirmation
before a change in general (roaming is enabled "at no cost", a payment request is
sent, a line resumed after payment): only a refuel's price is to be confirmed, and
`consent` would require a yes before every write, so it is left out. Nor does the
policy limit a conversation to one customer (`one_user`) or a change to once per
order; and a transfer does not end a τ² episode, so `after_transfer` does not apply.
Beside these, `device_actions.check_device_actions` reads the customer's phone calls."""

TELECOM_PROCEDURE = Procedure(
    auth_tools=frozenset({"get_customer_by_phone", "get_customer_by_id"}),
    auth_result_field="customer_id",
    user_id_argument="customer_id",
    personal_read_tools=frozenset(
        {"get_details_by_id", "get_bills_for_customer", "get_data_usage"}
    ),
    rules=TELECOM_PROCEDURE_RULES,
)
"""The policy's roles beside the desk's tools' own (a change names the line, or the bill,
it acts on, and a refuel its amount, whose price the policy has the agent confirm).
Finding the customer by phone or id identifies them (the customer record, whose
``customer_id`` the later calls name); a name search may return several, so it
identifies no one by itself. The customer's own phone tools are theirs to use and
need no consent."""


TELECOM = Tau2Domain(
    name="telecom",
    tau2_name="telecom",
    toolkit=TelecomTools,
    user_toolkit=TelecomUserTools,
    db_file="db.toml",
    user_db_file="user_db.toml",
    sync=sync_telecom,
    procedure=TELECOM_PROCEDURE,
    transcript_check=check_device_actions,
)
"""τ²'s telecom: dual control, the desk over the network's database and the customer
over their own phone, kept in step after every call (`sync_telecom`)."""

TELECOM_WORKFLOW = replace(
    TELECOM, name="telecom-workflow", tau2_name="telecom-workflow", data_name="telecom"
)
"""τ²'s ``telecom-workflow``: the same tools, databases and tasks, the agent's technical
support given as a workflow instead of a manual (`policy.policy` with ``"workflow"``)."""
