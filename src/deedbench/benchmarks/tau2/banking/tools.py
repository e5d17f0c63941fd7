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
from datetime import datetime
from typing import Any, ClassVar, Literal, get_args

from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
    query_database_tool,
    query_db,
    table_data,
    update_record_in_db,
)
from deedbench.benchmarks.tau2.banking.schema import TransactionalDB
from deedbench.benchmarks.tau2.shown import DOCS_KEY
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.engine import Tool, tool

__all__ = [
    "KnowledgeTools",
    "KnowledgeUserTools",
    "TransferReason",
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


def _doc_info(world: DeskWorld, function: Any) -> dict[str, Any]:
    """τ²'s ``parse_discoverable_tool_docstring``: description, parameters, success text,
    from the docstring in the user's τ² source (`DOCS_KEY`) or, without one, deedbench's."""
    docs: dict[str, str] = world.session.get(DOCS_KEY, {})
    doc = docs.get(function.__name__) or inspect.getdoc(function) or ""
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


_ATM_DEPOSIT_IMAGES: dict[str, tuple[str, str, str]] = {
    "btxn_834027370c20": (
        "ATM #3921",
        """
=== ATM DEPOSIT ENVELOPE SCAN ===
Envelope ID: ENV-2025-3921-00923
Deposit Time: 3:47 PM CST
ATM Location: Rho-Bank ATM #3921, Cedar Lane Branch, Austin, TX

--- ENVELOPE CONTENTS ---
Item 1: Personal Check
  - Check Number: 7284
  - Drawn On: First Texas Bank
  - Payee: Derek Yamamoto
  - Amount: $875.00
  - Memo: "October rent refund"
  - Signature: Present and legible
  - Date on Check: 11/03/2025

Item 2: Cash
  - Denomination breakdown:
    * 2 x $100 bills = $200.00
    * 3 x $20 bills = $60.00
  - Total Cash: $260.00

--- DEPOSIT SUMMARY ---
Check Total: $875.00
Cash Total: $260.00
GRAND TOTAL: $1,135.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $385.00
DISCREPANCY DETECTED: $750.00 difference

--- IMAGE QUALITY ---
Envelope scan: CLEAR
Check front: CLEAR
Check back (endorsement): CLEAR - endorsed "For Deposit Only - Derek Yamamoto"
Cash image: CLEAR - bills visible and countable
""",
        "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only "
        "$385.00. Discrepancy of $750.00 confirmed via image review.",
    ),
    "btxn_test_deposit_001": (
        "ATM #3921",
        """
=== ATM DEPOSIT ENVELOPE SCAN ===
Envelope ID: ENV-2025-3921-00847
Deposit Time: 2:34 PM EST
ATM Location: Rho-Bank ATM #3921, 742 Oak Avenue, Portland, OR

--- ENVELOPE CONTENTS ---
Item 1: Personal Check
  - Check Number: 4821
  - Drawn On: First National Bank
  - Payee: Linda Patterson
  - Amount: $875.00
  - Memo: "October rent refund"
  - Signature: Present and legible
  - Date on Check: 11/05/2025

Item 2: Cash
  - Denomination breakdown:
    * 2 x $100 bills = $200.00
    * 3 x $20 bills = $60.00
  - Total Cash: $260.00

--- DEPOSIT SUMMARY ---
Check Total: $875.00
Cash Total: $260.00
GRAND TOTAL: $1,135.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $385.00
DISCREPANCY DETECTED: $750.00 difference

--- IMAGE QUALITY ---
Envelope scan: CLEAR
Check front: CLEAR
Check back (endorsement): CLEAR - endorsed "For Deposit Only - Linda Patterson"
Cash image: CLEAR - bills visible and countable
""",
        "Images clearly show deposit contents totaling $1,135.00. ATM machine recorded only "
        "$385.00. Discrepancy of $750.00 confirmed via image review.",
    ),
    "btxn_test_atm_dep_partial": (
        "ATM #5847",
        """
=== ATM DEPOSIT ENVELOPE SCAN ===
Envelope ID: ENV-2025-5847-00293
Deposit Time: 10:15 AM EST

--- ENVELOPE CONTENTS ---
Item 1: Personal Check
  - Check Number: 7392
  - Amount: $500.00

--- DEPOSIT SUMMARY ---
Check Total: $500.00
Cash Total: $0.00
GRAND TOTAL: $500.00

--- MACHINE RECORD ---
Amount Recorded by ATM: $500.00
No discrepancy detected.
""",
        "Images confirm deposit matches recorded amount. No discrepancy found.",
    ),
}
"""τ²'s scanned ATM deposits: transaction id -> (ATM, envelope contents, verification notes)."""

_EARLY_CLOSURE: dict[str, dict[str, tuple[int, int]]] = {
    "checking": {
        "Light Blue Account": (15, 30),
        "Light Green Account": (15, 30),
        "Green Fee-Free Account": (15, 30),
        "Blue Account": (25, 60),
        "Green Account": (25, 60),
        "Evergreen Account": (50, 90),
        "Bluest Account": (100, 180),
    },
    "savings": {
        "Bronze Account": (20, 60),
        "Silver Account": (35, 90),
        "Silver Plus Account": (35, 90),
        "Gold Account": (75, 180),
        "Gold Plus Account": (75, 180),
        "Gold Years Account": (75, 180),
        "Platinum Account": (150, 270),
        "Platinum Plus Account": (150, 270),
        "Diamond Elite Account": (150, 270),
    },
}
"""Early closure fee and window (days) of a personal account, by class and level."""

_DEFAULT_ATM_LIMITS = {
    "blue account": 500,
    "green account": 600,
    "light blue account": 400,
    "green fee-free account": 500,
    "evergreen account": 750,
    "bluest account": 1500,
    "dark green account": 300,
    "gold years account": 600,
    "purple account": 1000,
}
"""A checking account's daily ATM limit by level, for a card without its own."""

_DELIVERY_TIMES = {
    "STANDARD": "7-10 business days",
    "EXPEDITED": "3-5 business days",
    "RUSH": "1-2 business days",
}


def _money(val: Any) -> float:
    """τ²'s parse of a ``"$1,234.56"`` field (0 when it does not parse)."""
    try:
        return float(str(val).replace("$", "").replace(",", ""))
    except (ValueError, TypeError):
        return 0.0


def _age_days(date_opened: Any, now: datetime) -> int:
    return (now - datetime.strptime(date_opened, "%m/%d/%Y")).days


class KnowledgeTools(Toolkit):
    """The desk's banking tools, listed and discoverable."""

    tau2_module = "tau2.domains.banking_knowledge.tools"

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

    @tool(listed=False)
    def get_atm_deposit_images_8473(self, transaction_id: str) -> str:
        """Retrieve ATM deposit envelope/check images for a specific ATM deposit transaction.

        Args:
            transaction_id (string): The transaction ID of the ATM deposit to retrieve images for

        Returns:
            ATM deposit images retrieved successfully.
        """
        if not transaction_id:
            return "Error: Missing required parameter: transaction_id"
        history = self._t("bank_account_transaction_history")
        if transaction_id not in history:
            return f"Error: Transaction '{transaction_id}' not found."
        txn = history[transaction_id]
        if txn.get("type") != "atm_deposit":
            return (
                f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only "
                "works for ATM deposit transactions."
            )
        description = txn.get("description", "")
        if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
            return (
                f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images "
                "are only available for Rho-Bank ATM deposits. For third-party ATM disputes, a "
                "chargeback request must be submitted to the ATM network."
            )
        header = (
            "ATM Deposit Image Retrieval Results\n"
            "=====================================\n"
            f"Transaction ID: {transaction_id}\n"
        )
        if transaction_id in _ATM_DEPOSIT_IMAGES:
            atm, contents, notes = _ATM_DEPOSIT_IMAGES[transaction_id]
            return (
                f"{header}ATM: {atm}\nDeposit Date: {txn.get('date', 'Unknown')}\n\n"
                f"{contents}\n\n--- VERIFICATION NOTES ---\n{notes}\n"
            )
        return (
            f"{header}ATM: {description}\n"
            f"Deposit Date: {txn.get('date', 'Unknown')}\n"
            f"Amount Recorded: ${abs(txn.get('amount', 0)):.2f}\n\n"
            "--- IMAGE STATUS ---\n"
            "Status: IMAGES NOT AVAILABLE\n"
            "Reason: Deposit images for this transaction have either expired (older than 90 "
            "days) or were not captured by the ATM system.\n\n"
            "For deposits without available images, the dispute will proceed based on customer "
            "statement and ATM journal records only. Investigation timeline may be extended.\n"
        )

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

    @tool(kind="write", listed=False)
    def apply_credit_card_account_flag_6147(
        self,
        credit_card_account_id: str,
        user_id: str,
        flag_type: str,
        expiration_date: str,
        reason: str,
    ) -> str:
        """Apply a flag to a customer's credit card account. Flags can include annual fee waivers, promotional APR rates, rewards bonuses, or other account-level modifiers. Each flag has an effective date and expiration date.

        Args:
            credit_card_account_id (string): The credit card account ID to apply the flag to
            user_id (string): The user's unique identifier in the system
            flag_type (string): Type of flag to apply. Must be one of: 'annual_fee_waived', 'promotional_apr', 'rewards_bonus', 'other'
            expiration_date (string): Date when the flag expires (MM/DD/YYYY format)
            reason (string): Reason for applying this flag. Must be one of: 'retention_offer', 'loyalty_benefit', 'promotional', 'error_correction', 'other'

        Returns:
            Account flag applied successfully.
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
        """Close a customer's credit card account permanently.

        Args:
            credit_card_account_id (string): The credit card account ID to close
            user_id (string): The user's unique identifier in the system

        Returns:
            Credit card account closed successfully.
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
        """Pay off a credit card balance using funds from the customer's Rho-Bank checking account. This deducts the specified amount from the checking account and reduces the credit card balance by the same amount.

        Args:
            user_id (string): The customer's unique identifier in the system
            checking_account_id (string): The ID of the Rho-Bank checking account to debit funds from
            credit_card_account_id (string): The ID of the credit card account to apply the payment to
            amount (number): The payment amount in dollars. Must be a positive number.

        Returns:
            Credit card payment processed successfully.
        """  # noqa: E501
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

    @tool(kind="write", listed=False)
    def submit_credit_limit_increase_request_7392(
        self, credit_card_account_id: str, user_id: str, requested_increase_amount: int
    ) -> str:
        """Submit a credit limit increase request for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID to request increase for
            user_id (string): The customer's unique identifier in the system
            requested_increase_amount (integer): The dollar amount by which to increase the credit limit (e.g., 2500 for $2,500)

        Returns:
            Credit limit increase request submitted successfully.
        """  # noqa: E501
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
        """Retrieve the credit limit increase request history for a specific credit card account. Returns all previous CLI requests including dates, amounts, and statuses.

        Args:
            credit_card_account_id (string): The credit card account ID to check for CLI history

        Returns:
            Credit limit increase history retrieved.
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
        """Retrieve payment history for a credit card account.

        Args:
            credit_card_account_id (string): The credit card account ID to check payment history for
            months (integer): Number of months of payment history to retrieve

        Returns:
            Payment history retrieved.
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
        """Approve and apply a credit limit increase for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID
            user_id (string): The customer's unique identifier in the system
            new_credit_limit (integer): The new total credit limit in dollars (e.g., 7500 for $7,500)

        Returns:
            Credit limit increase approved and applied successfully.
        """  # noqa: E501
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
        """Deny a credit limit increase request for a customer's credit card.

        Args:
            credit_card_account_id (string): The credit card account ID
            user_id (string): The customer's unique identifier in the system
            denial_reason (string): The reason for denying the request. Must be one of: 'insufficient_account_age', 'cooldown_period_active', 'pending_disputes', 'pending_replacement_card', 'past_due_balance', 'high_utilization', 'insufficient_payment_history', 'requested_amount_exceeds_limit', 'other'

        Returns:
            Credit limit increase request denied.
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

    @tool(kind="write", listed=False)
    def open_bank_account_4821(self, user_id: str, account_type: str, account_class: str) -> str:
        """Open a new bank account for a customer.

        Args:
            user_id (string): The customer's unique identifier in the system
            account_type (string): Type of account to open. Must be one of: 'checking' (personal checking), 'savings' (personal savings), 'business_checking', 'business_savings'
            account_class (string): The full official account class name

        Returns:
            Bank account opened successfully.
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
        """Close a customer's bank account (checking or savings).

        Args:
            account_id (string): The ID of the bank account to close
            reason (string, optional): The reason for closing the account
            waive_early_closure_fee (boolean, optional): Whether to waive early closure fees

        Returns:
            Bank account closed successfully.
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
        """Retrieve all accounts (checking, savings, credit cards) for a customer.

        Args:
            user_id (string): The customer's unique identifier in the system

        Returns:
            User accounts retrieved successfully.
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
        """Transfer funds from one bank account to another.

        Args:
            source_account_id (string): The account ID to transfer funds from
            destination_account_id (string): The account ID to transfer funds to
            amount (number): The amount to transfer in USD

        Returns:
            Funds transferred successfully.
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
        """Apply a credit to a customer's checking account.

        Args:
            account_id (string): The checking account ID to credit
            amount (number): The positive dollar amount to credit (must be greater than 0)
            credit_type (string): The type of credit: 'rebate_credit' for missing rebates, 'fee_refund' for incorrect fee charges

        Returns:
            Credit applied to checking account successfully.
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
        """Apply a credit to a customer's savings account for interest corrections, fee refunds, or goodwill adjustments.

        Args:
            account_id (string): The savings account ID to credit
            amount (number): The positive dollar amount to credit (must be greater than 0)
            credit_type (string): The type of credit: 'interest_correction' for APY/interest calculation errors, 'fee_refund' for incorrect fee charges, 'goodwill_credit' for customer service gestures

        Returns:
            Credit applied to savings account successfully.
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
        """Submit a report for interest calculation discrepancies to the backend team for investigation. Use this when the interest credited to a customer's account does not match expected APY calculations.

        Args:
            account_id (string): The savings account ID with the discrepancy
            user_id (string): The customer's unique identifier
            expected_apy (number): The APY percentage the customer should have received (e.g., 2.775 for 2.775%)
            actual_apy (number): The APY percentage that was actually applied (e.g., 2.5 for 2.5%)
            amount_difference (number): The dollar amount difference between expected and actual interest credited

        Returns:
            Interest discrepancy report submitted successfully. Backend team will investigate.
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
        """Retrieve the transaction history for a bank account.

        Transactions are returned in reverse chronological order (most recent
        first).

        Args:
            account_id (string): The bank account ID to retrieve transactions for

        Returns:
            Bank account transactions retrieved successfully.
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

    @tool(kind="write", listed=False)
    def order_debit_card_5739(
        self,
        account_id: str,
        user_id: str,
        delivery_option: str,
        delivery_fee: float,
        card_design: str,
        design_fee: float,
        shipping_address: str,
        excess_replacement_fee: float | None = None,
    ) -> str:
        """Order a new debit card for a customer's checking account.

        Args:
            account_id (string): The checking account ID to link the debit card to
            user_id (string): The customer's unique identifier
            delivery_option (string): Shipping speed: STANDARD, EXPEDITED, or RUSH
            delivery_fee (number): Fee to charge for delivery in dollars
            card_design (string): Card design: CLASSIC, PREMIUM, or CUSTOM
            design_fee (number): Fee to charge for card design in dollars
            shipping_address (string): Full shipping address for card delivery
            excess_replacement_fee (number, optional): Fee for exceeding replacement limit, if applicable

        Returns:
            Debit card order placed successfully.
        """  # noqa: E501
        excess: Any = excess_replacement_fee or 0
        delivery: Any = delivery_fee
        design: Any = design_fee
        try:
            delivery = float(delivery) if delivery is not None else None
        except (TypeError, ValueError):
            return "Error: delivery_fee must be a number."
        try:
            design = float(design) if design is not None else None
        except (TypeError, ValueError):
            return "Error: design_fee must be a number."
        try:
            excess = float(excess)
        except (TypeError, ValueError):
            excess = 0
        required = [
            account_id, user_id, delivery_option, delivery is not None, card_design,
            design is not None, shipping_address,
        ]  # fmt: skip
        if not all(required):
            return (
                "Error: Missing required parameters. Required: account_id, user_id, "
                "delivery_option, delivery_fee, card_design, design_fee, shipping_address."
            )
        deliveries = ["STANDARD", "EXPEDITED", "RUSH"]
        if delivery_option.upper() not in deliveries:
            return f"Error: Invalid delivery_option. Must be one of: {deliveries}"
        delivery_option = delivery_option.upper()
        designs = ["CLASSIC", "PREMIUM", "CUSTOM"]
        if card_design.upper() not in designs:
            return f"Error: Invalid card_design. Must be one of: {designs}"
        card_design = card_design.upper()
        accounts = self._t("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class") != "checking":
            return (
                "Error: Debit cards can only be ordered for checking accounts. Account "
                f"'{account_id}' is a {account.get('class')} account."
            )
        if account.get("status") != "OPEN":
            return (
                f"Error: Account must be OPEN. Account '{account_id}' has status: "
                f"{account.get('status')}"
            )
        if account.get("user_id") != user_id:
            return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
        try:
            holdings = float(str(account.get("current_holdings", "0")).replace(",", ""))
        except ValueError:
            holdings = 0.0
        if holdings < 25.0:
            return (
                "Error: Account must have a minimum balance of $25. Current balance: "
                f"${holdings:.2f}"
            )
        for order in self._t("debit_card_orders").values():
            if order.get("account_id") == account_id and order.get("status") == "PENDING":
                return (
                    f"Error: There is already a pending debit card order for account "
                    f"'{account_id}'."
                )
        cards = self._t("debit_cards")
        active = sum(
            1
            for card in cards.values()
            if card.get("account_id") == account_id and card.get("status") == "ACTIVE"
        )
        if active >= 1:
            return (
                f"Error: Account '{account_id}' already has an active debit card. Maximum 1 "
                "active card per checking account."
            )
        total_fee = delivery + design + excess
        if total_fee > 0 and holdings < total_fee:
            return (
                f"Error: Insufficient funds for fees. Total fees: ${total_fee:.2f}. Current "
                f"balance: ${holdings:.2f}"
            )
        expected_delivery = _DELIVERY_TIMES[delivery_option]
        order_date = ids.today_str()
        order_id = ids.debit_card_order_id(account_id, user_id, delivery_option)
        order_record = {
            "order_id": order_id,
            "account_id": account_id,
            "user_id": user_id,
            "delivery_option": delivery_option,
            "card_design": card_design,
            "shipping_address": shipping_address,
            "delivery_fee": delivery,
            "design_fee": design,
            "excess_replacement_fee": excess,
            "total_fee": total_fee,
            "order_date": order_date,
            "expected_delivery": expected_delivery,
            "status": "PENDING",
        }
        if not add_to_db("debit_card_orders", order_id, order_record, db=self.db):
            return "Error: Failed to create debit card order. Order may already exist."
        fees = []
        if total_fee > 0:
            accounts[account_id]["current_holdings"] = f"{holdings - total_fee:.2f}"
            parts = []
            if delivery > 0:
                parts.append(f"Delivery ${delivery}")
            if design > 0:
                parts.append(f"Design ${design}")
            if excess > 0:
                parts.append(f"Excess Replacement ${excess:.0f}")
            fee_id = f"btxn_dcfee_{order_id[-8:]}"
            fee_record = {
                "transaction_id": fee_id,
                "account_id": account_id,
                "date": order_date,
                "description": f"DEBIT CARD ORDER FEE - {', '.join(parts)}",
                "amount": -total_fee,
                "type": "debit_card_fee",
                "status": "posted",
            }
            add_to_db("bank_account_transaction_history", fee_id, fee_record, db=self.db)
            if delivery > 0:
                fees.append(f"Delivery: ${delivery}")
            if design > 0:
                fees.append(f"Design: ${design}")
            if excess > 0:
                fees.append(f"Excess Replacement: ${excess:.0f}")
        card_id = ids.debit_card_id(account_id, user_id, order_date)
        last_4_hash = ids.deterministic_id(f"card_details:{card_id}:last4", 8)
        cvv_hash = ids.deterministic_id(f"card_details:{card_id}:cvv", 6)
        cardholder = "CARDHOLDER"
        users = self._t("users")
        if user_id in users:
            cardholder = users[user_id].get("name", "CARDHOLDER").upper()
        month, _, year = order_date.split("/")
        if month in ["01", "03", "05", "07", "08", "10", "12"]:
            last_day = "31"
        elif month == "02":
            last_day = "28"
        else:
            last_day = "30"
        # The new card is not filed yet: these are the account's earlier ones.
        earlier = [card for card in cards.values() if card.get("account_id") == account_id]
        closed = next((card for card in earlier if card.get("status") == "CLOSED"), None)
        if closed:
            closure = closed.get("closure_reason", "first_card")
            if closure in ["lost", "stolen", "fraud", "fraud_suspected"]:
                issue_reason = closure if closure != "fraud_suspected" else "fraud"
            else:
                issue_reason = "first_card"
        elif earlier:
            issue_reason = "first_card"
        else:
            issue_reason = "new_account"
        card_record = {
            "card_id": card_id,
            "account_id": account_id,
            "user_id": user_id,
            "cardholder_name": cardholder,
            "last_4_digits": "".join(c for c in last_4_hash if c.isdigit())[:4].zfill(4),
            "cvv": "".join(c for c in cvv_hash if c.isdigit())[:3].zfill(3),
            "status": "PENDING",
            "issue_date": order_date,
            "expiration_date": f"{month}/{last_day}/{int(year) + 4}",
            "card_design": card_design,
            "issue_reason": issue_reason,
        }
        add_to_db("debit_cards", card_id, card_record, db=self.db)
        lines = [
            "Debit Card Order Confirmed",
            f"Order ID: {order_id}",
            f"Card ID: {card_id}",
            f"Linked Account: {account_id}",
            f"Delivery Option: {delivery_option}",
            f"Card Design: {card_design}",
            f"Shipping Address: {shipping_address}",
            f"Expected Delivery: {expected_delivery}",
            "",
            "Note: Card will arrive with status PENDING. Customer must call to activate after "
            "receiving the card.",
        ]
        if total_fee > 0:
            lines.append(
                f"Total Fees: ${total_fee:.2f} ({', '.join(fees)}) - CHARGED to account "
                f"{account_id}"
            )
            lines.append(f"New Account Balance: ${holdings - total_fee:.2f}")
        else:
            lines.append("Total Fees: $0 (No additional charges)")
        return "\n".join(lines)

    def _activate(self, args: dict[str, Any], allowed: list[str], tool_name: str) -> Any:
        """τ²'s activation checks, then the card made ACTIVE: (error, card, others), where
        `others` are the ids of the account's other ACTIVE cards, for the caller to retire."""
        error, card = _activation_problem(args, self.db, allowed, tool_name)
        if error or card is None:
            return error, None, []
        card["status"] = "ACTIVE"
        card["activated_date"] = ids.today_str()
        others = [
            (other_id, other)
            for other_id, other in self._t("debit_cards").items()
            if other_id != args["card_id"]
            and other.get("account_id") == card.get("account_id")
            and other.get("status") == "ACTIVE"
        ]
        return None, card, others

    @tool(kind="write", listed=False)
    def activate_debit_card_8291(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a NEW debit card for a customer. Use ONLY for first-time cards on a checking account (issue_reason = 'new_account' or 'first_card'). For replacement or reissued cards, use the appropriate variant.

        Args:
            card_id (string): The debit card ID to activate
            last_4_digits (string): Last 4 digits of the card number (for verification)
            expiration_date (string): Card expiration date in MM/YY format
            cvv (string): 3-digit CVV from the back of the card
            pin (string): 4-digit PIN chosen by the customer

        Returns:
            New debit card activated successfully.
        """  # noqa: E501
        args = {
            "card_id": card_id,
            "last_4_digits": last_4_digits,
            "expiration_date": expiration_date,
            "cvv": cvv,
            "pin": pin,
        }
        error, _, others = self._activate(
            args, ["new_account", "first_card"], "activate_debit_card_8291"
        )
        if error:
            return str(error)
        for _, other in others:
            other["status"] = "DEACTIVATED"
            other["deactivated_date"] = ids.today_str()
            other["deactivation_reason"] = "New card activated"
        lines = [
            "New Debit Card Activation Successful",
            f"Card ID: {card_id}",
            "Status: ACTIVE",
            f"Activation Date: {ids.today_str()}",
            "",
            "Your card is now ready to use at any ATM or point of sale terminal.",
            "For security, please sign the back of your card.",
        ]
        if others:
            retired = ", ".join(other_id for other_id, _ in others)
            lines.append(f"\nNote: Previous card(s) have been deactivated: {retired}")
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def activate_debit_card_8292(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a REPLACEMENT debit card. Use ONLY for cards replacing lost, stolen, or fraud-suspected cards (issue_reason = 'lost', 'stolen', or 'fraud'). For new or reissued cards, use the appropriate variant.

        Args:
            card_id (string): The debit card ID to activate
            last_4_digits (string): Last 4 digits of the card number (for verification)
            expiration_date (string): Card expiration date in MM/YY format
            cvv (string): 3-digit CVV from the back of the card
            pin (string): 4-digit PIN chosen by the customer

        Returns:
            Replacement debit card activated successfully.
        """  # noqa: E501
        args = {
            "card_id": card_id,
            "last_4_digits": last_4_digits,
            "expiration_date": expiration_date,
            "cvv": cvv,
            "pin": pin,
        }
        error, card, others = self._activate(
            args, ["lost", "stolen", "fraud"], "activate_debit_card_8292"
        )
        if error:
            return str(error)
        issue_reason = card.get("issue_reason", "lost")
        for _, other in others:
            other["status"] = "DEACTIVATED"
            other["deactivated_date"] = ids.today_str()
            other["deactivation_reason"] = f"Replacement card activated ({issue_reason})"
        lines = [
            "Replacement Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Replacement Reason: {issue_reason.replace('_', ' ').title()}",
            "Status: ACTIVE",
            f"Activation Date: {ids.today_str()}",
            "",
            "Your replacement card is now ready to use.",
            "",
            "IMPORTANT SECURITY REMINDERS:",
            "- Please review your recent transactions for any unauthorized charges",
            "- Report any suspicious activity immediately",
        ]
        if issue_reason == "fraud":
            lines.append(
                "- Since fraud was suspected, we recommend changing your online banking password"
            )
        if others:
            retired = ", ".join(other_id for other_id, _ in others)
            lines.append(f"\nPrevious card(s) have been deactivated for security: {retired}")
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def activate_debit_card_8293(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a REISSUED debit card. Use ONLY for cards reissued due to expiration, damage, design upgrade, or bank-initiated replacement (issue_reason = 'expired', 'damaged', 'upgrade', or 'bank_reissue'). For new or replacement cards, use the appropriate variant.

        Args:
            card_id (string): The debit card ID to activate
            last_4_digits (string): Last 4 digits of the card number (for verification)
            expiration_date (string): Card expiration date in MM/YY format
            cvv (string): 3-digit CVV from the back of the card
            pin (string): 4-digit PIN chosen by the customer

        Returns:
            Reissued debit card activated successfully.
        """  # noqa: E501
        args = {
            "card_id": card_id,
            "last_4_digits": last_4_digits,
            "expiration_date": expiration_date,
            "cvv": cvv,
            "pin": pin,
        }
        error, card, others = self._activate(
            args, ["expired", "damaged", "upgrade", "bank_reissue"], "activate_debit_card_8293"
        )
        if error:
            return str(error)
        issue_reason = card.get("issue_reason", "expired")
        for _, other in others:
            other["status"] = "GRACE_PERIOD"
            other["grace_period_ends"] = ids.today_str()
            other["deactivation_reason"] = f"Reissued card activated ({issue_reason})"
        lines = [
            "Reissued Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Reissue Reason: {issue_reason.replace('_', ' ').title()}",
            "Status: ACTIVE",
            f"Activation Date: {ids.today_str()}",
            "",
            "Your reissued card is now ready to use.",
        ]
        if others:
            kept = ", ".join(other_id for other_id, _ in others)
            lines.append(
                f"\nNote: Your previous card(s) ({kept}) will remain active for 24 hours as a "
                "grace period."
            )
            lines.append("After 24 hours, the old card(s) will be automatically deactivated.")
        if issue_reason in ["expired", "bank_reissue"]:
            lines.append(
                "\nReminder: If your card number changed, please update any recurring payments "
                "with your new card details."
            )
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        """Close or cancel a debit card permanently.

        Args:
            card_id (string): The debit card ID to close
            reason (string): Reason for closing: lost, stolen, fraud_suspected, damaged, no_longer_needed, or account_closing

        Returns:
            Debit card closed successfully.
        """  # noqa: E501
        if not card_id or not reason:
            return "Error: Missing required parameters. Required: card_id, reason."
        reasons = [
            "lost",
            "stolen",
            "fraud_suspected",
            "damaged",
            "no_longer_needed",
            "account_closing",
        ]
        if reason.lower() not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        reason = reason.lower()
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") not in ["ACTIVE", "PENDING"]:
            return (
                f"Error: Debit card '{card_id}' cannot be closed. Current status: "
                f"{card.get('status')}. Only ACTIVE or PENDING cards can be closed."
            )
        previous = card.get("status")
        card["status"] = "CLOSED"
        card["closed_date"] = ids.today_str()
        card["closure_reason"] = reason
        lines = [
            "Debit Card Closed Successfully",
            f"Card ID: {card_id}",
            f"Previous Status: {previous}",
            "New Status: CLOSED",
            f"Closure Reason: {reason.replace('_', ' ').title()}",
            f"Closure Date: {ids.today_str()}",
            "",
        ]
        if reason in ["lost", "stolen", "fraud_suspected"]:
            lines.append("IMPORTANT: This card has been immediately deactivated for security.")
            lines.append("Any pending transactions may still be processed.")
            if reason == "fraud_suspected":
                lines.append(
                    "Please advise the customer to review recent transactions and file disputes "
                    "for any unauthorized charges."
                )
                lines.append("Also recommend changing their online banking password.")
        lines.append("")
        lines.append(
            "Note: This card cannot be reactivated. If the customer needs a new card, they can "
            "order one through the standard ordering process."
        )
        lines.append(
            "Any recurring payments linked to this card will need to be updated with new "
            "payment information."
        )
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def freeze_debit_card_3892(self, card_id: str) -> str:
        """Temporarily freeze a debit card. The card can be unfrozen later.

        Args:
            card_id (string): The debit card ID to freeze

        Returns:
            Debit card frozen successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") == "FROZEN":
            return f"Error: Debit card '{card_id}' is already frozen."
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' cannot be frozen. Current status: "
                f"{card.get('status')}. Only ACTIVE cards can be frozen."
            )
        card["status"] = "FROZEN"
        card["frozen_date"] = ids.today_str()
        return "\n".join(
            [
                "Debit Card Frozen Successfully",
                f"Card ID: {card_id}",
                "Status: FROZEN",
                f"Frozen Date: {ids.today_str()}",
                "",
                "While frozen:",
                "- All new purchase transactions will be declined",
                "- Recurring payments and subscriptions will be declined",
                "- Pending transactions already authorized may still process",
                "",
                "To unfreeze, the customer can call customer service or use the mobile app.",
                "If the card is confirmed lost or stolen, recommend closing the card permanently "
                "instead.",
            ]
        )

    @tool(kind="write", listed=False)
    def unfreeze_debit_card_3893(self, card_id: str) -> str:
        """Unfreeze a previously frozen debit card.

        Args:
            card_id (string): The debit card ID to unfreeze

        Returns:
            Debit card unfrozen successfully.
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "FROZEN":
            return (
                f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: "
                f"{card.get('status')}. Only FROZEN cards can be unfrozen."
            )
        account_id = card.get("account_id")
        accounts = self._t("accounts")
        if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
            return (
                f"Error: The linked checking account '{account_id}' is no longer open. Card "
                "cannot be unfrozen."
            )
        card["status"] = "ACTIVE"
        card["unfrozen_date"] = ids.today_str()
        return "\n".join(
            [
                "Debit Card Unfrozen Successfully",
                f"Card ID: {card_id}",
                "Status: ACTIVE",
                f"Unfrozen Date: {ids.today_str()}",
                "",
                "The card is now active and ready to use immediately.",
                "All transactions will process normally.",
            ]
        )

    @tool(kind="write", listed=False)
    def clear_debit_card_fraud_alert_4892(self, card_id: str, reason: str) -> str:
        """Clear a fraud alert or velocity block on a debit card.

        Args:
            card_id (string): The debit card ID to clear the alert/block for
            reason (string): Reason for clearing: 'customer_verified' (for fraud alerts after customer verification) or 'velocity_clear' (for velocity blocks after identity verification)

        Returns:
            Fraud alert/velocity block cleared successfully.
        """  # noqa: E501
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not reason:
            return "Error: Missing required parameter: reason."
        reasons = ["customer_verified", "velocity_clear"]
        if reason not in reasons:
            return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(reasons)}"
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if reason == "velocity_clear":
            if not card.get("velocity_blocked", False):
                return f"Error: Debit card '{card_id}' does not have an active velocity block."
            card["velocity_blocked"] = False
            card["velocity_cleared_date"] = ids.today_str()
            return "\n".join(
                [
                    "Velocity Block Cleared Successfully",
                    f"Card ID: {card_id}",
                    f"Cleared Date: {ids.today_str()}",
                    "",
                    "The card is now unblocked and ready for normal use.",
                    "The velocity monitoring will continue - if the same unusual patterns recur,",
                    "the card may be blocked again automatically.",
                ]
            )
        if not card.get("fraud_alert_active", False):
            return f"Error: Debit card '{card_id}' does not have an active fraud alert."
        if card.get("alert_source") == "bank_initiated":
            return (
                "Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud "
                "detection system and cannot be cleared by customer service agents. Please "
                "transfer the customer to the security team using transfer_to_human_agents."
            )
        card["fraud_alert_active"] = False
        card["alert_source"] = None
        card["fraud_alert_cleared_date"] = ids.today_str()
        return "\n".join(
            [
                "Fraud Alert Cleared Successfully",
                f"Card ID: {card_id}",
                f"Cleared Date: {ids.today_str()}",
                "",
                "The fraud alert has been removed from the card.",
                "All transactions will process normally.",
                "",
                "Remind the customer to review recent transactions and report any unauthorized "
                "charges.",
            ]
        )

    @tool(kind="write", listed=False)
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        """Reset a debit card PIN when the customer has forgotten it.

        Args:
            card_id (string): The debit card ID to reset PIN for
            last_4_digits (string): Last 4 digits of the card number (for verification)
            new_pin (string): The new 4-digit PIN chosen by the customer

        Returns:
            Debit card PIN reset successfully.
        """
        if not all([card_id, last_4_digits, new_pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits."
        pin_error = _pin_problem(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Cannot reset PIN. Card status is {card.get('status')}. Only ACTIVE "
                "cards can have their PIN reset."
            )
        card["pin_last_changed"] = ids.today_str()
        card["pin_locked"] = False
        card["pin_attempts_remaining"] = 3
        return "\n".join(
            [
                "Debit Card PIN Reset Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {ids.today_str()}",
                "",
                "The new PIN is effective immediately.",
                "Your card has been unlocked and is ready to use.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @tool(kind="write", listed=False)
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        """Change a debit card PIN when the customer knows their current PIN.

        Args:
            card_id (string): The debit card ID to change PIN for
            current_pin (string): The customer's current 4-digit PIN
            new_pin (string): The new 4-digit PIN chosen by the customer

        Returns:
            Debit card PIN changed successfully.
        """
        if not all([card_id, current_pin, new_pin]):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not current_pin.isdigit() or len(current_pin) != 4:
            return "Error: Current PIN must be exactly 4 digits."
        pin_error = _pin_problem(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        if current_pin == new_pin:
            return "Error: New PIN must be different from current PIN."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Cannot change PIN. Card status is {card.get('status')}. Only ACTIVE "
                "cards can have their PIN changed."
            )
        card["pin_last_changed"] = ids.today_str()
        return "\n".join(
            [
                "Debit Card PIN Changed Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {ids.today_str()}",
                "",
                "The new PIN is effective immediately.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @tool(listed=False)
    def get_debit_cards_by_account_id_7823(self, account_id: str) -> str:
        """Retrieve all debit cards associated with a checking account. Returns card details including status, issue reason, and expiration date.

        Args:
            account_id (string): The checking account ID to retrieve debit cards for

        Returns:
            Debit cards retrieved successfully.
        """  # noqa: E501
        if not account_id:
            return "Error: Missing required parameter 'account_id'."
        accounts = self._t("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        if accounts[account_id].get("class", "").lower() not in ["checking", "business_checking"]:
            return (
                f"Error: Account '{account_id}' is not a checking account. Debit cards are only "
                "available for checking accounts."
            )
        found = []
        for card_id, card in self._t("debit_cards").items():
            if card.get("account_id") != account_id:
                continue
            info: dict[str, Any] = {"card_id": card_id}
            info.update(card)
            # τ²'s field names for the agent
            if "last_4_digits" in info and "card_number_last_4" not in info:
                info["card_number_last_4"] = info.pop("last_4_digits")
            if "issue_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("issue_date")
            elif "created_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("created_date")
            found.append(info)
        if not found:
            return f"No debit cards found for account '{account_id}'."
        found.sort(key=lambda x: x.get("date_issued") or "", reverse=True)
        return json.dumps(found, indent=2)

    @tool(kind="write", listed=False)
    def request_temporary_debit_card_limit_increase_8374(
        self, card_id: str, limit_type: str, new_limit: int
    ) -> str:
        """Request a temporary 24-hour increase to a debit card's daily ATM or purchase limit.

        Args:
            card_id (string): The debit card ID to increase limits for
            limit_type (string): Type of limit to increase: 'atm' for daily ATM withdrawal limit, 'purchase' for daily purchase limit
            new_limit (integer): The requested new temporary limit amount in dollars

        Returns:
            Temporary limit increase granted successfully.
        """  # noqa: E501
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not limit_type:
            return "Error: Missing required parameter: limit_type."
        if limit_type not in ["atm", "purchase"]:
            return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
        if new_limit is None:
            return "Error: Missing required parameter: new_limit."
        try:
            asked = float(new_limit)
        except (ValueError, TypeError):
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        if not asked.is_integer():
            return f"Error: new_limit must be an integer, got '{asked}'."
        limit = int(asked)
        if limit <= 0:
            return "Error: new_limit must be a positive amount."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' is not active. Current status: "
                f"{card.get('status')}. Only ACTIVE cards can have limit increases."
            )
        account_id = card.get("account_id")
        accounts = self._t("accounts")
        if not account_id or account_id not in accounts:
            return f"Error: Could not find linked account for debit card '{card_id}'."
        account = accounts[account_id]
        if account.get("status") != "OPEN":
            return (
                f"Error: The linked account '{account_id}' is not in good standing. Account "
                f"status: {account.get('status')}."
            )
        date_opened = account.get("date_opened")
        if date_opened:
            try:
                age = _age_days(date_opened, datetime.strptime(ids.today_str(), "%m/%d/%Y"))
                if age < 60:
                    return (
                        "Error: Account must be at least 60 days old for a temporary limit "
                        f"increase. Account age: {age} days."
                    )
            except ValueError:
                pass
        current: Any
        if limit_type == "atm":
            current = card.get("daily_atm_limit")
            field = "daily_atm_limit"
            name = "Daily ATM Withdrawal Limit"
            if current is None:
                level = account.get("level", "").lower()
                if "light green" in level:
                    return (
                        "Error: Light Green Account (teen checking) cards have policy-based "
                        "limits that cannot be modified. The daily ATM withdrawal limit of $150 "
                        "is fixed by account policy for safety reasons. The customer may request "
                        "the parent/guardian to withdraw cash from their own account if needed."
                    )
                current = _DEFAULT_ATM_LIMITS.get(level)
                if current is None:
                    return (
                        "Error: Could not determine the default ATM limit for account type "
                        f"'{account.get('level')}'. Please verify the account type."
                    )
        else:
            current = card.get("daily_purchase_limit")
            field = "daily_purchase_limit"
            name = "Daily Purchase Limit"
        if current is None:
            return (
                f"Error: The card does not have a {name.lower()} configured. This may be a "
                "restricted account type where limits are set by account policy and cannot be "
                "modified."
            )
        max_allowed = int(current * 1.5)
        if limit > max_allowed:
            return (
                f"Error: Requested limit ${limit} exceeds the maximum allowed temporary "
                f"increase. Maximum temporary limit is ${max_allowed} (150% of current "
                f"${current} limit)."
            )
        if limit <= current:
            return (
                f"Error: Requested limit ${limit} is not higher than the current limit of "
                f"${current}."
            )
        card[field] = limit
        card[f"temporary_{limit_type}_limit_increase"] = True
        card[f"original_{limit_type}_limit"] = current
        card[f"temporary_{limit_type}_limit_expires"] = ids.today_str()
        return "\n".join(
            [
                f"Temporary {name} Increase Granted Successfully",
                f"Card ID: {card_id}",
                f"Previous Limit: ${current}",
                f"New Temporary Limit: ${limit}",
                f"Increase Amount: ${limit - current}",
                "",
                "Important Information:",
                "- This temporary increase expires in 24 hours",
                f"- After expiration, the limit will revert to ${current}",
                "- Only one temporary increase is allowed per 24-hour period",
                "",
                "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have "
                "its own",
                "per-transaction or daily limits that Rho-Bank cannot override. The customer may "
                "need to",
                "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.",
            ]
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

    @tool(kind="write", listed=False, side="user")
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

    @tool(listed=False, side="user")
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

    @tool(kind="write", listed=False, side="user")
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

    @tool(kind="write", side="user")
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
            message = str(e).replace(_OWN_MODULE, _TAU2_MODULE)
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
