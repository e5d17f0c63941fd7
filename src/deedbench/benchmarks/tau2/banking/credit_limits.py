"""τ³ banking's discoverable desk tools: credit limits: increase requests, their history,
payment history, approval and denial.

Mixed into `KnowledgeTools` (``tools.py``); each tool's docstring is deedbench's own
wording, shown when the agent unlocks it only where the user has no τ² source
(τ²'s docstrings are read from the source otherwise, `shown.discoverable_docs`).
"""

from __future__ import annotations

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
)
from deedbench.benchmarks.tau2.banking.rules import (
    _money,
)
from deedbench.benchmarks.tau2.banking.toolkit import BankingToolkit
from deedbench.engine import tool

__all__ = ["CreditLimitTools"]


class CreditLimitTools(BankingToolkit):
    """Credit limits: increase requests, their history, payment history, approval and denial."""

    @tool(kind="write", listed=False)
    def submit_credit_limit_increase_request_7392(
        self, credit_card_account_id: str, user_id: str, requested_increase_amount: int
    ) -> str:
        """File a request to raise a credit card's limit.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            requested_increase_amount (integer): Dollars to add to the limit, e.g. 2500
        """
        if not credit_card_account_id or not user_id or requested_increase_amount is None:
            return "Error: Missing required parameters."
        try:
            requested = float(requested_increase_amount)
        except (TypeError, ValueError):
            return "Error: Invalid requested_increase_amount. Must be a whole number."
        if not requested.is_integer():
            return "Error: Invalid requested_increase_amount. Must be a whole number of dollars."
        increase = int(requested)
        if increase <= 0:
            return "Error: Requested increase amount must be positive."
        cards = self._t("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        if cards[credit_card_account_id].get("user_id") != user_id:
            return (
                f"Error: Credit card account '{credit_card_account_id}' does not belong to user "
                f"'{user_id}'."
            )
        request_id = ids.cli_request_id(credit_card_account_id, user_id, increase)
        record = {
            "request_id": request_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "requested_increase_amount": increase,
            "submitted_at": ids.today_str(),
            "status": "PENDING",
        }
        if not add_to_db("credit_limit_increase_requests", request_id, record, db=self.db):
            return "Error: A similar request may already exist."
        return (
            "Credit limit increase request submitted successfully.\n\n"
            "Executed: submit_credit_limit_increase_request_7392\n"
            f"  - Request ID: {request_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Requested Increase: ${increase:,}\n"
            "  - Status: PENDING"
        )

    @tool(listed=False)
    def get_credit_limit_increase_history_4829(self, credit_card_account_id: str) -> str:
        """List earlier limit increase requests on a credit card account, with dates, amounts and outcomes.

        Args:
            credit_card_account_id (string): The credit card account
        """  # noqa: E501
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        header = [
            "Credit limit increase history retrieved.",
            "",
            "Executed: get_credit_limit_increase_history_4829",
            f"Credit limit increase history for account {credit_card_account_id}:",
        ]
        return self._history(
            "credit_limit_increase_requests", "credit_card_account_id", credit_card_account_id,
            header, "\nNo credit limit increase requests found for this account.",
        )  # fmt: skip

    @tool(listed=False)
    def get_payment_history_6183(self, credit_card_account_id: str, months: int) -> str:
        """List a credit card account's recent payments.

        Args:
            credit_card_account_id (string): The credit card account
            months (integer): How many months back
        """
        if not credit_card_account_id or months is None:
            return "Error: Missing required parameters (credit_card_account_id, months)."
        try:
            months = int(months)
            if months <= 0:
                return "Error: months must be a positive integer."
        except (ValueError, TypeError):
            return "Error: Invalid months value. Must be a positive integer."
        payments = [
            payment
            for payment in self._t("payment_history").values()
            if payment.get("credit_card_account_id") == credit_card_account_id
        ]
        if not payments:
            return f"No payment history found for account '{credit_card_account_id}'."
        payments.sort(key=lambda x: x.get("payment_date") or "", reverse=True)
        payments = payments[:months]
        on_time = 0
        for payment in payments:
            if payment.get("status") != "ON_TIME":
                break
            on_time += 1
        lines = [
            f"Payment history for account '{credit_card_account_id}' (last {months} months):",
            f"Consecutive on-time payments: {on_time}",
        ]
        for payment in payments:
            lines.append(
                f"\n  - Payment Date: {payment.get('payment_date')}\n"
                f"    Amount: {payment.get('amount')}\n"
                f"    Status: {payment.get('status')}"
            )
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def approve_credit_limit_increase_5847(
        self, credit_card_account_id: str, user_id: str, new_credit_limit: int
    ) -> str:
        """Grant a credit limit increase and set the new limit.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            new_credit_limit (integer): The whole new limit in dollars, e.g. 7500
        """
        if not credit_card_account_id or not user_id or new_credit_limit is None:
            return "Error: Missing required parameters."
        cards = self._t("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        card = cards[credit_card_account_id]
        if card.get("user_id") != user_id:
            return (
                f"Error: Credit card account '{credit_card_account_id}' does not belong to user "
                f"'{user_id}'."
            )
        # τ²'s eligibility checks, in its order; any failing gives the one generic error.
        ineligible = any(
            dispute.get("user_id") == user_id
            and dispute.get("status") in ["SUBMITTED", "UNDER_REVIEW", "PENDING"]
            for dispute in self._t("transaction_disputes").values()
        )
        if not ineligible:
            ineligible = any(
                order.get("credit_card_account_id") == credit_card_account_id
                and order.get("status") in ["PENDING", "PROCESSING", "SHIPPED"]
                for order in self._t("credit_card_orders").values()
            )
        if not ineligible:
            standing = card.get("account_status", "").upper()
            ineligible = standing in ["PAST_DUE", "DELINQUENT", "COLLECTIONS", "CLOSED"]
        if ineligible:
            return "Error: Credit limit increase request cannot be approved at this time."
        current = _money(card.get("credit_limit", "$0.00"))
        new_limit = float(new_credit_limit)
        cards[credit_card_account_id]["credit_limit"] = f"${new_limit:.2f}"
        today = ids.today_str()
        request_id = ids.cli_request_id(credit_card_account_id, user_id, new_limit - current)
        record = {
            "request_id": request_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "previous_limit": f"${current:.2f}",
            "new_limit": f"${new_limit:.2f}",
            "increase_amount": f"${new_limit - current:.2f}",
            "decision_date": today,
            "status": "APPROVED",
        }
        add_to_db("credit_limit_increase_requests", request_id, record, db=self.db)
        return (
            f"Credit limit increase approved!\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Previous Limit: ${current:.2f}\n"
            f"  - New Limit: ${new_limit:.2f}\n"
            f"  - Increase: ${new_limit - current:.2f}\n"
            f"  - Effective Date: {today}\n"
            f"The customer will receive a confirmation email."
        )

    @tool(kind="write", listed=False)
    def deny_credit_limit_increase_5848(
        self, credit_card_account_id: str, user_id: str, denial_reason: str
    ) -> str:
        """Turn down a credit limit increase request.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            denial_reason (string): One of 'insufficient_account_age', 'cooldown_period_active', 'pending_disputes', 'pending_replacement_card', 'past_due_balance', 'high_utilization', 'insufficient_payment_history', 'requested_amount_exceeds_limit', 'other'
        """  # noqa: E501
        if not credit_card_account_id or not user_id or not denial_reason:
            return "Error: Missing required parameters."
        reasons = [
            "insufficient_account_age",
            "cooldown_period_active",
            "pending_disputes",
            "pending_replacement_card",
            "past_due_balance",
            "high_utilization",
            "insufficient_payment_history",
            "requested_amount_exceeds_limit",
            "other",
        ]
        if denial_reason not in reasons:
            return f"Error: Invalid denial_reason. Must be one of: {', '.join(reasons)}"
        if credit_card_account_id not in self._t("credit_card_accounts"):
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        today = ids.today_str()
        request_id = ids.cli_request_id(credit_card_account_id, user_id, 0.0)
        record = {
            "request_id": request_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "denial_reason": denial_reason,
            "decision_date": today,
            "status": "DENIED",
        }
        add_to_db("credit_limit_increase_requests", request_id, record, db=self.db)
        return (
            f"Credit limit increase request denied.\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Denial Reason: {denial_reason}\n"
            f"  - Date: {today}\n"
            f"The customer will receive a notification explaining the denial."
        )
