"""τ³ banking's discoverable desk tools: credit card accounts: replacement cards, closure,
statement credits, account flags, payments from checking.

Mixed into `KnowledgeTools` (``tools.py``); each tool's docstring is deedbench's own
wording, shown when the agent unlocks it only where the user has no τ² source
(τ²'s docstrings are read from the source otherwise, `shown.discoverable_docs`).
"""

from __future__ import annotations

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
    update_record_in_db,
)
from deedbench.benchmarks.tau2.banking.rules import (
    _account_balance,
    _json_args,
    _money,
)
from deedbench.benchmarks.tau2.banking.toolkit import BankingToolkit
from deedbench.engine import tool

__all__ = ["CreditCardTools"]


class CreditCardTools(BankingToolkit):
    """Credit card accounts: replacement cards, closure, statement credits, account flags,
    payments from checking."""

    @tool(kind="write", listed=False)
    def order_replacement_credit_card_7291(
        self,
        credit_card_account_id: str,
        user_id: str,
        shipping_address: str,
        reason: str,
        expedited_shipping: bool = False,
    ) -> str:
        """Order a new credit card in place of the current one, which is cancelled at once.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            shipping_address (string): Where to send the card
            reason (string): One of 'fraud_suspected', 'lost', 'stolen', 'damaged', 'expired', 'other'
            expedited_shipping (boolean, optional): Ship in 2-3 business days rather than 7-10
        """  # noqa: E501
        if not credit_card_account_id or not user_id or not shipping_address or not reason:
            return (
                "Error: Missing required parameters (credit_card_account_id, user_id, "
                "shipping_address, reason)."
            )
        reasons = ["fraud_suspected", "lost", "stolen", "damaged", "expired", "other"]
        if reason not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        found = self._query("credit_card_accounts", "account_id", credit_card_account_id)
        if "No results found" in found or "No records found" in found:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        order_id = ids.credit_card_order_id(credit_card_account_id, user_id, reason)
        record = {
            "order_id": order_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "shipping_address": shipping_address,
            "reason": reason,
            "expedited_shipping": expedited_shipping,
            "order_date": ids.today_str(),
            "status": "ORDERED",
            "old_card_cancelled": True,
        }
        if not add_to_db("credit_card_orders", order_id, record, db=self.db):
            return "Error: Order may have already been placed for this card replacement."
        accounts = self._t("credit_card_accounts")
        if credit_card_account_id in accounts:
            accounts[credit_card_account_id]["status"] = "CLOSED"
            accounts[credit_card_account_id]["closed_date"] = ids.today_str()
        method = "Expedited" if expedited_shipping else "Standard"
        delivery = "2-3 business days" if expedited_shipping else "7-10 business days"
        return "\n".join(
            [
                f"Order ID: {order_id}",
                f"Card Account: {credit_card_account_id}",
                f"Reason: {reason.replace('_', ' ').title()}",
                f"Shipping Address: {shipping_address}",
                f"Shipping Method: {method}",
                f"Expected Delivery: {delivery}",
                "",
                "The old card has been cancelled for security. The new card will have the same "
                "account number but a new card number and CVV.",
            ]
        )

    @tool(listed=False)
    def get_pending_replacement_orders_5765(self, credit_card_account_id: str) -> str:
        """Say whether a credit card account has replacement cards on order.

        Args:
            credit_card_account_id (string): The credit card account
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        header = [
            "Pending replacement orders check completed.",
            "",
            "Executed: get_pending_replacement_orders_5765",
            f"Replacement orders for credit card account {credit_card_account_id}:",
        ]
        return self._history(
            "credit_card_orders", "credit_card_account_id", credit_card_account_id, header,
            "\nNo pending replacement orders found for this credit card account.",
        )  # fmt: skip

    @tool(kind="write", listed=False)
    def log_credit_card_closure_reason_4521(
        self, credit_card_account_id: str, user_id: str, closure_reason: str
    ) -> str:
        """Record why a customer wants to close a credit card account.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            closure_reason (string): One of 'annual_fee', 'not_using_card', 'found_better_card', 'unhappy_with_rewards', 'simplifying_finances', 'negative_experience', 'other'
        """  # noqa: E501
        if not credit_card_account_id or not user_id or not closure_reason:
            return "Error: Missing required parameters."
        reasons = [
            "annual_fee",
            "not_using_card",
            "found_better_card",
            "unhappy_with_rewards",
            "simplifying_finances",
            "negative_experience",
            "other",
        ]
        if closure_reason not in reasons:
            return f"Error: Invalid closure_reason. Must be one of: {reasons}"
        record_id = ids.closure_reason_id(credit_card_account_id, user_id)
        record = {
            "record_id": record_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "closure_reason": closure_reason,
            "logged_at": ids.today_str(),
            "status": "LOGGED",
        }
        add_to_db("credit_card_closure_reasons", record_id, record, db=self.db)
        shown = _json_args(
            credit_card_account_id=credit_card_account_id,
            user_id=user_id,
            closure_reason=closure_reason,
        )
        return (
            "Closure reason logged successfully.\n\n"
            "Executed: log_credit_card_closure_reason_4521\n"
            f"Arguments: {shown}\n"
            f"Closure reason '{closure_reason}' logged for account {credit_card_account_id}."
        )

    @tool(listed=False)
    def get_closure_reason_history_8293(self, credit_card_account_id: str) -> str:
        """List earlier closure requests recorded on a credit card account.

        Args:
            credit_card_account_id (string): The credit card account
        """
        if not credit_card_account_id:
            return "Error: Missing required parameter: credit_card_account_id"
        header = [
            "Closure reason history retrieved successfully.",
            "",
            "Executed: get_closure_reason_history_8293",
            f"Closure reason history for credit card account {credit_card_account_id}:",
        ]
        return self._history(
            "credit_card_closure_reasons", "credit_card_account_id", credit_card_account_id,
            header, "\nNo closure reason records found for this credit card account.",
        )  # fmt: skip

    @tool(kind="write", listed=False)
    def apply_statement_credit_8472(
        self, user_id: str, credit_card_account_id: str, amount: float, reason: str
    ) -> str:
        """Credit an amount to a credit card account's statement.

        Args:
            user_id (string): The customer's user id
            credit_card_account_id (string): The credit card account
            amount (number): Dollars to credit, e.g. 25.00
            reason (string): One of 'goodwill_adjustment', 'promotional_credit', 'annual_fee_reversal', 'late_fee_reversal', 'interest_charge_reversal', 'dispute_resolution', 'price_match', 'retention_offer', 'error_correction', 'other'
        """  # noqa: E501
        if not user_id or not credit_card_account_id or amount is None or not reason:
            return (
                "Error: Missing required parameters (user_id, credit_card_account_id, amount, "
                "reason)."
            )
        if amount <= 0:
            return "Error: Credit amount must be positive."
        reasons = [
            "goodwill_adjustment",
            "promotional_credit",
            "annual_fee_reversal",
            "late_fee_reversal",
            "interest_charge_reversal",
            "dispute_resolution",
            "price_match",
            "retention_offer",
            "error_correction",
            "other",
        ]
        if reason not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        found = self._query("credit_card_accounts", "account_id", credit_card_account_id)
        if "No results found" in found or "No records found" in found:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        transaction_id = ids.transaction_id(
            user_id, "STATEMENT_CREDIT", reason, amount, "Statement Credit"
        )
        today = ids.today_str()
        record = {
            "transaction_id": transaction_id,
            "user_id": user_id,
            "credit_card_account_id": credit_card_account_id,
            "credit_card_type": "N/A",
            "merchant_name": "Rho-Bank Statement Credit",
            "transaction_amount": f"-${amount:.2f}",
            "transaction_date": today,
            "category": "Statement Credit",
            "status": "COMPLETED",
            "rewards_earned": "0 points",
            "credit_reason": reason,
        }
        if not add_to_db("credit_card_transaction_history", transaction_id, record, db=self.db):
            return (
                f"Error: Failed to apply statement credit. Transaction ID '{transaction_id}' "
                "may already exist."
            )
        return (
            "Statement credit applied successfully.\n\n"
            "Executed: apply_statement_credit_8472\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - Credit Amount: ${amount:.2f}\n"
            f"  - Reason: {reason.replace('_', ' ').title()}\n"
            f"  - Date: {today}"
        )

    @tool(kind="write", listed=False)
    def apply_credit_card_account_flag_6147(
        self,
        credit_card_account_id: str,
        user_id: str,
        flag_type: str,
        expiration_date: str,
        reason: str,
    ) -> str:
        """Put a time-limited flag on a credit card account (a waived annual fee, a promotional rate, a rewards bonus and the like).

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
            flag_type (string): One of 'annual_fee_waived', 'promotional_apr', 'rewards_bonus', 'other'
            expiration_date (string): Last day of the flag, MM/DD/YYYY
            reason (string): One of 'retention_offer', 'loyalty_benefit', 'promotional', 'error_correction', 'other'
        """  # noqa: E501
        if (
            not credit_card_account_id
            or not user_id
            or not flag_type
            or not expiration_date
            or not reason
        ):
            return (
                "Error: Missing required parameters (credit_card_account_id, user_id, flag_type, "
                "expiration_date, reason)."
            )
        flag_types = ["annual_fee_waived", "promotional_apr", "rewards_bonus", "other"]
        if flag_type not in flag_types:
            return f"Error: Invalid flag_type. Must be one of: {flag_types}"
        reasons = ["retention_offer", "loyalty_benefit", "promotional", "error_correction", "other"]
        if reason not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        found = self._query("credit_card_accounts", "account_id", credit_card_account_id)
        if "No results found" in found or "No records found" in found:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        flag_id = ids.account_flag_id(credit_card_account_id, flag_type, expiration_date)
        today = ids.today_str()
        record = {
            "flag_id": flag_id,
            "credit_card_account_id": credit_card_account_id,
            "user_id": user_id,
            "flag_type": flag_type,
            "effective_date": today,
            "expiration_date": expiration_date,
            "reason": reason,
            "applied_at": today,
            "status": "ACTIVE",
        }
        if not add_to_db("credit_card_account_flags", flag_id, record, db=self.db):
            return f"Error: Failed to apply account flag. Flag ID '{flag_id}' may already exist."
        return (
            f"Account flag applied successfully!\n"
            f"  - Flag ID: {flag_id}\n"
            f"  - Account: {credit_card_account_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Flag Type: {flag_type.replace('_', ' ').title()}\n"
            f"  - Effective Date: {today}\n"
            f"  - Expiration Date: {expiration_date}\n"
            f"  - Reason: {reason.replace('_', ' ').title()}"
        )

    @tool(kind="write", listed=False)
    def close_credit_card_account_7834(self, credit_card_account_id: str, user_id: str) -> str:
        """Close a credit card account for good.

        Args:
            credit_card_account_id (string): The credit card account
            user_id (string): The customer's user id
        """
        if not credit_card_account_id or not user_id:
            return "Error: Missing required parameters (credit_card_account_id, user_id)."
        found = self._query("credit_card_accounts", "account_id", credit_card_account_id)
        if "No results found" in found or "No records found" in found:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        success, _ = update_record_in_db(
            "credit_card_accounts",
            db=self.db,
            record_id=credit_card_account_id,
            updates={"status": "CLOSED", "closed_date": ids.today_str(), "closed_by": user_id},
        )
        if not success:
            return f"Error: Failed to close credit card account '{credit_card_account_id}'."
        shown = _json_args(credit_card_account_id=credit_card_account_id, user_id=user_id)
        return (
            "Credit card account closed successfully.\n\n"
            "Executed: close_credit_card_account_7834\n"
            f"Arguments: {shown}\n"
            f"Account {credit_card_account_id} has been closed."
        )

    @tool(kind="write", listed=False)
    def pay_credit_card_from_checking_9182(
        self,
        user_id: str,
        checking_account_id: str,
        credit_card_account_id: str,
        amount: float,
    ) -> str:
        """Move money from the customer's checking account onto a credit card balance.

        Args:
            user_id (string): The customer's user id
            checking_account_id (string): The checking account to take it from
            credit_card_account_id (string): The credit card account to pay
            amount (number): Dollars to pay, above zero
        """
        if not user_id or not checking_account_id or not credit_card_account_id or amount is None:
            return (
                "Error: Missing required parameters (user_id, checking_account_id, "
                "credit_card_account_id, amount)."
            )
        try:
            amount = float(amount)
            if amount <= 0:
                return "Error: Payment amount must be a positive number."
        except (ValueError, TypeError):
            return "Error: Invalid payment amount. Must be a positive number."
        accounts = self._t("accounts")
        if checking_account_id not in accounts:
            return f"Error: Checking account '{checking_account_id}' not found."
        checking = accounts[checking_account_id]
        if checking.get("user_id") != user_id:
            return (
                f"Error: Checking account '{checking_account_id}' does not belong to user "
                f"'{user_id}'."
            )
        if checking.get("class") != "checking":
            return f"Error: Account '{checking_account_id}' is not a checking account."
        balance = _account_balance(checking)
        if amount > balance:
            return (
                f"Error: Insufficient funds in checking account. Available balance: "
                f"${balance:.2f}, requested payment: ${amount:.2f}."
            )
        cards = self._t("credit_card_accounts")
        if credit_card_account_id not in cards:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        card = cards[credit_card_account_id]
        if card.get("user_id") != user_id:
            return (
                f"Error: Credit card account '{credit_card_account_id}' does not belong to user "
                f"'{user_id}'."
            )
        card_balance = _money(card.get("current_balance", "$0.00"))
        if amount > card_balance:
            return (
                f"Error: Payment amount (${amount:.2f}) exceeds credit card balance "
                f"(${card_balance:.2f}). Please specify an amount up to the outstanding balance."
            )
        new_checking = balance - amount
        new_card = card_balance - amount
        accounts[checking_account_id]["current_holdings"] = f"{new_checking:.2f}"
        cards[credit_card_account_id]["current_balance"] = f"${new_card:.2f}"
        return (
            f"Payment processed successfully!\n"
            f"  - Payment Amount: ${amount:.2f}\n"
            f"  - From Checking Account: {checking_account_id}\n"
            f"  - To Credit Card Account: {credit_card_account_id}\n"
            f"  - New Checking Balance: ${new_checking:.2f}\n"
            f"  - New Credit Card Balance: ${new_card:.2f}\n"
            f"The payment has been applied immediately."
        )
