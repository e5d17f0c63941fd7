"""One side's tools in a τ² episode, run as τ²'s environment runs them.

The engine's `ToolBox` checks every call against its tool's schema before it runs;
τ²'s environment does not: a call reaches the tool with whatever arguments came,
and what the tool raises is the result the caller reads (`Tau2Environment.respond`).
A `Tau2ToolBox` is one side's view of the episode's environment: the agent's (the
desk's tools, plus the stop tool in solo mode) or the user's (their own tools,
restricted per task where τ³'s banking says so). Both sides share one
environment, so a call on either is seen by the other after τ²'s sync.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from deedbench.benchmarks.tau2.environment import Requestor, Tau2Environment
from deedbench.engine import Tool, ToolBox, TurnOutcome, tool
from deedbench.records import Message

__all__ = ["DONE_TOOL", "Tau2ToolBox"]


@tool(name="done", kind="generic")
def _done(state: Any) -> str:
    """Call this once the ticket is solved; it ends the episode."""
    return "###STOP###"


DONE_TOOL = _done
"""τ²'s stop tool in solo mode: the agent's call of it is its stop (`HalfDuplex.stop_tool`)."""


class Tau2ToolBox(ToolBox[Tau2Environment]):
    """The tools one side of a τ² episode is shown, run on the shared environment."""

    def __init__(
        self,
        environment: Tau2Environment,
        requestor: Requestor,
        tools: Iterable[Tool[..., Any]],
        specs: Sequence[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(tools, environment)
        self.environment = environment
        self.requestor: Requestor = requestor
        self._specs = list(specs) if specs is not None else None

    def specs(self) -> list[dict[str, Any]]:
        """The tools as this side is shown them: τ²'s own JSON where the benchmark read it
        from the user's τ² source (`shown.listed_specs`), else the tools' own specs."""
        return list(self._specs) if self._specs is not None else super().specs()

    def take_turn(self, turn: Message) -> TurnOutcome:
        if not turn.tool_calls:
            return TurnOutcome(turn, hands_over=True)
        results = [self.environment.respond(call, self.requestor) for call in turn.tool_calls]
        return TurnOutcome(turn, results)
