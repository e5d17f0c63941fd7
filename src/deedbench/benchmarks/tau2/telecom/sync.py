"""Keeping the customer's phone in step with the network (τ²'s telecom ``sync_tools``).

After every successful call, and after each set-up call, the network's view of the
customer's line decides what their surroundings allow: whether the line is active,
roaming is allowed, the data allowance is used up; a payment the customer made marks
their bill paid; and a bill awaiting payment becomes the phone's payment request.
"""

from __future__ import annotations

from deedbench.benchmarks.tau2.telecom.schema import LineStatus
from deedbench.benchmarks.tau2.telecom.tools import TelecomTools
from deedbench.benchmarks.tau2.telecom.user_schema import PaymentRequest
from deedbench.benchmarks.tau2.telecom.user_tools import TelecomUserTools

__all__ = ["sync_telecom"]


def sync_telecom(agent: TelecomTools, user: TelecomUserTools) -> None:
    """τ²'s order of checks, each failing (a missing line or plan) as τ²'s does."""
    surroundings = user.surroundings
    phone_number = surroundings["phone_number"]
    if phone_number is None:
        return
    line = agent._get_line_by_phone(phone_number)
    surroundings["line_active"] = line["status"] == LineStatus.ACTIVE
    surroundings["roaming_allowed"] = bool(line["roaming_enabled"])
    plan = agent._get_plan_by_id(line["plan_id"])
    allowance = plan["data_limit_gb"] + line["data_refueling_gb"]
    surroundings["mobile_data_usage_exceeded"] = bool(line["data_used_gb"] >= allowance)
    request = surroundings["payment_request"]
    if request is not None and request["paid"]:
        agent._set_bill_to_paid(request["bill_id"])
        surroundings["payment_request"] = None
    if surroundings["payment_request"] is None:
        customer = TelecomTools.get_customer_by_phone(agent, phone_number)
        awaiting = agent._get_bills_awaiting_payment(customer)
        if len(awaiting) != 0:
            bill = awaiting[0]
            surroundings["payment_request"] = PaymentRequest(
                bill_id=bill["bill_id"], amount_due=bill["total_due"]
            ).model_dump()
