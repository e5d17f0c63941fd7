"""τ³ banking's discoverable desk tools: checking and savings accounts: opening, closing,
listing, transfers, credits, interest discrepancy reports, transactions.

Mixed into `KnowledgeTools` (``tools.py``); each tool's docstring is deedbench's own
wording, shown when the agent unlocks it only where the user has no τ² source
(τ²'s docstrings are read from the source otherwise, `shown.discoverable_docs`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
    query_db,
)
from deedbench.benchmarks.tau2.banking.rules import (
    _EARLY_CLOSURE,
    _account_balance,
    _age_days,
)
from deedbench.benchmarks.tau2.banking.toolkit import BankingToolkit
from deedbench.engine import tool

__all__ = ["BankAccountTools"]


class BankAccountTools(BankingToolkit):
    """Checking and savings accounts: opening, closing, listing, transfers, credits, interest
    discrepancy reports, transactions."""

    @tool(kind="write", listed=False)
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        """Open a checking or savings account for a customer.

        Args:
            user_id (string): The customer's user id
            account_type (string): One of 'checking', 'savings', 'business_checking', 'business_savings'
            account_class (string): The account class's official full name
        """  # noqa: E501
        if not user_id or not account_type or not account_class:
            return "Error: Missing required parameters."
        types = ["checking", "savings", "business_checking", "business_savings"]
        if account_type not in types:
            return f"Error: Invalid account_type. Must be one of: {types}"

        def age(acc: dict[str, Any]) -> int:
            try:
                return _age_days(acc.get("date_opened", ""), ids.NOW)
            except ValueError:
                return 0

        def open_as(acc: dict[str, Any], kinds: list[str]) -> bool:
            kind = acc.get("account_type", acc.get("class", ""))
            return kind in kinds and acc.get("status", "") in ["OPEN", "ACTIVE"]

        owned = [acc for acc in self._t("accounts").values() if acc.get("user_id") == user_id]
        personal = ["checking", "personal_checking"]
        refused = "Error: Account eligibility requirements not met."
        # τ²'s rules: savings needs a personal checking open 14+ days; business checking no
        # closed account and an open personal checking; business savings no negative balance
        # and a business checking open 30+ days.
        if account_type == "savings" and not any(
            open_as(acc, personal) and age(acc) >= 14 for acc in owned
        ):
            return refused
        if account_type == "business_checking":
            if any(acc.get("status") == "CLOSED" for acc in owned):
                return refused
            if not any(open_as(acc, personal) for acc in owned):
                return refused
        if account_type == "business_savings":
            for acc in owned:
                if _account_balance(acc) < 0:
                    return refused
            if not any(open_as(acc, ["business_checking"]) and age(acc) >= 30 for acc in owned):
                return refused
        account_id = ids.deterministic_id(f"account:{user_id}:{account_type}:{account_class}")
        today = ids.today_str()
        record = {
            "account_id": account_id,
            "user_id": user_id,
            "account_type": account_type,
            "account_class": account_class,
            "current_holdings": "0.00",
            "status": "OPEN",
            "date_opened": today,
        }
        if not add_to_db("accounts", account_id, record, db=self.db):
            return f"Failed to open account: Account ID '{account_id}' may already exist."
        return (
            f"Bank account opened successfully!\n"
            f"  - Account ID: {account_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Account Type: {account_type}\n"
            f"  - Account Class: {account_class}\n"
            f"  - Status: OPEN\n"
            f"  - Initial Balance: $0.00\n"
            f"  - Date Opened: {today}"
        )

    @tool(kind="write", listed=False)
    def close_bank_account_7392(
        self,
        account_id: str,
        reason: str = "Customer requested closure",
        waive_early_closure_fee: bool = False,
    ) -> str:
        """Close a checking or savings account.

        Args:
            account_id (string): The account
            reason (string, optional): Why it is closed
            waive_early_closure_fee (boolean, optional): Whether no early closure fee is charged
        """
        if not account_id:
            return "Error: Missing required parameter (account_id)."
        accounts = self._t("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") == "CLOSED":
            return f"Error: Account '{account_id}' is already closed."
        balance = _account_balance(account)
        fee_applied = 0.0
        if not waive_early_closure_fee:
            level = account.get("level", "")
            account_class = account.get("class", "")
            date_opened = account.get("date_opened", "")
            early = None
            if account_class in ("checking", "savings"):
                early = _EARLY_CLOSURE[account_class].get(level)
            if early and date_opened:
                try:
                    fee, window = early
                    if _age_days(date_opened, ids.NOW) < window:
                        if balance < fee:
                            return "Error: Account unable to be closed."
                        fee_applied = fee
                except ValueError:
                    pass
        if balance - fee_applied != 0:
            return (
                "Error: Account balance must be $0.00 before closing. Current balance: "
                f"${balance:.2f}"
            )
        today = ids.today_str()
        account["status"] = "CLOSED"
        account["date_closed"] = today
        account["closure_reason"] = reason
        account["early_closure_fee_waived"] = waive_early_closure_fee
        return (
            f"Bank account closed successfully!\n"
            f"  - Account ID: {account_id}\n"
            f"  - Account Type: {account.get('account_type', 'N/A')}\n"
            f"  - Account Class: {account.get('account_class', 'N/A')}\n"
            f"  - Status: CLOSED\n"
            f"  - Date Closed: {today}\n"
            f"  - Reason: {reason}\n"
            f"  - Early Closure Fee Waived: {'Yes' if waive_early_closure_fee else 'No'}"
        )

    @tool(listed=False)
    def get_all_user_accounts_by_user_id_3847(self, user_id: str) -> str:
        """List every account a customer holds: checking, savings and credit cards.

        Args:
            user_id (string): The customer's user id
        """
        if not user_id:
            return "Error: Missing required parameter: user_id"
        accounts = self._query("accounts", "user_id", user_id)
        cards = self._query("credit_card_accounts", "user_id", user_id)
        lines = [
            "User accounts retrieved successfully.",
            "",
            "Executed: get_all_user_accounts_by_user_id_3847",
            f"Accounts for user {user_id}:",
            "",
            "Bank Accounts:",
        ]
        if "No records found" not in accounts and "No results found" not in accounts:
            lines.append(accounts)
        else:
            lines.append("  No bank accounts found.")
        lines.append("\nCredit Card Accounts:")
        if "No records found" not in cards and "No results found" not in cards:
            lines.append(cards)
        else:
            lines.append("  No credit card accounts found.")
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def transfer_funds_between_bank_accounts_7291(
        self, source_account_id: str, destination_account_id: str, amount: float
    ) -> str:
        """Move money between two bank accounts.

        Args:
            source_account_id (string): The account to take it from
            destination_account_id (string): The account to put it in
            amount (number): Dollars to move
        """
        if not source_account_id or not destination_account_id or amount is None:
            return (
                "Error: Missing required parameters (source_account_id, destination_account_id, "
                "amount)."
            )
        try:
            amount = float(amount)
        except (ValueError, TypeError):
            return f"Error: Invalid amount '{amount}'. Must be a number."
        if amount <= 0:
            return "Error: Transfer amount must be positive."
        if source_account_id == destination_account_id:
            return "Error: Source and destination accounts cannot be the same."
        accounts = self._t("accounts")
        if source_account_id not in accounts:
            return f"Error: Source account '{source_account_id}' not found."
        if destination_account_id not in accounts:
            return f"Error: Destination account '{destination_account_id}' not found."
        source = accounts[source_account_id]
        if source.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Source account '{source_account_id}' is not active."
        dest = accounts[destination_account_id]
        if dest.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Destination account '{destination_account_id}' is not active."
        source_balance = _account_balance(source)
        if source_balance < amount:
            return (
                f"Error: Insufficient funds. Source account balance is ${source_balance:.2f}, "
                f"but transfer amount is ${amount:.2f}."
            )
        dest_balance = _account_balance(dest)
        new_source = source_balance - amount
        new_dest = dest_balance + amount
        source["current_holdings"] = f"${new_source:.2f}"
        dest["current_holdings"] = f"${new_dest:.2f}"
        return (
            f"Transfer completed successfully!\n"
            f"  - Amount: ${amount:.2f}\n"
            f"  - From: {source_account_id} (new balance: ${new_source:.2f})\n"
            f"  - To: {destination_account_id} (new balance: ${new_dest:.2f})"
        )

    def _credit_account(
        self, account_id: Any, amount: Any, credit_type: Any, spec: dict[str, Any]
    ) -> str:
        """τ²'s two account credit tools, which differ only in the `spec` they are given."""
        if not account_id or amount is None or not credit_type:
            return "Error: Missing required parameters."
        try:
            amount = float(amount)
        except (TypeError, ValueError):
            return "Error: Invalid credit amount. Must be a number."
        if amount <= 0:
            return "Error: Credit amount must be positive."
        kinds: dict[str, str] = spec["descriptions"]
        valid = list(kinds)
        if credit_type not in valid:
            return f"Error: Invalid credit_type. Must be one of: {valid}"
        accounts = self._t("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class", "").lower() not in spec["classes"]:
            return f"Error: Account '{account_id}' {spec['wrong_class']}"
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        balance = _account_balance(account)
        new_balance = balance + amount
        account["current_holdings"] = f"{spec['currency']}{new_balance:.2f}"
        today = ids.today_str()
        seed = f"{spec['seed']}:{account_id}:{credit_type}:{amount}:{today}"
        transaction_id = f"txn_{ids.deterministic_id(seed)}"
        self._t("bank_account_transaction_history")[transaction_id] = {
            "transaction_id": transaction_id,
            "account_id": account_id,
            "date": today,
            "description": kinds[credit_type],
            "amount": amount,
            "type": credit_type,
            "status": "posted",
        }
        return (
            f"\nCredit applied successfully!\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - Account: {account_id}\n"
            f"  - Credit Type: {credit_type}\n"
            f"  - Amount: ${amount:.2f}\n"
            f"  - Previous Balance: ${balance:.2f}\n"
            f"  - New Balance: ${new_balance:.2f}"
        )

    @tool(kind="write", listed=False)
    def apply_checking_account_credit_5829(
        self, account_id: str, amount: float, credit_type: str
    ) -> str:
        """Credit an amount to a checking account.

        Args:
            account_id (string): The checking account
            amount (number): Dollars to credit, above zero
            credit_type (string): 'rebate_credit' (a missing rebate) or 'fee_refund' (a fee charged in error)
        """  # noqa: E501
        spec: dict[str, Any] = {
            "descriptions": {
                "rebate_credit": "REBATE CREDIT - CUSTOMER SERVICE",
                "fee_refund": "FEE REFUND - CUSTOMER SERVICE",
            },
            "classes": ("checking",),
            "wrong_class": "is not a checking account. Credits can only be applied to checking "
            "accounts.",
            "currency": "$",
            "seed": "checking_credit",
        }
        return self._credit_account(account_id, amount, credit_type, spec)

    @tool(kind="write", listed=False)
    def apply_savings_account_credit_6831(
        self, account_id: str, amount: float, credit_type: str
    ) -> str:
        """Credit an amount to a savings account.

        Args:
            account_id (string): The savings account
            amount (number): Dollars to credit, above zero
            credit_type (string): 'interest_correction' (interest computed wrongly), 'fee_refund' (a fee charged in error) or 'goodwill_credit' (a gesture of goodwill)
        """  # noqa: E501
        spec: dict[str, Any] = {
            "descriptions": {
                "interest_correction": "INTEREST CORRECTION - CUSTOMER SERVICE",
                "fee_refund": "FEE REFUND - CUSTOMER SERVICE",
                "goodwill_credit": "GOODWILL CREDIT - CUSTOMER SERVICE",
            },
            "classes": ("saving", "savings"),
            "wrong_class": "is not a savings account. This tool only applies to savings accounts.",
            "currency": "",
            "seed": "savings_credit",
        }
        return self._credit_account(account_id, amount, credit_type, spec)

    @tool(kind="write", listed=False)
    def submit_interest_discrepancy_report_7294(
        self,
        account_id: str,
        user_id: str,
        expected_apy: float,
        actual_apy: float,
        amount_difference: float,
    ) -> str:
        """Send the back office a report of interest that does not match the account's APY, for them to investigate.

        Args:
            account_id (string): The savings account
            user_id (string): The customer's user id
            expected_apy (number): The APY owed, in percent, e.g. 2.775
            actual_apy (number): The APY applied, in percent, e.g. 2.5
            amount_difference (number): Dollars of interest missing
        """  # noqa: E501
        if (
            not account_id
            or not user_id
            or expected_apy is None
            or actual_apy is None
            or amount_difference is None
        ):
            return "Error: Missing required parameters."
        try:
            expected_apy = float(expected_apy)
            actual_apy = float(actual_apy)
            amount_difference = float(amount_difference)
        except (ValueError, TypeError):
            return "Error: expected_apy, actual_apy, and amount_difference must be numbers."
        account = self._t("accounts").get(account_id)
        if account is None:
            return f"Error: Account '{account_id}' not found."
        user = self._t("users").get(user_id)
        if user is None:
            return f"Error: User '{user_id}' not found."
        today = ids.today_str()
        seed = f"interest_report:{account_id}:{user_id}:{expected_apy}:{actual_apy}:{today}"
        report_id = f"IDR_{ids.deterministic_id(seed)}"
        # τ² files the report in an ``interest_discrepancy_reports`` table, which its database
        # does not have: its insert changes nothing, so there is none here.
        return (
            f"\nInterest Discrepancy Report Submitted Successfully!\n"
            f"  - Report ID: {report_id}\n"
            f"  - Account: {account_id} ({account.get('level', 'Unknown')})\n"
            f"  - Customer: {user.get('name', 'Unknown')}\n"
            f"  - Expected APY: {expected_apy}%\n"
            f"  - Actual APY: {actual_apy}%\n"
            f"  - APY Difference: {round(expected_apy - actual_apy, 4)}%\n"
            f"  - Amount Difference: ${amount_difference:.2f}\n"
            f"  - Status: PENDING_REVIEW\n"
            f"\nThe backend team will investigate this discrepancy and ensure "
            f"correct APY calculations are applied going forward."
        )

    @tool(listed=False)
    def get_bank_account_transactions_9173(self, account_id: str) -> str:
        """List a bank account's transactions, newest first.

        Args:
            account_id (string): The bank account
        """
        if not account_id:
            return "Error: Missing required parameter: account_id"
        if account_id not in self._t("accounts"):
            return f"Error: Account '{account_id}' not found."
        found = query_db(
            "bank_account_transaction_history", db=self.db, return_ids=True, account_id=account_id
        )

        def when(item: tuple[str, dict[str, Any]]) -> datetime:
            text = str(item[1].get("date", ""))
            for form in ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y"):
                try:
                    return datetime.strptime(text, form)
                except ValueError:
                    continue
            return datetime.min

        # Most recent first; stable, so records of one date keep their stored order.
        txns = sorted(found, key=when, reverse=True)
        lines = [
            "Bank account transactions retrieved successfully.",
            "",
            "Executed: get_bank_account_transactions_9173",
            f"Transactions for account {account_id}:",
        ]
        if txns:
            listed = [f"Found {len(txns)} record(s) in 'bank_account_transaction_history':\n"]
            for number, (record_id, record) in enumerate(txns, 1):
                listed.append(f"{number}. Record ID: {record_id}")
                listed.extend(f"   {field}: {value}" for field, value in record.items())
                listed.append("")
            lines.append("\n".join(listed))
        else:
            lines.append("\nNo transactions found for this account.")
        return "\n".join(lines)
