"""What τ³ banking's desk toolkit and its discoverable tools' mixins share: the database's
tables as τ²'s helpers read them."""

from __future__ import annotations

from typing import Any, ClassVar

from deedbench.benchmarks.tau2.banking.db_query import query_database_tool, table_data
from deedbench.benchmarks.tau2.banking.schema import TransactionalDB
from deedbench.benchmarks.tau2.toolkit import Toolkit

__all__ = ["BankingToolkit"]


class BankingToolkit(Toolkit):
    """A toolkit over the bank's database (every entry a ``{"data", "notes"}`` table, each a
    world value, copied whole by the episode that first reaches it)."""

    schema = TransactionalDB
    tables: ClassVar[frozenset[str] | None] = frozenset()

    def _t(self, name: str) -> dict[str, dict[str, Any]]:
        return table_data(self.db, name)

    def _query(self, name: str, field: str, value: Any) -> str:
        return query_database_tool(name, f'{{"{field}": "{value}"}}', db=self.db)

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
