"""τ³ banking's desk toolkit (τ²'s ``banking_knowledge``): its listed tools, and its
discoverable ones mixed in from one module per kind (``disputes.py``,
``credit_cards.py``, ``credit_limits.py``, ``accounts.py``, ``debit_cards.py``,
``debit_card_controls.py``); the customer's are `KnowledgeUserTools` (``user_tools.py``).

Both sides act on one database. Besides its listed tools the desk has
*discoverable* ones, which the knowledge base names: the agent unlocks one
(``unlock_discoverable_agent_tool``, remembered in the episode's session, as τ²
remembers it on its toolkit, outside the database) and then calls it through
``call_discoverable_agent_tool``, which logs the call in the
``agent_discoverable_tools`` table when the tool changes state or the task's gold
actions call it (the task's read-log allowlist, `read_log_allowlist`). The
customer's discoverable tools are given by the agent (``give_discoverable_user_tool``,
logged in ``user_discoverable_tools``) and called through
``call_discoverable_user_tool``. What unlocking or giving a tool shows is τ²'s parse of
its docstring: τ²'s own, from the user's τ² source (`discovery`), else deedbench's.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import warnings
from collections.abc import Iterable
from typing import Any, Literal, get_args

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.accounts import BankAccountTools
from deedbench.benchmarks.tau2.banking.credit_cards import CreditCardTools
from deedbench.benchmarks.tau2.banking.credit_limits import CreditLimitTools
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
    query_database_tool,
    update_record_in_db,
)
from deedbench.benchmarks.tau2.banking.debit_card_controls import DebitCardControlTools
from deedbench.benchmarks.tau2.banking.debit_cards import DebitCardTools
from deedbench.benchmarks.tau2.banking.discovery import (
    _ALLOWLIST,
    _GIVEN,
    _UNLOCKED,
    _doc_info,
    _format_for_agent,
    _unlisted,
    set_read_log_allowlist,
)
from deedbench.benchmarks.tau2.banking.disputes import DisputeTools
from deedbench.benchmarks.tau2.banking.toolkit import BankingToolkit
from deedbench.benchmarks.tau2.banking.user_tools import KnowledgeUserTools as _UserTools
from deedbench.benchmarks.tau2.toolkit import named_as_own
from deedbench.engine import tool

__all__ = ["KnowledgeTools", "TransferReason"]

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

_MOVED = {
    "KnowledgeUserTools": "deedbench.benchmarks.tau2.banking.user_tools",
    "read_log_allowlist": "deedbench.benchmarks.tau2.banking.discovery",
    "set_read_log_allowlist": "deedbench.benchmarks.tau2.banking.discovery",
}


def __getattr__(name: str) -> Any:
    """Names this module held before it was split, still importable from here for a
    release, with a warning naming their home."""
    if name in _MOVED:
        warnings.warn(
            f"deedbench.benchmarks.tau2.banking.tools.{name} moved to {_MOVED[name]}.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_OWN_MODULES = re.compile(r"deedbench\.benchmarks\.tau2\.banking\.\w+\.")
_TAU2_MODULE = "tau2.domains.banking_knowledge.tools."


class KnowledgeTools(
    DisputeTools,
    CreditCardTools,
    CreditLimitTools,
    BankAccountTools,
    DebitCardTools,
    DebitCardControlTools,
):
    """The desk's banking tools: its listed ones here, its discoverable ones mixed in."""

    tau2_module = "tau2.domains.banking_knowledge.tools"

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

    @tool(kind="write", keys=("new_email",))
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

    @tool(kind="write", keys=("user_id",))
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

    @tool(kind="generic", writes=True, keys=("discoverable_tool_name",))
    def give_discoverable_user_tool(
        self, discoverable_tool_name: str, arguments: str = "{}"
    ) -> str:
        """Give the customer a tool the knowledge base says they should use themselves.

        The customer can then run it with ``call_discoverable_user_tool``.

        Args:
            discoverable_tool_name: The customer tool's name.
            arguments: The tool's arguments as a JSON object text.
        """
        if not hasattr(_UserTools, discoverable_tool_name):
            return f"Error: Unknown discoverable tool '{discoverable_tool_name}'."
        given = _unlisted(_UserTools).get(discoverable_tool_name)
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
        info = _doc_info(self.db, given.function)
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

    @tool(kind="generic", writes=True, keys=("agent_tool_name",))
    def unlock_discoverable_agent_tool(self, agent_tool_name: str) -> str:
        """Unlock an internal tool the knowledge base names; then call it with
        ``call_discoverable_agent_tool``.

        Args:
            agent_tool_name: The tool's name (e.g. "calculate_apr_adjustment_7842").
        """
        if not self.has_discoverable_tool(agent_tool_name):
            return f"Error: Unknown agent tool '{agent_tool_name}'. This tool is not available."
        info = _doc_info(self.db, self.get_discoverable_tools()[agent_tool_name])
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

    @tool(kind="write", keys=("agent_tool_name",))
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
            result: str = method(**args_dict)  # every discoverable tool answers in text
        except TypeError as e:
            return f"Error: Invalid arguments: {_OWN_MODULES.sub(_TAU2_MODULE, str(e))}"
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


named_as_own(
    KnowledgeTools,
    DisputeTools,
    CreditCardTools,
    CreditLimitTools,
    BankAccountTools,
    DebitCardTools,
    DebitCardControlTools,
    BankingToolkit,
)
