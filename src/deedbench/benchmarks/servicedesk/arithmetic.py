"""Arithmetic as τ-bench's `calculate` computes it with ``eval``, without running the text.

τ-bench lets through only the characters ``0123456789+-*/(). `` and then calls
``eval``. Within that alphabet Python still reads more than arithmetic: ``...``
(Ellipsis), ``()`` (an empty tuple), ``2(3+4)`` (a call of the int 2), ``**``
and ``//``. Every value and every error text here is Python's own, so `calculate`
answers as τ-bench does:

- Syntax: the text is compiled with ``compile`` exactly as ``eval`` compiles it
  (leading spaces stripped, filename ``<string>``), only for Python's syntax
  error, recursion error or memory error; the code object is discarded, never run.
- Values: a small iterative parser evaluates the tokens with Python's operators on
  Python's numbers, so ``10**400/10**399``, ``(-8)**0.5`` (a complex number),
  ``() * 3`` and ``1//0`` give what ``eval`` gives, errors included.
- One bound: an integer power or product whose result would exceed
  `MAX_INTEGER_BITS` is refused with "result is too large", where ``eval``
  would compute for minutes or exhaust memory (``9**9**9``).

Compilation's recursion limit depends on how deep the caller's stack is, so for
sums of a few thousand terms the exact length at which Python gives up differs
by a few terms between τ-bench's process and this one; both give up.
"""

from __future__ import annotations

import operator
import re
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["ALLOWED_CHARACTERS", "MAX_INTEGER_BITS", "evaluate"]

ALLOWED_CHARACTERS = "0123456789+-*/(). "
"""τ-bench's alphabet, as a string: its check is ``char in ALLOWED_CHARACTERS``."""

MAX_INTEGER_BITS = 10_000_000
"""The largest integer a power or a product may build: about 3 million digits, which
Python builds in about a second."""

_TOKEN = re.compile(r"\s*(?:(\d+\.?\d*|\.\d+)|(\.\.\.)|(\*\*|//|[-+*/()]))")

_BINARY: dict[str, tuple[int, Callable[[Any, Any], Any]]] = {
    "+": (1, operator.add),
    "-": (1, operator.sub),
    "*": (2, operator.mul),
    "/": (2, operator.truediv),
    "//": (2, operator.floordiv),
    "**": (4, operator.pow),  # right-associative; its right operand may carry a sign
}
_UNARY: dict[str, Callable[[Any], Any]] = {"+": operator.pos, "-": operator.neg}
_UNARY_PRECEDENCE = 3


class _Open:
    """An opening parenthesis on the operator stack: a group, or a call's argument list.

    `depth` is how many values were known when it opened, so its closing parenthesis
    tells an empty ``()`` from ``(x)``; `form` is how a call passes its argument
    ("" plainly, "*" or "**").
    """

    __slots__ = ("call", "depth", "form")

    def __init__(self, call: bool, depth: int) -> None:
        self.call = call
        self.depth = depth
        self.form = ""


def evaluate(expression: str) -> Any:
    """The value ``eval(expression, {"__builtins__": None}, {})`` would give, or its error."""
    if not isinstance(expression, str):
        raise TypeError("eval() arg 1 must be a string, bytes or code object")
    source = expression.lstrip(" \t")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "perhaps you missed a comma?" and the like
        compile(source, "<string>", "eval", dont_inherit=True)
    return _evaluate_tokens(_tokens(source))


def _tokens(source: str) -> list[tuple[str, Any]]:
    """("num", value) | ("...", Ellipsis) | ("op", text); the text compiled, so it tokenizes."""
    found: list[tuple[str, Any]] = []
    position = 0
    end = len(source.rstrip())
    while position < end:
        match = _TOKEN.match(source, position)
        if match is None:  # pragma: no cover - compile() accepted the text
            raise SyntaxError("invalid syntax")
        number, ellipsis, op = match.groups()
        if number is not None:
            is_float = "." in number
            found.append(("num", float(number) if is_float else int(number)))
        elif ellipsis is not None:
            found.append(("...", Ellipsis))
        else:
            found.append(("op", op))
        position = match.end()
    return found


def _evaluate_tokens(tokens: list[tuple[str, Any]]) -> Any:
    """Shunting-yard over the tokens, applying each operator as soon as its operands are
    known, so evaluation order (and the first error) is Python's, left to right."""
    values: list[Any] = []
    ops: list[tuple[str, str] | _Open] = []  # ("bin" | "unary", symbol) or an opening

    def apply(kind: str, symbol: str) -> None:
        if kind == "unary":
            values.append(_UNARY[symbol](values.pop()))
        else:
            right = values.pop()
            values.append(_binary(symbol, values.pop(), right))

    def reduce_above(precedence: int, right_associative: bool) -> None:
        while ops and isinstance(top := ops[-1], tuple):
            kind, symbol = top
            held = _UNARY_PRECEDENCE if kind == "unary" else _BINARY[symbol][0]
            if held < precedence or (held == precedence and right_associative):
                return
            ops.pop()
            apply(kind, symbol)

    after_operand = False
    for kind, value in tokens:
        if kind != "op":
            values.append(value)
            after_operand = True
        elif value == "(":
            ops.append(_Open(call=after_operand, depth=len(values)))
            after_operand = False
        elif value == ")":
            while isinstance(top := ops.pop(), tuple):
                apply(*top)
            if top.call:
                _call(top, values)
            elif len(values) == top.depth:
                values.append(())  # "()" is an empty tuple
            after_operand = True
        elif not after_operand:
            opening = ops[-1] if ops else None
            if (
                isinstance(opening, _Open)
                and opening.call
                and value in ("*", "**")
                and len(values) == opening.depth
            ):
                opening.form = value  # f(*x) or f(**x)
            else:
                ops.append(("unary", value))
        else:
            reduce_above(_BINARY[value][0], right_associative=value == "**")
            ops.append(("bin", value))
            after_operand = False
    while ops:
        top = ops.pop()
        assert isinstance(top, tuple)  # compile() accepted the text: parentheses balance
        apply(*top)
    return values[0]


def _call(opening: _Open, values: list[Any]) -> None:
    """Apply a call. Nothing in this alphabet is callable, but Python checks a starred
    argument before it finds that out, and says so in its own words."""
    argument: Any = values.pop() if len(values) > opening.depth else None
    function = values.pop()
    if opening.form == "*":
        try:
            iter(argument)
        except TypeError:
            raise TypeError(
                f"{function} argument after * must be an iterable, not {type(argument).__name__}"
            ) from None
    elif opening.form == "**":
        raise TypeError(
            f"{function} argument after ** must be a mapping, not {type(argument).__name__}"
        )
    raise TypeError(f"'{type(function).__name__}' object is not callable")


def _binary(symbol: str, left: Any, right: Any) -> Any:
    if symbol == "**":
        _check_power(left, right)
    elif (
        symbol == "*"
        and _is_int(left)
        and _is_int(right)
        and left.bit_length() + right.bit_length() > MAX_INTEGER_BITS
    ):
        raise OverflowError("result is too large")
    return _BINARY[symbol][1](left, right)


def _is_int(value: Any) -> bool:
    return type(value) is int


def _check_power(base: Any, exponent: Any) -> None:
    if (
        _is_int(base)
        and _is_int(exponent)
        and exponent > 0
        and abs(base) > 1
        and exponent * (abs(base).bit_length() - 1) > MAX_INTEGER_BITS
    ):
        raise OverflowError("result is too large")
