"""τ²'s banking ids and clock (``utils.py``): ids are sha256 prefixes of a seed that
names what the record is about, so that the same action always makes the same id
(and the same database hash); the day is fixed at 11/14/2025."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from typing import Any

__all__ = [
    "NOW",
    "TODAY",
    "account_flag_id",
    "agent_tool_id",
    "application_id",
    "bank_transaction_id",
    "cli_request_id",
    "closure_reason_id",
    "credit_card_order_id",
    "debit_card_id",
    "debit_card_order_id",
    "deterministic_id",
    "dispute_id",
    "referral_id",
    "referral_link_id",
    "today_str",
    "transaction_id",
    "user_tool_call_id",
    "user_tool_id",
    "verification_id",
]

TODAY = date(2025, 11, 14)
NOW = datetime(2025, 11, 14, 3, 40, 0)


def today_str() -> str:
    return TODAY.strftime("%m/%d/%Y")


def deterministic_id(seed: str, length: int = 16) -> str:
    """The first `length` hex digits of the seed's sha256."""
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


def transaction_id(user_id: Any, card_type: Any, merchant: Any, amount: Any, category: Any) -> str:
    seed = ":".join(["transaction", user_id, card_type, merchant, f"{amount:.2f}", category])
    return f"txn_{deterministic_id(seed, 12)}"


def referral_id(referrer_id: Any, account_type: Any) -> str:
    return deterministic_id(":".join(["referral", referrer_id, account_type]), 16)


def application_id(card_type: Any, name: Any, income: Any, subscription: Any) -> str:
    return deterministic_id(f"credit_card:{card_type}:{name}:{income}:{subscription}", 16)


def verification_id(user_id: Any, time_verified: Any) -> str:
    suffix = time_verified.replace(" ", "_").replace(":", "").replace("-", "")
    return f"{user_id}_{suffix}"


def user_tool_id(name: Any) -> str:
    return deterministic_id(f"user_discoverable_tool:{name}", 16)


def user_tool_call_id(name: Any, arguments: Any) -> str:
    text = json.dumps(arguments, sort_keys=True)
    return deterministic_id(f"user_discoverable_tool_call:{name}:{text}", 16)


def dispute_id(user_id: Any, transaction: Any) -> str:
    return f"dsp_{deterministic_id(f'dispute:{user_id}:{transaction}', 12)}"


def referral_link_id(user_id: Any, card_name: Any) -> str:
    return deterministic_id(f"referral_link:{user_id}:{card_name}", 16)


def agent_tool_id(name: Any) -> str:
    return deterministic_id(f"agent_discoverable_tool:{name}", 16)


def credit_card_order_id(account_id: Any, user_id: Any, reason: Any) -> str:
    return f"ccord_{deterministic_id(f'credit_card_order:{account_id}:{user_id}:{reason}', 12)}"


def closure_reason_id(account_id: Any, user_id: Any) -> str:
    return f"clsr_{deterministic_id(f'closure_reason:{account_id}:{user_id}', 12)}"


def account_flag_id(account_id: Any, flag_type: Any, expiration: Any) -> str:
    seed = f"account_flag:{account_id}:{flag_type}:{expiration}"
    return f"ccflag_{deterministic_id(seed, 12)}"


def cli_request_id(account_id: Any, user_id: Any, amount: Any) -> str:
    return f"cli_{deterministic_id(f'cli_request:{account_id}:{user_id}:{amount:.2f}', 12)}"


def bank_transaction_id(account_id: Any, day: Any, description: Any, amount: Any, kind: Any) -> str:
    seed = f"bank_txn:{account_id}:{day}:{description}:{amount:.2f}:{kind}"
    return f"btxn_{deterministic_id(seed, 12)}"


def debit_card_order_id(account_id: Any, user_id: Any, delivery: Any) -> str:
    seed = f"debit_card_order:{account_id}:{user_id}:{delivery}"
    return f"dcord_{deterministic_id(seed, 12)}"


def debit_card_id(account_id: Any, user_id: Any, issue_date: Any) -> str:
    return f"dbc_{deterministic_id(f'debit_card:{account_id}:{user_id}:{issue_date}', 12)}"
