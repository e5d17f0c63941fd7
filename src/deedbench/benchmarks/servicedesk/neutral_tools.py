"""The tools every τ-style desk has whatever its domain: `calculate`, `think`, and
`transfer_to_human_agents`; and how a domain gives its tools τ-bench's names.

τ-bench runs a tool as ``Tool.invoke(data=data, **arguments)``, so a call with a
missing or an unexpected argument fails with Python's own words, which name
τ-bench's class: "CancelPendingOrder.invoke() missing 1 required positional
argument: 'reason'". `taubench_named` gives each tool function the names that
message is built from, so deedbench's tools fail with the same words.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterable
from typing import Any

from deedbench.benchmarks.servicedesk.arithmetic import ALLOWED_CHARACTERS, evaluate
from deedbench.engine import Tool, tool
from deedbench.errors import ToolError

__all__ = ["calculate", "taubench_named", "think", "transfer_to_human_agents"]


def taubench_named(domain: str, tools: Iterable[Tool[..., Any]]) -> tuple[Tool[..., Any], ...]:
    """The tools with τ-bench's module and class names (``tau_bench.envs.<domain>.tools.
    <tool>.<Tool>.invoke``), each on its own copy of the function, so that a domain's
    names never leak into another domain sharing the function."""
    return tuple(_renamed(t, domain) for t in tools)


def _renamed(original: Tool[..., Any], domain: str) -> Tool[..., Any]:
    source = original.function
    function = types.FunctionType(
        source.__code__,
        source.__globals__,
        source.__name__,
        source.__defaults__,
        source.__closure__,
    )
    function.__kwdefaults__ = source.__kwdefaults__
    function.__annotations__ = dict(source.__annotations__)
    function.__doc__ = source.__doc__
    class_name = "".join(part.capitalize() for part in original.name.split("_"))
    function.__qualname__ = f"{class_name}.invoke"
    function.__module__ = f"tau_bench.envs.{domain}.tools.{original.name}"
    return dataclasses.replace(original, function=function)


@tool(kind="generic")
def calculate(data: Any, expression: str) -> str:
    """Calculate an arithmetic expression; the result is rounded to 2 decimals.

    Args:
        expression: The expression, for example '(109.99 + 35.5) * 2 - 10'. It may
            contain numbers, the operators + - * /, parentheses and spaces.
    """
    if not all(char in ALLOWED_CHARACTERS for char in expression):
        raise ToolError("invalid characters in expression")
    try:
        return str(round(float(evaluate(expression)), 2))
    except Exception as exc:  # τ-bench reports every failure of its eval as "Error: ..."
        raise ToolError(str(exc)) from None


@tool(kind="think")
def think(data: Any, thought: str) -> str:
    """Write down a thought, for reasoning through a complex case or remembering something.
    It neither looks anything up nor changes the database.

    Args:
        thought: The thought.
    """
    return ""


@tool(kind="generic", ends_episode=True)
def transfer_to_human_agents(data: Any, summary: str) -> str:
    """Hand the customer over to a human agent, with a summary of their issue. Transfer
    only if the customer explicitly asks for a human, or if their issue cannot be
    resolved with the available tools.

    Args:
        summary: A summary of the customer's issue for the human agent.
    """
    return "Transfer successful"
