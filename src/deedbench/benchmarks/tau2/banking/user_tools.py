"""τ³ banking's customer tools: over the desk's database, the listed ones and those the
agent gives the customer (discoverable), each given one logged."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from typing import Any, ClassVar

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import add_to_db, query_database_tool, table_data
from deedbench.benchmarks.tau2.banking.discovery import _unlisted
from deedbench.benchmarks.tau2.banking.rules import _CARD_TYPES, _REWARDS, _account_balance
from deedbench.benchmarks.tau2.banking.schema import TransactionalDB
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.engine import tool

__all__ = ["KnowledgeUserTools"]

_OWN_MODULES = re.compile(r"deedbench\.benchmarks\.tau2\.banking\.\w+\.")
_TAU2_MODULE = "tau2.domains.banking_knowledge.tools."


class KnowledgeUserTools(Toolkit):
    """The customer's banking tools, over the desk's database."""

    tau2_module = "tau2.domains.banking_knowledge.tools"

    schema = TransactionalDB
    tables: ClassVar[frozenset[str] | None] = frozenset()

    VALID_CREDIT_CARD_TYPES: ClassVar[list[str]] = _CARD_TYPES
    CREDIT_CARD_REWARDS: ClassVar[dict[str, dict[str, float]]] = _REWARDS

    def _t(self, name: str) -> dict[str, dict[str, Any]]:
        return table_data(self.db, name)

    def get_discoverable_tools(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _unlisted(type(self))}

    def has_discoverable_tool(self, tool_name: Any) -> bool:
        return tool_name in self.get_discoverable_tools()

    def _check_tool_given(self, tool_name: str) -> str | None:
        found = query_database_tool(
            "user_discoverable_tools", f'{{"tool_name": "{tool_name}"}}', db=self.db
        )
        if "No records found" in found:
            return (
                f"Error: Tool '{tool_name}' has not been given to you by the agent. "
                f"The agent must first use `give_discoverable_user_tool` to give this tool to you."
            )
        return None

    def _log_user_tool_call(self, tool_name: str, args: dict[str, Any]) -> None:
        record = {
            "tool_name": tool_name,
            "arguments": args,
            "called_at": ids.today_str(),
            "status": "CALLED",
        }
        add_to_db(
            "user_discoverable_tool_calls", ids.user_tool_call_id(tool_name, args), record, self.db
        )

    @tool(kind="write", listed=False, side="user")
    def submit_cash_back_dispute_0589(self, user_id: str, transaction_id: str) -> str:
        """Report a transaction whose cash back looks wrong.

        Args:
            user_id (string): Your user id
            transaction_id (string): The transaction
        """
        error = self._check_tool_given("submit_cash_back_dispute_0589")
        if error:
            return error
        args = {"user_id": user_id, "transaction_id": transaction_id}
        self._log_user_tool_call("submit_cash_back_dispute_0589", args)
        dispute_id = ids.dispute_id(user_id, transaction_id)
        config = self._t("task_config")
        auto_resolve = False
        if config:
            auto_resolve = config.get("dispute_settings", {}).get("auto_resolve_disputes", False)
        record: dict[str, Any] = {
            "dispute_id": dispute_id,
            "user_id": user_id,
            "transaction_id": transaction_id,
            "submitted_at": ids.today_str(),
        }
        if auto_resolve:
            record.update(status="RESOLVED", resolution="APPROVED")
            status = (
                "Status: RESOLVED - The dispute has been reviewed and approved. The transaction "
                "rewards need to be updated."
            )
        else:
            record["status"] = "SUBMITTED"
            status = "Status: SUBMITTED - Your dispute has been queued for review."
        success = add_to_db("cash_back_disputes", dispute_id, record, db=self.db)
        result = (
            "Cash back dispute submitted successfully. Your case has been queued for review."
            "\n\nExecuted: submit_cash_back_dispute_0589\n"
            f"Arguments: {json.dumps(args, indent=2)}\n"
        )
        if success:
            return result + f"Dispute ID: {dispute_id}\n{status}"
        return result + "Note: Dispute may have already been submitted for this transaction."

    @tool(kind="write", listed=False, side="user")
    def get_referral_link(self, user_id: str, card_name: str) -> str:
        """Make a link for referring someone to a credit card.

        Args:
            user_id (string): Your user id (you refer them)
            card_name (string): The card, e.g. 'Gold Rewards Card'
        """
        error = self._check_tool_given("get_referral_link")
        if error:
            return error
        args = {"user_id": user_id, "card_name": card_name}
        self._log_user_tool_call("get_referral_link", args)
        referral_id = ids.referral_link_id(user_id, card_name)
        record = {
            "referral_id": referral_id,
            "referrer_id": user_id,
            "referred_account_type": card_name,
            "referral_status": "NO_PROGRESS",
            "date": ids.today_str(),
        }
        success = add_to_db("referrals", referral_id, record, db=self.db)
        result = (
            "Referral link generated successfully. Share this link with the person you want to "
            f"refer.\n\nExecuted: get_referral_link\nArguments: {json.dumps(args, indent=2)}\n"
        )
        if success:
            return (
                result
                + f"Referral ID: {referral_id}\nReferral link: https://rhobank.com/refer/{referral_id}"
            )
        return result + "Note: A referral link for this card may have already been generated."

    @tool(listed=False, side="user")
    def get_card_last_4_digits(self, credit_card_account_id: str) -> str:
        """Look up the last four digits of a credit card's number.

        Args:
            credit_card_account_id (string): The credit card account, e.g. 'cc_76ad9cc60e_gold'
        """
        error = self._check_tool_given("get_card_last_4_digits")
        if error:
            return error
        args = {"credit_card_account_id": credit_card_account_id}
        self._log_user_tool_call("get_card_last_4_digits", args)
        found = query_database_tool(
            "credit_card_accounts", f'{{"account_id": "{credit_card_account_id}"}}', db=self.db
        )
        if "No results found" in found or "No records found" in found:
            return f"Error: Credit card account '{credit_card_account_id}' not found."
        digest = hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
        last_4 = "".join(char for char in digest if char.isdigit())[:4].ljust(4, "0")
        return (
            "Card information retrieved successfully.\n\nExecuted: get_card_last_4_digits\n"
            f"Arguments: {json.dumps(args, indent=2)}\nLast 4 digits of card: {last_4}"
        )

    @tool(kind="write", listed=False, side="user")
    def deposit_check_3847(self, account_id: str, check_amount: float) -> str:
        """Deposit a check from your phone, into a checking or savings account.

        Args:
            account_id (string): The account
            check_amount (number): The check's amount in USD
        """
        error = self._check_tool_given("deposit_check_3847")
        if error:
            return error
        args = {"account_id": account_id, "check_amount": check_amount}
        self._log_user_tool_call("deposit_check_3847", args)
        try:
            amount = float(check_amount)
        except (ValueError, TypeError):
            return f"Error: Invalid check amount '{check_amount}'. Must be a number."
        if amount <= 0:
            return "Error: Check amount must be positive."
        accounts = self._t("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("status") not in ("ACTIVE", "OPEN"):
            return f"Error: Account '{account_id}' is not active."
        balance = _account_balance(account)
        new_balance = balance + amount
        account["current_holdings"] = f"${new_balance:.2f}"
        return (
            "Check deposited successfully. Funds will be available according to your account's "
            "deposit policy.\n\n"
            "Executed: deposit_check_3847\n"
            f"Arguments: {json.dumps(args, indent=2)}\n"
            "Check deposit processed!\n"
            f"  - Account: {account_id}\n"
            f"  - Check Amount: ${amount:.2f}\n"
            f"  - Previous Balance: ${balance:.2f}\n"
            f"  - New Balance: ${new_balance:.2f}"
        )

    @tool(kind="write", side="user")
    def apply_for_credit_card(
        self,
        card_type: str,
        customer_name: str,
        annual_income: float,
        rho_bank_subscription: bool = False,
    ) -> str:
        """Ask the bank for a new credit card.

        Args:
            card_type: The card's type.
            customer_name: Your full legal name.
            annual_income: Your annual income in USD.
            rho_bank_subscription: Whether you have a Rho-Bank+ subscription.
        """
        if card_type not in self.VALID_CREDIT_CARD_TYPES:
            return (
                f"Error: Invalid card_type '{card_type}'. "
                f"Must be one of: {self.VALID_CREDIT_CARD_TYPES}"
            )
        try:
            income = float(annual_income)
        except (TypeError, ValueError):
            return "Error: Invalid annual_income. Must be a number."
        application_id = ids.application_id(card_type, customer_name, income, rho_bank_subscription)
        record = {
            "application_id": application_id,
            "card_type": card_type,
            "customer_name": customer_name,
            "annual_income": income,
            "rho_bank_subscription": rho_bank_subscription,
            "status": "PENDING",
            "date": ids.today_str(),
        }
        if not add_to_db("credit_card_applications", application_id, record, db=self.db):
            return f"Failed to submit application: Record ID '{application_id}' may already exist."
        return (
            "Credit card application submitted:\nYour application has been successfully "
            "submitted. You will receive a decision within 5-7 business days via email."
        )

    @tool(kind="write", side="user")
    def submit_referral(self, user_id: str, account_type: str) -> str:
        """Refer someone to open an account.

        Args:
            user_id: Your user id (the referrer).
            account_type: The kind of account you refer them to.
        """
        referral_id = ids.referral_id(user_id, account_type)
        today = ids.today_str()
        record = {
            "referral_id": referral_id,
            "referrer_id": user_id,
            "referred_account_type": account_type,
            "referral_status": "NO_PROGRESS",
            "date": today,
        }
        if not add_to_db("referrals", referral_id, record, db=self.db):
            return f"Failed to submit referral: Record ID '{referral_id}' may already exist."
        return (
            f"Referral request submitted successfully!\n"
            f"  - Referral ID: {referral_id}\n"
            f"  - Referrer ID: {user_id}\n"
            f"  - Account Type: {account_type}\n"
            f"  - Status: NO_PROGRESS\n"
            f"  - Date: {today}\n\n"
            f"Share your referral ID with the person you're referring. "
            f"They will need to use this when applying for their account."
        )

    def query_database(self, database_name: str, constraints: str = "{}") -> str:
        """τ²'s undecorated query helper (not a tool)."""
        return query_database_tool(database_name, constraints, db=self.db)

    @tool(kind="write", side="user")
    def call_discoverable_user_tool(
        self, discoverable_tool_name: str, arguments: str = "{}"
    ) -> str:
        """Run a tool the agent gave you.

        Args:
            discoverable_tool_name: The tool's name.
            arguments: Its arguments as a JSON object text.
        """
        if not self.has_discoverable_tool(discoverable_tool_name):
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            args_dict = json.loads(arguments, parse_int=float)
        except json.JSONDecodeError as e:
            return f"Error: Invalid JSON in arguments: {e}"
        method = self.get_discoverable_tools()[discoverable_tool_name]
        parameters = inspect.signature(method).parameters
        for name, parameter in parameters.items():
            if name == "self":
                continue
            if parameter.default is inspect.Parameter.empty and name not in args_dict:
                return f"Error: Missing required parameter: {name}"
        for arg_name in args_dict:
            if arg_name not in parameters:
                return f"Error: Unexpected parameter: {arg_name}"
        try:
            result: str = method(**args_dict)
        except TypeError as e:
            message = _OWN_MODULES.sub(_TAU2_MODULE, str(e))
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {message}"
        return result

    @tool(side="user")
    def list_discoverable_user_tools(self) -> str:
        """The tools the agent has given you."""
        found = query_database_tool("user_discoverable_tools", "{}", db=self.db)
        if "No results found" in found:
            return "No tools have been given to you yet by the agent."
        return f"Tools given to you by the agent:\n{found}"

    @tool(kind="write", side="user")
    def request_human_agent_transfer(self) -> str:
        """Ask to be transferred to a human agent; every request is logged."""
        today = ids.today_str()
        existing = query_database_tool("human_transfer_requests", "{}", db=self.db)
        if "No records found" in existing or "No results found" in existing:
            count = 1
        else:
            count = existing.count("request_id") + 1
        request_id = f"transfer_request_{count}"
        record = {
            "request_id": request_id,
            "request_number": count,
            "requested_at": today,
            "status": "PENDING",
        }
        add_to_db("human_transfer_requests", request_id, record, db=self.db)
        return f"Transfer request #{count} submitted.\nThe agent will process your request."

    @tool(kind="write", side="user")
    def submit_transaction(
        self,
        user_id: str,
        credit_card_type: str,
        merchant_name: str,
        amount: float,
        category: str,
    ) -> str:
        """Make a credit card purchase.

        Args:
            user_id: Your user id.
            credit_card_type: The card used (e.g. "Gold Rewards Card").
            merchant_name: The merchant.
            amount: The amount in USD (e.g. 127.43).
            category: The purchase's category (e.g. "Groceries", "Travel", "Software").
        """
        if credit_card_type not in self.CREDIT_CARD_REWARDS:
            cards = list(self.CREDIT_CARD_REWARDS.keys())
            return f"Error: Unknown credit card type '{credit_card_type}'. Available types: {cards}"
        transaction_id = ids.transaction_id(
            user_id, credit_card_type, merchant_name, amount, category
        )
        today = ids.today_str()
        rates = self.CREDIT_CARD_REWARDS[credit_card_type]
        rate = rates.get(category, rates["default"])
        points = int(amount * rate)
        record = {
            "transaction_id": transaction_id,
            "user_id": user_id,
            "credit_card_type": credit_card_type,
            "merchant_name": merchant_name,
            "transaction_amount": f"${amount:.2f}",
            "transaction_date": today,
            "category": category,
            "status": "COMPLETED",
            "rewards_earned": f"{points} points",
        }
        if not add_to_db("credit_card_transaction_history", transaction_id, record, db=self.db):
            return f"Failed to submit transaction: Record ID '{transaction_id}' may already exist."
        return (
            f"Transaction submitted successfully!\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - User ID: {user_id}\n"
            f"  - Card Type: {credit_card_type}\n"
            f"  - Merchant: {merchant_name}\n"
            f"  - Amount: ${amount:.2f}\n"
            f"  - Category: {category}\n"
            f"  - Date: {today}\n"
            f"  - Rewards Earned: {points} points ({rate}% cashback rate)\n"
        )
