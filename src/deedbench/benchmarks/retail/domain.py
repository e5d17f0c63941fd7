"""A service-desk domain: what the shared machinery (episodes, customer, oracle, scorer,
replay, rescoring) needs to know to run retail or airline alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deedbench.benchmarks.retail.procedure import RETAIL_PROCEDURE
from deedbench.benchmarks.retail.tools import RETAIL_TOOLS
from deedbench.benchmarks.retail.world import load_retail_data
from deedbench.engine import Message, Tool
from deedbench.scoring.procedure import ProcedureSpec, Violation, check_procedure

__all__ = ["RETAIL", "Domain", "PolicyCheck"]

PolicyCheck = Callable[[Sequence[Message], dict[str, Any]], list[Violation]]


@dataclass(frozen=True)
class Domain:
    """Tools, data loading, procedure rules and the lists compared as multisets."""

    name: str
    load: Callable[[Path], dict[str, Any]]
    tools: Sequence[Tool]
    procedure: ProcedureSpec
    unordered: frozenset[str]
    procedure_rules: tuple[str, ...] | None = None  # the generic rules that apply (None: all)
    policy_check: PolicyCheck | None = None  # the domain's own policy rules

    def violations(self, messages: Sequence[Message], base: dict[str, Any]) -> list[Violation]:
        found = check_procedure(messages, self.procedure, self.procedure_rules)
        if self.policy_check is not None:
            found += self.policy_check(messages, base)
        return sorted(found, key=lambda v: v.message_index)


RETAIL = Domain(
    "retail",
    load_retail_data,
    RETAIL_TOOLS,
    RETAIL_PROCEDURE,
    frozenset({"orders.*.items", "orders.*.fulfillments", "orders.*.payment_history"}),
)
