"""τ²'s banking query helpers (``db_query.py``) over an episode's `DeskWorld`.

τ²'s banking tools read and write their tables through a handful of helpers: a
constraint query (``field__op`` keys), an insert that refuses an existing id, a
field update, and the text wrapper that the agent reads. They are written again
here, over the episode's own copy of each table (every table is a world value,
``{"data": ..., "notes": ...}``), so that their answers, including the failures
a malformed constraint causes, are τ²'s word for word.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from typing import Any

from deedbench.benchmarks.servicedesk.world import DeskWorld

__all__ = [
    "QUERYABLE",
    "add_to_db",
    "query_database_tool",
    "query_db",
    "table_data",
    "update_record_in_db",
]

QUERYABLE: tuple[str, ...] = (
    "users",
    "accounts",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "agent_discoverable_tools",
    "task_config",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "debit_cards",
    "debit_card_orders",
    "debit_card_disputes",
    "credit_limit_increase_requests",
    "payment_history",
)
"""The tables τ²'s query wrapper knows, in the order its error message lists them."""

_OWN_MODULE = f"{__name__}."
_TAU2_MODULE = "tau2.domains.banking_knowledge.db_query."


def table_data(db: DeskWorld, name: str) -> dict[str, dict[str, Any]]:
    """The episode's own, mutable ``data`` of one table."""
    data: dict[str, dict[str, Any]] = db.value(name)["data"]
    return data


def _compare(op_name: str) -> Callable[[Any, Any], bool]:
    ops: dict[str, Callable[[Any, Any], bool]] = {
        "eq": operator.eq,
        "ne": operator.ne,
        "gt": operator.gt,
        "gte": operator.ge,
        "lt": operator.lt,
        "lte": operator.le,
        "contains": lambda a, b: b in a if a is not None else False,
        "startswith": lambda a, b: str(a).startswith(str(b)) if a is not None else False,
        "endswith": lambda a, b: str(a).endswith(str(b)) if a is not None else False,
        "in": lambda a, b: a in b,
        "nin": lambda a, b: a not in b,
    }
    return ops.get(op_name, operator.eq)


def _matches(record: dict[str, Any], constraints: dict[str, Any]) -> bool:
    for key, expected in constraints.items():
        if "__" in key:
            field_name, op_name = key.rsplit("__", 1)
        else:
            field_name, op_name = key, "eq"
        try:
            if not _compare(op_name)(record.get(field_name), expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


def query_db(
    db_name: str,
    db: DeskWorld,
    return_ids: bool = False,
    limit: int | None = None,
    **constraints: Any,
) -> list[Any]:
    """The records of a table meeting every constraint (with their ids if asked)."""
    if db_name not in QUERYABLE:
        return []
    results: list[Any] = []
    for record_id, record in table_data(db, db_name).items():
        if _matches(record, constraints):
            results.append((record_id, record) if return_ids else record)
            if limit is not None and len(results) >= limit:
                break
    return results


def add_to_db(db_name: str, record_id: str, record: dict[str, Any], db: DeskWorld) -> bool:
    """Insert a record; False when its id is taken."""
    data = table_data(db, db_name)
    if record_id in data:
        return False
    data[record_id] = record
    return True


def update_record_in_db(
    db_name: str, db: DeskWorld, record_id: str, updates: dict[str, Any]
) -> tuple[bool, dict[str, Any] | None]:
    """Set fields of an existing record; (False, None) when there is none."""
    data = table_data(db, db_name)
    if record_id not in data:
        return False, None
    for name, value in updates.items():
        data[record_id][name] = value
    return True, data[record_id]


def query_database_tool(database_name: Any, constraints: Any, db: DeskWorld) -> str:
    """τ²'s ``query_database_tool``: a query written out as the agent reads it."""
    try:
        available = list(QUERYABLE)
        if database_name not in available:
            return f"Error: Database '{database_name}' not found. Available: {available}"
        try:
            constraint_dict = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as e:
            return f"Error: Invalid JSON: {e}"
        try:
            results = query_db(database_name, db=db, return_ids=True, **constraint_dict)
        except TypeError as e:
            # Python names the function it could not call by its module: τ²'s.
            raise TypeError(str(e).replace(_OWN_MODULE, _TAU2_MODULE)) from None
        if not results:
            return f"No records found in '{database_name}'."
        lines = [f"Found {len(results)} record(s) in '{database_name}':\n"]
        for number, (record_id, record) in enumerate(results, 1):
            lines.append(f"{number}. Record ID: {record_id}")
            for name, value in record.items():
                lines.append(f"   {name}: {value}")
            lines.append("")
        return "\n".join(lines)
    except Exception as e:
        return f"Error querying database: {e!s}"
