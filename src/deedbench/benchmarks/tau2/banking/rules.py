"""τ³ banking's rules and fixed data, shared by its tools: parsing balances and money,
PIN and card-activation checks, the ATM deposit images, early closure fees, default ATM
limits, delivery times, card types and their rewards (τ²'s facts, as its tools apply
them)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.benchmarks.tau2.banking.db_query import table_data

__all__: list[str] = []


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
