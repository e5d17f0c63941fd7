"""deedbench's copy of τ²'s banking database model (``TransactionalDB``).

Every entry of the database is one table in τ²'s ``DatabaseTable`` shape: a
``data`` dict of record id -> free-form record, and a ``notes`` text telling the
agent how the table is used. Records are not modelled further (τ² does not
either), so they are kept exactly as written, ints and floats as they came.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["TABLE_NAMES", "DatabaseTable", "TransactionalDB"]


class DatabaseTable(BaseModel):
    """One table: its records by id, and its notes."""

    data: dict[str, dict[str, Any]] = Field(default_factory=dict)
    notes: str = ""


def _table() -> Any:
    return Field(default_factory=DatabaseTable)


class TransactionalDB(BaseModel):
    """The whole banking database; unknown entries are refused, as τ²'s ``DB`` does."""

    model_config = ConfigDict(extra="forbid")

    users: DatabaseTable = _table()
    accounts: DatabaseTable = _table()
    debit_cards: DatabaseTable = _table()
    referrals: DatabaseTable = _table()
    credit_card_applications: DatabaseTable = _table()
    user_discoverable_tools: DatabaseTable = _table()
    user_discoverable_tool_calls: DatabaseTable = _table()
    verification_history: DatabaseTable = _table()
    credit_card_transaction_history: DatabaseTable = _table()
    cash_back_disputes: DatabaseTable = _table()
    bank_account_transaction_history: DatabaseTable = _table()
    credit_card_accounts: DatabaseTable = _table()
    agent_discoverable_tools: DatabaseTable = _table()
    task_config: DatabaseTable = _table()
    human_transfer_requests: DatabaseTable = _table()
    transaction_disputes: DatabaseTable = _table()
    credit_card_orders: DatabaseTable = _table()
    debit_card_orders: DatabaseTable = _table()
    credit_card_closure_reasons: DatabaseTable = _table()
    credit_card_account_flags: DatabaseTable = _table()
    credit_limit_increase_requests: DatabaseTable = _table()
    payment_history: DatabaseTable = _table()
    debit_card_disputes: DatabaseTable = _table()


TABLE_NAMES: tuple[str, ...] = tuple(TransactionalDB.model_fields)
"""Every table, in the model's order."""
