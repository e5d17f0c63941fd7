"""A desk's procedure: what its policy says of its tools beyond what each tool says of itself.

A tool states its own role where it is defined (`engine.tool`): whether it writes,
what a proposal of its change must name (``keys``), whether it hands the customer
to a human (``ends_episode``), whose it is (``side``). The policy adds what no tool
can know of itself: which look-ups identify the customer, which reads are of
personal data, which changes an order may have once, and which of the generic
rules (`scoring.procedure`) apply. `Procedure` states that, by tool name, and
`procedure_spec` joins both into the `ProcedureSpec` the rules read. The names are
checked against the tools when the domain is made (`Domain`), so a procedure and
its tools cannot drift apart unnoticed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deedbench.engine import Tool
from deedbench.scoring.procedure import PROCEDURE_RULES, ProcedureSpec

__all__ = ["Procedure", "procedure_spec"]


@dataclass(frozen=True)
class Procedure:
    """The policy's roles for a domain's (agent-side) tools, and the rules that apply."""

    auth_tools: frozenset[str] = frozenset()
    """The look-ups whose result identifies the customer."""
    auth_result_field: str | None = None
    """The field of an authentication's JSON result that holds the customer's id (None: the
    whole result is the id)."""
    user_id_argument: str = "user_id"
    """The argument by which personal reads and writes name a customer."""
    personal_read_tools: frozenset[str] = frozenset()
    once_per_order_tools: frozenset[str] = frozenset()
    """Changes an order may have once, all of them together (named by `order_argument`)."""
    order_argument: str = "order_id"
    rules: tuple[str, ...] | None = None
    """The generic procedure rules that apply (None: all)."""

    def problems(self, tools: Sequence[Tool[..., Any]]) -> list[str]:
        """Where this procedure and the tools disagree: a name that is none of the tools,
        a look-up or personal read that writes, a once-per-order change that does not."""
        by_name = {t.name: t for t in tools}
        found: list[str] = []
        unknown = sorted(set(self.rules or ()) - set(PROCEDURE_RULES))
        if unknown:
            found.append(f"unknown procedure rules {unknown}; known: {list(PROCEDURE_RULES)}")
        roles = (
            ("auth_tools", self.auth_tools, False),
            ("personal_read_tools", self.personal_read_tools, False),
            ("once_per_order_tools", self.once_per_order_tools, True),
        )
        for role, names, writes in roles:
            for name in sorted(names):
                tool = by_name.get(name)
                if tool is None:
                    found.append(f"{role} names {name!r}, which is none of its tools")
                elif tool.writes != writes:
                    does = "writes" if tool.writes else "changes nothing"
                    found.append(f"{role} names {name!r}, which {does}")
        return found


def procedure_spec(procedure: Procedure, tools: Sequence[Tool[..., Any]]) -> ProcedureSpec:
    """What the procedure rules read: the tools' own roles (writes with their keys, the
    hand-offs) and the policy's."""
    return ProcedureSpec(
        write_tools={t.name: t.keys for t in tools if t.writes},
        auth_tools=procedure.auth_tools,
        auth_result_field=procedure.auth_result_field,
        user_id_argument=procedure.user_id_argument,
        personal_read_tools=procedure.personal_read_tools,
        transfer_tools=frozenset(t.name for t in tools if t.ends_episode),
        once_per_order_tools=procedure.once_per_order_tools,
        order_argument=procedure.order_argument,
    )
