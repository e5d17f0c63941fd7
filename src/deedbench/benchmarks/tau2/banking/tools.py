"""τ²'s banking tools (τ³'s ``banking_knowledge``): the desk's and the customer's.

Both sides act on one database. Besides its listed tools the desk has
*discoverable* ones, which the knowledge base names: the agent unlocks one
(``unlock_discoverable_agent_tool``, remembered in the episode's session, as τ²
remembers it on its toolkit, outside the database) and then calls it through
``call_discoverable_agent_tool``, which logs the call in the
``agent_discoverable_tools`` table when the tool changes state or the task's gold
actions call it (the task's read-log allowlist, `read_log_allowlist`). The
customer's discoverable tools are given by the agent (``give_discoverable_user_tool``,
logged in ``user_discoverable_tools``) and called through
``call_discoverable_user_tool``. A discoverable tool's docstring is what the agent
is shown when it unlocks or gives it, so those docstrings are τ²'s texts.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Iterable
from typing import Any, ClassVar, Literal, get_args

from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
    query_database_tool,
    table_data,
    update_record_in_db,
)
from deedbench.benchmarks.tau2.banking.schema import TransactionalDB
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.engine import Tool, tool

__all__ = [
    "KnowledgeTools",
    "KnowledgeUserTools",
    "read_log_allowlist",
    "set_read_log_allowlist",
]

TransferReason = Literal[
    "fraud_or_security_concern",
    "account_closure_request",
    "deceased_account_holder",
    "legal_or_regulatory_matter",
    "account_ownership_dispute",
    "complex_billing_dispute",
    "abusive_customer_behavior",
    "third_party_inquiry",
    "technical_system_error",
    "unconfirmed_external_communication",
    "customer_demands_after_unavailable_offer_refusal",
    "kb_search_unsuccessful_customer_requests_transfer",
    "specialized_department_required",
    "accessibility_or_special_needs",
    "customer_frustrated_demands_human",
    "supervisor_request_service_complaint",
    "customer_requests_human_no_specific_reason",
    "request_completed_customer_wants_human_followup",
    "other",
]

_ALLOWLIST = "read_log_allowlist"
_UNLOCKED = "agent_discoverable_tools"
_GIVEN = "user_discoverable_tools"
_OWN_MODULE = f"{__name__}."
_TAU2_MODULE = "tau2.domains.banking_knowledge.tools."


def read_log_allowlist(task: Any) -> set[str]:
    """τ²'s ``_derive_read_log_allowlist``: the discoverable tools the task's gold actions
    call through ``call_discoverable_agent_tool`` (their reads are logged too).

    `task` is a τ² task as a dict or a deedbench `Tau2Task`.
    """
    criteria = task.get("evaluation_criteria") if isinstance(task, dict) else None
    if not isinstance(task, dict):
        criteria = getattr(task, "evaluation_criteria", None)
    if criteria is None:
        return set()
    actions = criteria.get("actions") if isinstance(criteria, dict) else criteria.actions
    found: set[str] = set()
    for action in actions or []:
        name = action.get("name") if isinstance(action, dict) else action.name
        arguments = action.get("arguments") if isinstance(action, dict) else action.arguments
        if name == "call_discoverable_agent_tool":
            tool_name = (arguments or {}).get("agent_tool_name")
            if tool_name:
                found.add(tool_name)
    return found


def set_read_log_allowlist(world: DeskWorld, allowlist: Iterable[str] | None) -> None:
    """Give an episode's world its task's read-log allowlist (kept in its session, so
    every copy of the world and every toolkit over it sees it)."""
    world.session[_ALLOWLIST] = sorted(set(allowlist or []))


def _unlisted(cls: type) -> dict[str, Tool[..., Any]]:
    """A toolkit's discoverable tools (its unlisted ones), by name."""
    return {t.name: t for t in cls.tools() if not t.listed}  # type: ignore[attr-defined]


def _doc_info(function: Any) -> dict[str, Any]:
    """τ²'s ``parse_discoverable_tool_docstring``: description, parameters, success text."""
    doc = inspect.getdoc(function) or ""
    parts = re.split(r"\n\s*Args:\s*\n", doc, maxsplit=1)
    parameters: dict[str, Any] = {}
    success = "Action completed successfully."
    if len(parts) > 1:
        rest = re.split(r"\n\s*Returns:\s*\n", parts[1], maxsplit=1)
        if len(rest) > 1:
            success = rest[1].strip().split("\n")[0].strip()
        pattern = re.compile(r"^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$", re.MULTILINE)
        for found in pattern.finditer(rest[0]):
            type_info = found.group(2) or "string"
            kind = re.sub(r",?\s*optional", "", type_info, flags=re.IGNORECASE).strip()
            parameters[found.group(1)] = {
                "type": kind or "string",
                "description": found.group(3).strip(),
                "required": "optional" not in type_info.lower(),
            }
    return {
        "name": function.__name__,
        "description": parts[0].strip(),
        "parameters": parameters,
        "success_message": success,
    }


def _format_for_agent(info: dict[str, Any]) -> str:
    lines = []
    for name, spec in info.get("parameters", {}).items():
        needed = " (required)" if spec.get("required", True) else " (optional)"
        lines.append(
            f"  - {name}: {spec.get('type', 'string')}{needed} - {spec.get('description', '')}"
        )
    params = "\n".join(lines) if lines else "  (no parameters)"
    return f"Tool: {info['name']}\nDescription: {info['description']}\nParameters:\n{params}"


def _parse_balance(val: Any) -> float:
    if isinstance(val, int | float):
        return float(val)
    if isinstance(val, str):
        return float(val.replace("$", "").replace(",", ""))
    return 0.0


def _account_balance(account: dict[str, Any]) -> float:
    return _parse_balance(account.get("current_holdings", account.get("balance", 0)))


_SEQUENTIAL_PINS = (
    "0123", "1234", "2345", "3456", "4567", "5678", "6789",
    "9876", "8765", "7654", "6543", "5432", "4321", "3210",
)  # fmt: skip


def _pin_problem(pin: Any) -> str | None:
    if not pin or not pin.isdigit() or len(pin) != 4:
        return "PIN must be exactly 4 digits."
    if pin in _SEQUENTIAL_PINS:
        return "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."
    if len(set(pin)) == 1:
        return "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."
    return None


_ACTIVATION_TOOL = {
    "new_account": "activate_debit_card_8291",
    "first_card": "activate_debit_card_8291",
    "lost": "activate_debit_card_8292",
    "stolen": "activate_debit_card_8292",
    "fraud": "activate_debit_card_8292",
    "expired": "activate_debit_card_8293",
    "damaged": "activate_debit_card_8293",
    "upgrade": "activate_debit_card_8293",
    "bank_reissue": "activate_debit_card_8293",
}


def _activation_problem(
    args: dict[str, Any], db: DeskWorld, allowed: list[str], tool_name: str
) -> tuple[str | None, dict[str, Any] | None]:
    """τ²'s checks shared by the three activation tools: (error, card)."""
    card_id: Any = args.get("card_id")
    last_4: Any = args.get("last_4_digits")
    cvv: Any = args.get("cvv")
    pin: Any = args.get("pin")
    if not all([card_id, last_4, args.get("expiration_date"), cvv, pin]):
        return (
            "Error: Missing required parameters. Required: card_id, last_4_digits, "
            "expiration_date, cvv, pin.",
            None,
        )
    pin_error = _pin_problem(pin)
    if pin_error:
        return f"Error: {pin_error}", None
    if not cvv.isdigit() or len(cvv) != 3:
        return "Error: CVV must be exactly 3 digits.", None
    if not last_4.isdigit() or len(last_4) != 4:
        return "Error: Last 4 digits must be exactly 4 digits.", None
    cards = table_data(db, "debit_cards")
    if card_id not in cards:
        return f"Error: Debit card '{card_id}' not found.", None
    card = cards[card_id]
    reason = card.get("issue_reason", "new_account")
    if reason not in allowed:
        correct = _ACTIVATION_TOOL.get(reason, "unknown")
        return (
            f"Error: Wrong activation tool. This card has issue_reason='{reason}'. "
            f"Please use {correct} instead of {tool_name}.",
            None,
        )
    if card.get("status") == "ACTIVE":
        return f"Error: Debit card '{card_id}' is already active.", None
    if card.get("status") != "PENDING":
        return (
            f"Error: Debit card '{card_id}' cannot be activated. Current status: "
            f"{card.get('status')}. Only PENDING cards can be activated.",
            None,
        )
    if card.get("last_4_digits") != last_4:
        return "Error: Card verification failed. The last 4 digits do not match our records.", None
    account_id = card.get("account_id")
    accounts = table_data(db, "accounts")
    if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
        return (
            f"Error: The linked checking account '{account_id}' is no longer open. "
            "Card cannot be activated.",
            None,
        )
    return None, card


def _json_args(**arguments: Any) -> str:
    return json.dumps(arguments, indent=2)


class KnowledgeTools(Toolkit):
    """The desk's banking tools, listed and discoverable."""

    schema = TransactionalDB
    tables: ClassVar[frozenset[str] | None] = frozenset()
    """Every entry is a ``{"data", "notes"}`` table: each is a world value, copied whole
    by the episode that first reaches it."""

    def _t(self, name: str) -> dict[str, dict[str, Any]]:
        return table_data(self.db, name)

    def _query(self, name: str, field: str, value: Any) -> str:
        return query_database_tool(name, f'{{"{field}": "{value}"}}', db=self.db)

    # --- τ²'s toolkit state, kept in the episode's session ---------------------------------

    def set_read_log_allowlist(self, allowlist: Iterable[str] | None) -> None:
        set_read_log_allowlist(self.db, allowlist)

    def get_user_discoverable_tools_state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.db.session.setdefault(_GIVEN, {})
        return state

    def get_agent_discoverable_tools_state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.db.session.setdefault(_UNLOCKED, {})
        return state

    def get_discoverable_tools(self) -> dict[str, Any]:
        """The discoverable tools, bound to this toolkit (τ²'s bound methods)."""
        return {name: getattr(self, name) for name in _unlisted(type(self))}

    def has_discoverable_tool(self, tool_name: Any) -> bool:
        return tool_name in self.get_discoverable_tools()

    # --- listed tools -----------------------------------------------------------------------

    @tool(kind="generic")
    def transfer_to_human_agents(self, summary: str, reason: TransferReason = "other") -> str:
        """Hand the customer over to a human agent.

        The reason codes are described in the knowledge base; look the right one up first.

        Args:
            summary: What the customer needs and what was tried.
            reason: The reason code for the transfer.
        """
        valid = list(get_args(TransferReason))
        if reason not in valid:
            return f"Error: Invalid transfer reason '{reason}'. Must be one of: {', '.join(valid)}"
        return f"Transfer successful (reason: {reason}). A human agent will assist you shortly."

    @tool
    def get_current_time(self) -> str:
        """The current time, for verification records ("YYYY-MM-DD HH:MM:SS TZ")."""
        return "The current time is 2025-11-14 03:40:00 EST."

    @tool
    def get_user_information_by_id(self, user_id: str) -> str:
        """A customer's details (date of birth, email, phone, address) by user id.

        Args:
            user_id: The customer's user id.
        """
        return self._query("users", "user_id", user_id)

    @tool
    def get_user_information_by_name(self, customer_name: str) -> str:
        """A customer's details (date of birth, email, phone, address) by name; case sensitive.

        Args:
            customer_name: The customer's name.
        """
        return self._query("users", "name", customer_name)

    @tool
    def get_user_information_by_email(self, email: str) -> str:
        """A customer's details (date of birth, email, phone, address) by email.

        Args:
            email: The customer's email.
        """
        return self._query("users", "email", email)

    @tool(kind="write")
    def change_user_email(self, user_id: str, new_email: str) -> str:
        """Change a customer's email address.

        Args:
            user_id: The customer's user id.
            new_email: The new email address.
        """
        success, _ = update_record_in_db(
            "users", db=self.db, record_id=user_id, updates={"email": new_email}
        )
        if not success:
            return f"Error: User with ID '{user_id}' not found."
        return f"Email updated successfully.\n  - User ID: {user_id}\n  - New Email: {new_email}"

    @tool
    def get_referrals_by_user(self, user_id: str) -> str:
        """Every referral a customer made.

        Args:
            user_id: The referrer's user id.
        """
        return self._query("referrals", "referrer_id", user_id)

    @tool
    def get_credit_card_transactions_by_user(self, user_id: str) -> str:
        """Every credit card transaction of a customer.

        Args:
            user_id: The customer's user id.
        """
        return self._query("credit_card_transaction_history", "user_id", user_id)

    @tool
    def get_credit_card_accounts_by_user(self, user_id: str) -> str:
        """A customer's credit card accounts: card type, opening date, balance, rewards.

        Args:
            user_id: The customer's user id.
        """
        return self._query("credit_card_accounts", "user_id", user_id)

    @tool(kind="write")
    def log_verification(
        self,
        name: str,
        user_id: str,
        address: str,
        email: str,
        phone_number: str,
        date_of_birth: str,
        time_verified: str,
    ) -> str:
        """Record that a customer's identity was verified (2 of date of birth, email, phone,
        address confirmed), as an audit entry.

        Args:
            name: The customer's full name.
            user_id: The customer's user id.
            address: The customer's address.
            email: The customer's email.
            phone_number: The customer's phone number.
            date_of_birth: The customer's date of birth (MM/DD/YYYY).
            time_verified: When they were verified (e.g. "2025-11-14 03:40:00 EST").
        """
        record_id = ids.verification_id(user_id, time_verified)
        record = {
            "name": name,
            "user_id": user_id,
            "address": address,
            "email": email,
            "phone_number": phone_number,
            "date_of_birth": date_of_birth,
            "time_verified": time_verified,
        }
        if not add_to_db("verification_history", record_id, record, db=self.db):
            return "Failed to log verification: Record may already exist."
        return (
            f"Verification logged successfully.\n  - User: {name} (ID: {user_id})\n"
            f"  - Verified at: {time_verified}"
        )

    @tool(kind="generic", writes=True)
    def give_discoverable_user_tool(
        self, discoverable_tool_name: str, arguments: str = "{}"
    ) -> str:
        """Give the customer a tool the knowledge base says they should use themselves.

        The customer can then run it with ``call_discoverable_user_tool``.

        Args:
            discoverable_tool_name: The customer tool's name.
            arguments: The tool's arguments as a JSON object text.
        """
        if not hasattr(KnowledgeUserTools, discoverable_tool_name):
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        given = _unlisted(KnowledgeUserTools).get(discoverable_tool_name)
        if given is None:
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        try:
            args_dict = json.loads(arguments)
        except json.JSONDecodeError as e:
            return f"Error: Invalid JSON in arguments: {e}"
        parameters = inspect.signature(given.function).parameters
        for arg_name in args_dict:
            if arg_name not in parameters and arg_name != "self":
                return f"Error: Unexpected parameter: {arg_name}"
        info = _doc_info(given.function)
        self.get_user_discoverable_tools_state()[discoverable_tool_name] = {
            "arguments": args_dict,
            "given_at": ids.NOW.isoformat(),
            "tool_info": info,
        }
        record = {"tool_name": discoverable_tool_name, "status": "GIVEN"}
        add_to_db(
            "user_discoverable_tools", ids.user_tool_id(discoverable_tool_name), record, self.db
        )
        shown = json.dumps(args_dict, indent=2) if args_dict else "(no arguments)"
        return (
            f"Tool given to user: {discoverable_tool_name}\n"
            f"Description: {info['description']}\n"
            f"Arguments: {shown}\n\n"
            f"The user can now execute this action by calling `call_discoverable_user_tool` "
            f"with discoverable_tool_name='{discoverable_tool_name}' and the same arguments."
        )

    @tool(kind="generic", writes=True)
    def unlock_discoverable_agent_tool(self, agent_tool_name: str) -> str:
        """Unlock an internal tool the knowledge base names; then call it with
        ``call_discoverable_agent_tool``.

        Args:
            agent_tool_name: The tool's name (e.g. "calculate_apr_adjustment_7842").
        """
        if not self.has_discoverable_tool(agent_tool_name):
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        info = _doc_info(self.get_discoverable_tools()[agent_tool_name])
        self.get_agent_discoverable_tools_state()[agent_tool_name] = {
            "unlocked_at": ids.NOW.isoformat(),
            "tool_info": info,
        }
        return (
            f"Tool unlocked: {agent_tool_name}\n"
            f"Description: {info['description']}\n\n"
            f"{_format_for_agent(info)}\n\n"
            f"You can now use this tool by calling `call_discoverable_agent_tool` with "
            f"agent_tool_name='{agent_tool_name}' and the required arguments."
        )

    @tool(kind="write")
    def call_discoverable_agent_tool(self, agent_tool_name: str, arguments: str = "{}") -> str:
        """Call an internal tool unlocked before with ``unlock_discoverable_agent_tool``.

        Args:
            agent_tool_name: The tool's name.
            arguments: Its arguments as a JSON object text (e.g. '{"user_id": "abc123"}').
        """
        if not self.has_discoverable_tool(agent_tool_name):
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        if agent_tool_name not in self.get_agent_discoverable_tools_state():
            return (
                f"Error: Tool '{agent_tool_name}' has not been unlocked. "
                f"You must first use `unlock_discoverable_agent_tool` to unlock this tool "
                f"before calling it."
            )
        try:
            args_dict = json.loads(arguments, parse_int=float)  # τ²: every number a float
        except json.JSONDecodeError as e:
            return f"Error: Invalid JSON in arguments: {e}"
        method = self.get_discoverable_tools()[agent_tool_name]
        try:
            result = method(**args_dict)
        except TypeError as e:
            return f"Error: Invalid arguments: {str(e).replace(_OWN_MODULE, _TAU2_MODULE)}"
        underlying = _unlisted(type(self))[agent_tool_name]
        if underlying.writes or agent_tool_name in self.db.session.get(_ALLOWLIST, ()):
            record = {"tool_name": agent_tool_name, "status": "CALLED"}
            add_to_db(
                "agent_discoverable_tools", ids.agent_tool_id(agent_tool_name), record, self.db
            )
        return result

    @tool
    def list_discoverable_agent_tools(self) -> str:
        """The internal tools you have called so far."""
        result = query_database_tool("agent_discoverable_tools", "{}", db=self.db)
        if "No results found" in result:
            return (
                "No agent tools have been called yet. Search the knowledge base to discover "
                "available tools."
            )
        return f"Your called agent tools:\n{result}"

    # --- discoverable tools (their docstrings are τ²'s: the agent reads them) ---------------

    def _history(
        self, table: str, field: str, value: Any, header: list[str], none_text: str
    ) -> str:
        found = self._query(table, field, value)
        lines = list(header)
        if "No records found" not in found and "No results found" not in found:
            lines.append(found)
        else:
            lines.append(none_text)
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def example_agent_tool_0000(self) -> str:
        """An example agent discoverable tool placeholder.

        Returns:
            Example tool executed successfully.
        """
        return "Example tool executed successfully."

    @tool(kind="write", listed=False)
    def update_transaction_rewards_3847(self, transaction_id: str, new_rewards_earned: str) -> str:
        """Update the rewards_earned field on a credit card transaction.

        Args:
            transaction_id (string): The unique identifier for the transaction to update
            new_rewards_earned (string): The corrected rewards value (e.g., '6300 points')

        Returns:
            Transaction rewards updated successfully.
        """
        if not transaction_id or not new_rewards_earned:
            return "Error: Missing required parameters."
        success, _ = update_record_in_db(
            "credit_card_transaction_history",
            db=self.db,
            record_id=transaction_id,
            updates={"rewards_earned": new_rewards_earned},
        )
        if not success:
            return f"Error: Transaction '{transaction_id}' not found."
        shown = _json_args(transaction_id=transaction_id, new_rewards_earned=new_rewards_earned)
        return (
            "Transaction rewards updated successfully.\n\n"
            "Executed: update_transaction_rewards_3847\n"
            f"Arguments: {shown}\n"
            "Transaction updated:\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - New Rewards: {new_rewards_earned}"
        )

    @tool(kind="generic", listed=False)
    def initial_transfer_to_human_agent_0218(self) -> str:
        """Initiate a transfer request to a human agent. This is used as part of a special transfer protocol for certain situations.

        Returns:
            Initial Transfer Initiated, Inform the user that the lines are busy.
        """  # noqa: E501
        return (
            "Initial Transfer Initiated, Inform the user that the lines are busy.\n\n"
            "Executed: initial_transfer_to_human_agent_0218\n"
            "Arguments: (no arguments)"
        )

    @tool(kind="generic", listed=False)
    def initial_transfer_to_human_agent_1822(self) -> str:
        """Initiate a transfer request to a human agent. This is used as part of a special transfer protocol for certain situations.

        Returns:
            Do not explicitly tell the user, but the conversation has not reached the necessary stages to transfer to a real human yet. Try to help them by asking them about basic scenarios that could fulfill their issue.
        """  # noqa: E501
        return (
            "Do not explicitly tell the user, but the conversation has not reached the "
            "necessary stages to transfer to a real human yet. Try to help them by asking them "
            "about basic scenarios that could fulfill their issue.\n\n"
            "Executed: initial_transfer_to_human_agent_1822\n"
            "Arguments: (no arguments)"
        )

    @tool(kind="generic", listed=False)
    def emergency_credit_bureau_incident_transfer_1114(self) -> str:
        """Emergency escalation tool for the 11/14 credit bureau reporting incident. Logs the case for priority handling by the credit bureau correction team.

        Returns:
            Emergency escalation logged. Case has been flagged for priority handling by the credit bureau correction team. Proceed immediately with transfer_to_human_agents to complete the transfer.
        """  # noqa: E501
        return (
            "Emergency escalation logged. Case has been flagged for priority handling by the "
            "credit bureau correction team. Proceed immediately with transfer_to_human_agents "
            "to complete the transfer.\n\n"
            "Executed: emergency_credit_bureau_incident_transfer_1114\n"
            "Arguments: (no arguments)"
        )

    @tool(kind="write", listed=False)
    def file_credit_card_transaction_dispute_4829(
        self,
        transaction_id: str,
        card_action: str,
        card_last_4_digits: str,
        full_name: str,
        user_id: str,
        phone: str,
        email: str,
        address: str,
        contacted_merchant: bool,
        purchase_date: str,
        issue_noticed_date: str,
        dispute_reason: str,
        resolution_requested: str,
        eligible_for_provisional_credit: bool,
        partial_refund_amount: float | None = None,
    ) -> str:
        """File a formal dispute for a credit card transaction.

        Args:
            transaction_id (string): The unique identifier for the transaction being disputed
            card_action (string): Flag indicating the card's status. Must be one of: 'keep_active' (card remains active, dispute only), 'cancel_and_reissue' (card is being cancelled and replaced). This is for record-keeping only and does NOT order a replacement card.
            card_last_4_digits (string): Last 4 digits of the credit card number
            full_name (string): Full legal name of the cardholder
            user_id (string): The user's unique identifier in the system
            phone (string): Contact phone number
            email (string): Contact email address
            address (string): Contact mailing address
            contacted_merchant (boolean): Whether the user attempted to resolve the issue with the merchant first
            purchase_date (string): Date when the purchase was made, format MM/DD/YYYY
            issue_noticed_date (string): Date when the user noticed the issue, format MM/DD/YYYY
            dispute_reason (string): Reason for the dispute. Must be one of: 'unauthorized_fraudulent_charge', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'goods_services_not_as_described', 'canceled_subscription_still_charging', 'refund_never_processed'
            resolution_requested (string): Resolution being requested. Must be one of: 'full_refund', 'partial_refund'
            eligible_for_provisional_credit (boolean): Whether the user is eligible for provisional credit
            partial_refund_amount (number, optional): Amount requested for partial refund (required only if resolution_requested is 'partial_refund')

        Returns:
            Credit card transaction dispute filed successfully. A case has been opened and will be reviewed within 10 business days.
        """  # noqa: E501
        if not transaction_id or not user_id:
            return "Error: Missing required parameters."
        actions = ["keep_active", "cancel_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        reasons = [
            "unauthorized_fraudulent_charge",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "goods_services_not_as_described",
            "canceled_subscription_still_charging",
            "refund_never_processed",
        ]
        if dispute_reason not in reasons:
            return f"Error: Invalid dispute_reason. Must be one of: {reasons}"
        resolutions = ["full_refund", "partial_refund"]
        if resolution_requested not in resolutions:
            return f"Error: Invalid resolution_requested. Must be one of: {resolutions}"
        if resolution_requested == "partial_refund" and partial_refund_amount is None:
            return (
                "Error: partial_refund_amount is required when resolution_requested is "
                "'partial_refund'."
            )
        dispute_id = ids.dispute_id(user_id, transaction_id)
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "user_id": user_id,
            "card_action": card_action,
            "card_last_4_digits": card_last_4_digits,
            "full_name": full_name,
            "phone": phone,
            "email": email,
            "address": address,
            "contacted_merchant": contacted_merchant,
            "purchase_date": purchase_date,
            "issue_noticed_date": issue_noticed_date,
            "dispute_reason": dispute_reason,
            "resolution_requested": resolution_requested,
            "partial_refund_amount": partial_refund_amount,
            "eligible_for_provisional_credit": eligible_for_provisional_credit,
            "provisional_credit_given": eligible_for_provisional_credit,
            "submitted_at": ids.today_str(),
            "status": "SUBMITTED",
        }
        if not add_to_db("transaction_disputes", dispute_id, record, db=self.db):
            return "Error: Dispute may have already been filed for this transaction."
        lines = [
            "Credit card transaction dispute filed successfully. A case has been opened and "
            "will be reviewed within 10 business days.",
            "",
            "Executed: file_credit_card_transaction_dispute_4829",
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Reason: {dispute_reason.replace('_', ' ').title()}",
            f"Resolution Requested: {resolution_requested.replace('_', ' ').title()}",
        ]
        if partial_refund_amount:
            lines.append(f"Partial Refund Amount: ${partial_refund_amount:.2f}")
        if eligible_for_provisional_credit:
            lines.append(
                "Provisional Credit: ELIGIBLE - Credit will be applied within 2 business days."
            )
        else:
            lines.append("Provisional Credit: Not eligible at this time.")
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def file_debit_card_transaction_dispute_6281(
        self,
        transaction_id: str,
        account_id: str,
        card_id: str,
        user_id: str,
        dispute_category: str,
        transaction_date: str,
        discovery_date: str,
        disputed_amount: float,
        transaction_type: str,
        card_in_possession: bool,
        pin_compromised: str,
        contacted_merchant: bool,
        police_report_filed: bool,
        written_statement_provided: bool,
        provisional_credit_eligible: bool,
        customer_max_liability_amount: float,
        card_action: str,
    ) -> str:
        """File a formal dispute for a debit card transaction under Regulation E. Debit card disputes affect actual bank funds and have different liability rules based on reporting timing.

        Args:
            transaction_id (string): The unique identifier for the transaction being disputed
            account_id (string): The checking account ID linked to the debit card
            card_id (string): The debit card ID
            user_id (string): The user's unique identifier in the system
            dispute_category (string): Category of the dispute. Must be one of: 'unauthorized_transaction', 'atm_cash_discrepancy', 'atm_deposit_not_credited', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'recurring_charge_after_cancellation', 'card_present_fraud', 'card_not_present_fraud'
            transaction_date (string): Date when the transaction occurred, format MM/DD/YYYY
            discovery_date (string): Date when the user first noticed the issue, format MM/DD/YYYY
            disputed_amount (number): The dollar amount being disputed
            transaction_type (string): Type of transaction. Must be one of: 'pin_purchase', 'signature_purchase', 'online_purchase', 'atm_withdrawal', 'atm_deposit', 'recurring_payment', 'person_to_person'
            card_in_possession (boolean): Whether the customer still has their physical debit card in their possession
            pin_compromised (string): Whether the customer's PIN may have been compromised. Must be one of: 'yes_shared', 'yes_observed', 'no', 'unknown'
            contacted_merchant (boolean): Whether the user attempted to resolve the issue with the merchant first
            police_report_filed (boolean): Whether a police report has been filed (recommended for fraud over $500)
            written_statement_provided (boolean): Whether the customer has provided a written statement describing what happened (required for Reg E provisional credit)
            provisional_credit_eligible (boolean): Whether the user is eligible for provisional credit based on Debit Card Provisional Credit Guidelines
            customer_max_liability_amount (number): The maximum dollar amount the customer could be liable for based on Regulation E reporting timing rules and the disputed amount. Use -1 for unlimited liability.
            card_action (string): Action to take on the card. Must be one of: 'keep_active', 'freeze_pending_investigation', 'close_and_reissue'

        Returns:
            Debit card transaction dispute filed successfully. A case has been opened and provisional credit determination has been recorded.
        """  # noqa: E501
        required = [
            transaction_id, account_id, card_id, user_id, dispute_category, transaction_date,
            discovery_date, disputed_amount, transaction_type, pin_compromised, card_action,
        ]  # fmt: skip
        if not all(required):
            return "Error: Missing required parameters."
        if customer_max_liability_amount is None:
            return "Error: customer_max_liability_amount is required."
        if (
            card_in_possession is None
            or contacted_merchant is None
            or police_report_filed is None
            or written_statement_provided is None
        ):
            return (
                "Error: card_in_possession, contacted_merchant, police_report_filed, and "
                "written_statement_provided are required boolean fields."
            )
        categories = [
            "unauthorized_transaction",
            "atm_cash_discrepancy",
            "atm_deposit_not_credited",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "recurring_charge_after_cancellation",
            "card_present_fraud",
            "card_not_present_fraud",
        ]
        if dispute_category not in categories:
            return f"Error: Invalid dispute_category. Must be one of: {categories}"
        kinds = [
            "pin_purchase",
            "signature_purchase",
            "online_purchase",
            "atm_withdrawal",
            "atm_deposit",
            "recurring_payment",
            "person_to_person",
        ]
        if transaction_type not in kinds:
            return f"Error: Invalid transaction_type. Must be one of: {kinds}"
        pins = ["yes_shared", "yes_observed", "no", "unknown"]
        if pin_compromised not in pins:
            return f"Error: Invalid pin_compromised. Must be one of: {pins}"
        actions = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        if disputed_amount <= 0:
            return "Error: disputed_amount must be a positive number."
        dispute_id = ids.dispute_id(user_id, transaction_id)
        fraud = dispute_category in [
            "unauthorized_transaction",
            "card_present_fraud",
            "card_not_present_fraud",
        ]
        shared_pin = pin_compromised == "yes_shared"
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "account_id": account_id,
            "card_id": card_id,
            "user_id": user_id,
            "dispute_category": dispute_category,
            "transaction_date": transaction_date,
            "discovery_date": discovery_date,
            "disputed_amount": disputed_amount,
            "transaction_type": transaction_type,
            "card_in_possession": card_in_possession,
            "pin_compromised": pin_compromised,
            "contacted_merchant": contacted_merchant,
            "police_report_filed": police_report_filed,
            "written_statement_provided": written_statement_provided,
            "provisional_credit_eligible": provisional_credit_eligible,
            "provisional_credit_issued": provisional_credit_eligible,
            "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
            "customer_max_liability_amount": customer_max_liability_amount,
            "card_action": card_action,
            "is_fraud_category": fraud,
            "pin_shared_voluntarily": shared_pin,
            "submitted_at": ids.today_str(),
            "status": "OPEN",
        }
        if not add_to_db("debit_card_disputes", dispute_id, record, db=self.db):
            return "Error: Dispute may have already been filed for this transaction."
        lines = [
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Account: {account_id}",
            f"Category: {dispute_category.replace('_', ' ').title()}",
            f"Disputed Amount: ${disputed_amount:.2f}",
            f"Card Action: {card_action.replace('_', ' ').title()}",
        ]
        if provisional_credit_eligible:
            lines.append(
                f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 "
                "business days per Regulation E."
            )
        else:
            lines.append(
                "Provisional Credit: Not eligible - see Debit Card Provisional Credit "
                "Guidelines for details."
            )
        if shared_pin:
            lines.append(
                "WARNING: Customer indicated PIN was shared voluntarily. This may affect "
                "liability determination."
            )
        if fraud and not police_report_filed and disputed_amount > 500:
            lines.append(
                "RECOMMENDATION: For fraud disputes over $500, filing a police report is "
                "recommended."
            )
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def set_debit_card_recurring_block_7382(self, card_id: str, block_recurring: bool) -> str:
        """Block or unblock all recurring payments on a debit card. When blocked, all recurring/subscription charges will be declined. One-time purchases are not affected.

        Args:
            card_id (string): The debit card ID to update
            block_recurring (boolean): True to block all recurring payments, False to unblock/allow recurring payments

        Returns:
            Debit card recurring payment settings updated successfully.
        """  # noqa: E501
        if not card_id:
            return "Error: Missing required parameter: card_id"
        card = self._t("debit_cards").get(card_id)
        if not card:
            return f"Error: Debit card '{card_id}' not found."
        status = card.get("status", "").upper()
        if status != "ACTIVE":
            return (
                f"Error: Cannot update recurring block settings for a card with status "
                f"'{status}'. Card must be ACTIVE."
            )
        card["recurring_blocked"] = block_recurring
        if block_recurring:
            return (
                f"Recurring payments BLOCKED for debit card {card_id}.\n"
                "All recurring/subscription charges will be declined.\n"
                "One-time purchases are not affected.\n"
                "This change takes effect within 24 hours."
            )
        return (
            f"Recurring payments UNBLOCKED for debit card {card_id}.\n"
            "Recurring/subscription charges will now be allowed.\n"
            "This change takes effect within 24 hours."
        )

    @tool(listed=False)
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        """Retrieve a user's debit card dispute history from the debit_card_disputes table. Returns all debit card disputes filed by the user, including dispute IDs, categories, amounts, statuses, and provisional credit information.

        Args:
            user_id (string): The user's unique identifier in the system

        Returns:
            Debit card dispute history retrieved successfully.
        """  # noqa: E501
        if not user_id:
            return "Error: Missing required parameter: user_id"
        header = [
            "Debit card dispute history retrieved successfully.",
            "",
            "Executed: get_debit_dispute_status_7483",
            f"Debit card dispute history for user {user_id}:",
        ]
        return self._history(
            "debit_card_disputes", "user_id", user_id, header,
            "\nNo debit card disputes found for this user.",
        )  # fmt: skip

    @tool(kind="write", listed=False)
    def order_replacement_credit_card_7291(
        self,
        credit_card_account_id: str,
        user_id: str,
        shipping_address: str,
        reason: str,
        expedited_shipping: bool = False,
    ) -> str:
        """Order a replacement credit card for a customer. The old card will be automatically cancelled when the replacement is ordered.

        Args:
            credit_card_account_id (string): The credit card account ID for the card being replaced
            user_id (string): The user's unique identifier in the system
            shipping_address (string): Full shipping address where the new card should be sent
            reason (string): Reason for replacement. Must be one of: 'fraud_suspected', 'lost', 'stolen', 'damaged', 'expired', 'other'
            expedited_shipping (boolean, optional): Whether to use expedited shipping (2-3 business days instead of 7-10)

        Returns:
            Replacement credit card order placed successfully. The old card has been cancelled for security.
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
    def get_user_dispute_history_7291(self, user_id: str) -> str:
        """Retrieve a user's credit card transaction dispute history from the transaction_disputes table. Returns all credit card transaction disputes filed by the user, including dispute IDs, transaction IDs, dispute reasons, statuses, and submission dates.

        Args:
            user_id (string): The user's unique identifier in the system

        Returns:
            User transaction dispute history retrieved successfully.
        """  # noqa: E501
        if not user_id:
            return "Error: Missing required parameter: user_id"
        header = [
            "User transaction dispute history retrieved successfully.",
            "",
            "Executed: get_user_dispute_history_7291",
            f"Transaction dispute history for user {user_id}:",
        ]
        return self._history(
            "transaction_disputes", "user_id", user_id, header,
            "\nNo transaction disputes found for this user.",
        )  # fmt: skip

    @tool(listed=False)
    def get_pending_replacement_orders_5765(self, credit_card_account_id: str) -> str:
        """Check if a credit card account has any pending replacement card orders.

        Args:
            credit_card_account_id (string): The credit card account ID to check for pending replacement orders

        Returns:
            Pending replacement orders check completed.
        """  # noqa: E501
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
        """Log the reason why a customer wants to close their credit card account.

        Args:
            credit_card_account_id (string): The credit card account ID the customer wants to close
            user_id (string): The user's unique identifier in the system
            closure_reason (string): Reason for closure. Must be one of: 'annual_fee', 'not_using_card', 'found_better_card', 'unhappy_with_rewards', 'simplifying_finances', 'negative_experience', 'other'

        Returns:
            Closure reason logged successfully.
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
        """Retrieve the closure reason history for a specific credit card account.

        Args:
            credit_card_account_id (string): The credit card account ID to check for previous closure attempts

        Returns:
            Closure reason history retrieved successfully.
        """  # noqa: E501
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
        """Apply a statement credit to a customer's credit card account.

        Args:
            user_id (string): The user's unique identifier in the system
            credit_card_account_id (string): The credit card account ID to apply the credit to
            amount (number): The credit amount in dollars (e.g., 25.00 for a $25 credit)
            reason (string): Reason for the statement credit. Must be one of: 'goodwill_adjustment', 'promotional_credit', 'annual_fee_reversal', 'late_fee_reversal', 'interest_charge_reversal', 'dispute_resolution', 'price_match', 'retention_offer', 'error_correction', 'other'

        Returns:
            Statement credit applied successfully.
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


_CARD_TYPES = [
    "Bronze Rewards Card",
    "Business Bronze Rewards Card",
    "Business Gold Rewards Card",
    "Business Platinum Rewards Card",
    "Business Silver Rewards Card",
    "Crypto-Cash Back",
    "Diamond Elite Card",
    "EcoCard",
    "Gold Rewards Card",
    "Green Rewards Card",
    "Platinum Rewards Card",
    "Silver Rewards Card",
    "Silver Zoom Card",
]

_REWARDS: dict[str, dict[str, float]] = {
    "Bronze Rewards Card": {"default": 1.0},
    "Silver Rewards Card": {"Travel": 4.0, "Software": 4.0, "default": 1.0},
    "Gold Rewards Card": {"default": 2.5},
    "Platinum Rewards Card": {"default": 10.0},
    "Business Bronze Rewards Card": {"default": 1.0},
    "Business Silver Rewards Card": {"Travel": 10.0, "Software": 10.0, "default": 1.0},
    "Green Rewards Card": {"Sustainable": 3.0, "default": 1.0},
    "Business Gold Rewards Card": {"Operations": 2.5, "default": 1.0},
    "Business Platinum Rewards Card": {
        "Travel": 4.0,
        "Software": 4.0,
        "Media": 4.0,
        "default": 1.5,
    },
    "Silver Zoom Card": {"Transportation": 3.0, "default": 1.0},
    "Diamond Elite Card": {"default": 5.0},
    "EcoCard": {"Green": 5.0, "default": 1.0},
    "Crypto-Cash Back": {"default": 2.0},
}
"""Reward percentage by card and category (``default`` for any other category)."""


class KnowledgeUserTools(Toolkit):
    """The customer's banking tools, over the desk's database."""

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

    @tool(kind="write", listed=False)
    def submit_cash_back_dispute_0589(self, user_id: str, transaction_id: str) -> str:
        """Submit a cash back dispute for a specific transaction.

        Args:
            user_id (string): The user's unique identifier in the system
            transaction_id (string): The unique identifier for the transaction with incorrect cash back

        Returns:
            Cash back dispute submitted successfully. Your case has been queued for review.
        """  # noqa: E501
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

    @tool(kind="write", listed=False)
    def get_referral_link(self, user_id: str, card_name: str) -> str:
        """Generate a referral link for a specific credit card to share with friends or family.

        Args:
            user_id (string): The user's unique identifier in the system (the referrer)
            card_name (string): The name of the credit card to create a referral for (e.g., 'Gold Rewards Card')

        Returns:
            Referral link generated successfully. Share this link with the person you want to refer.
        """  # noqa: E501
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

    @tool(listed=False)
    def get_card_last_4_digits(self, credit_card_account_id: str) -> str:
        """Look up the last 4 digits of a credit card number.

        Args:
            credit_card_account_id (string): The credit card account ID to look up (e.g., 'cc_76ad9cc60e_gold')

        Returns:
            Card information retrieved successfully.
        """  # noqa: E501
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

    @tool(kind="write", listed=False)
    def deposit_check_3847(self, account_id: str, check_amount: float) -> str:
        """Deposit a check into a checking or savings account. The user takes a photo of the check and submits it through their mobile banking app.

        Args:
            account_id (string): The bank account ID to deposit the check into
            check_amount (number): The amount of the check in USD

        Returns:
            Check deposited successfully. Funds will be available according to your account's deposit policy.
        """  # noqa: E501
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

    @tool(kind="write")
    def apply_for_credit_card(
        self,
        card_type: str,
        customer_name: str,
        annual_income: float,
        rho_bank_subscription: bool = False,
    ) -> str:
        """Apply for a credit card.

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

    @tool(kind="write")
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

    @tool(kind="write")
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
            message = str(e).replace(_OWN_MODULE, _TAU2_MODULE)
            return f"Error: Invalid arguments for tool '{discoverable_tool_name}': {message}"
        return result

    @tool
    def list_discoverable_user_tools(self) -> str:
        """The tools the agent has given you."""
        found = query_database_tool("user_discoverable_tools", "{}", db=self.db)
        if "No results found" in found:
            return "No tools have been given to you yet by the agent."
        return f"Tools given to you by the agent:\n{found}"

    @tool(kind="write")
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

    @tool(kind="write")
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
