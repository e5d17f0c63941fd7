"""A τ² side's tools as methods of a toolkit over its database, as τ² writes them.

τ²'s tools are methods of a toolkit class (``AirlineTools``, ``TelecomUserTools``)
whose ``db`` is the side's database, and a task may call any other method of it
too, to set up its world (``initialization_actions``) or to check it
(``env_assertions``). deedbench's τ² domains are written the same way: a
`Toolkit` subclass per side, its tools marked with `tool` (``@tool(kind="write")``),
its ``db`` the episode's `DeskWorld`. Written as methods of a class of the same
name, they fail as τ²'s fail: a call without an argument raises
``TelecomTools.suspend_line() missing 1 required positional argument: 'reason'``,
word for word.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from deedbench.benchmarks.servicedesk.arithmetic import ALLOWED_CHARACTERS, evaluate
from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.engine import Tool

__all__ = ["Toolkit", "calculate", "named_as_own"]


class Toolkit:
    """One side's tools over its database; subclasses define the tools as methods."""

    schema: ClassVar[type[BaseModel] | None] = None
    """deedbench's copy of τ²'s model of this side's database: a database file is read
    through it, as τ² reads it, and kept as its dump."""
    tables: ClassVar[frozenset[str] | None] = None
    """The database's entries that are tables of records (None: all of them); the others
    are values an episode copies whole (`DeskWorld`)."""
    tau2_module: ClassVar[str | None] = None
    """The module of τ²'s source defining the class of this class's name, whose tools'
    texts the model is shown when the user has τ²'s source (`tau2_toolkit`)."""

    def __init__(self, db: DeskWorld) -> None:
        self.db = db

    @classmethod
    def tools(cls) -> list[Tool[..., Any]]:
        """The toolkit's tools: a subclass's own first, in the order written, then those it
        inherits (τ²'s order, which is the order agents are shown them in)."""
        found: dict[str, Tool[..., Any]] = {}
        for klass in cls.__mro__:
            for name, value in vars(klass).items():
                if isinstance(value, Tool) and name not in found:
                    found[name] = value
        return list(found.values())

    @classmethod
    def tau2_toolkit(cls) -> tuple[str, str] | None:
        """τ²'s class of this toolkit: its module and name, stated by the class itself (None:
        a class that does not say, as a subclass of a τ² toolkit may not, is no τ² class,
        and its tools are shown as deedbench describes them)."""
        module = vars(cls).get("tau2_module")
        return (module, cls.__name__) if isinstance(module, str) else None


def named_as_own(toolkit: type[Toolkit], *parts: type) -> None:
    """Give the methods `toolkit` takes from `parts` (the classes it is put together from,
    one module each) the qualified name τ²'s one class gives them, so that a call with a
    wrong argument fails with τ²'s words (``TelecomUserTools.toggle_wifi() got an
    unexpected keyword argument 'force'``)."""
    for part in parts:
        for name, value in vars(part).items():
            function = value.function if isinstance(value, Tool) else value
            if callable(function) and hasattr(function, "__qualname__") and name in dir(toolkit):
                function.__qualname__ = f"{toolkit.__name__}.{name}"


def calculate(expression: str) -> str:
    """τ²'s ``calculate``: the expression's value rounded to 2 decimals, computed without
    ``eval`` (`servicedesk.arithmetic`), its errors Python's own."""
    if not all(char in ALLOWED_CHARACTERS for char in expression):
        raise ValueError("Invalid characters in expression")
    return str(round(float(evaluate(expression)), 2))
