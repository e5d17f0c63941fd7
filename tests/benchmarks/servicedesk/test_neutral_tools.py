"""The tools every desk has: `calculate` answers as τ-bench's ``eval`` does without running
the text, `think` does nothing, and `transfer_to_human_agents` hands over and ends."""

from __future__ import annotations

import ast
import builtins
import inspect
import json
from typing import Any

import pytest

from deedbench.benchmarks.servicedesk import (
    DeskWorld,
    arithmetic,
    calculate,
    think,
    transfer_to_human_agents,
)
from deedbench.engine import ToolBox
from deedbench.records import Message, ToolCall


@pytest.fixture
def world() -> DeskWorld:
    return DeskWorld({"users": {}})


def call(world: DeskWorld, name: str, **kwargs: Any) -> Message:
    box = ToolBox((calculate, think, transfer_to_human_agents), world)
    return box.call(ToolCall(id="call-1", name=name, arguments=json.dumps(kwargs)))


def ok(world: DeskWorld, name: str, **kwargs: Any) -> str:
    message = call(world, name, **kwargs)
    assert not message.error, message.content
    assert world.touched() == {}
    return message.content


def fails(world: DeskWorld, name: str, expected: str, **kwargs: Any) -> None:
    """The call returns exactly `Error: expected` and leaves the world untouched."""
    message = call(world, name, **kwargs)
    assert message.error
    assert message.content == f"Error: {expected}"
    assert world.touched() == {}


def test_think_and_transfer(world: DeskWorld) -> None:
    assert ok(world, "think", thought="the order is pending") == ""
    assert ok(world, "transfer_to_human_agents", summary="wants a refund") == "Transfer successful"
    assert transfer_to_human_agents.ends_episode and not think.ends_episode
    assert not any(t.writes for t in (calculate, think, transfer_to_human_agents))


# --- calculate --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("2 + 2", "4.0"),
        ("  (10 - 2.5) * 3 / 4", "5.62"),  # 5.625 rounds half to even, as in τ-bench
        ("1 / 3", "0.33"),
        ("-(3) + +2", "-1.0"),
        ("109.99 + 35.5 - 10", "135.49"),
        ("7 // 2", "3.0"),
        ("2 ** 10", "1024.0"),
        (".5 + 1.", "1.5"),
    ],
)
def test_calculate_rounds_to_two_decimals(world: DeskWorld, expression: str, result: str) -> None:
    assert ok(world, "calculate", expression=expression) == result


@pytest.mark.parametrize(
    ("expression", "error"),
    [  # τ-bench's own texts: Python's, as its eval reports them
        ("__import__('os')", "invalid characters in expression"),
        ("x + 1", "invalid characters in expression"),
        ("abs(-1)", "invalid characters in expression"),
        ("1e5", "invalid characters in expression"),
        ("1 % 2", "invalid characters in expression"),
        ("1 / 0", "division by zero"),
        ("1 +", "invalid syntax (<string>, line 1)"),
        ("1 2", "invalid syntax (<string>, line 1)"),
        ("", "invalid syntax (<string>, line 0)"),
        ("()", "float() argument must be a string or a real number, not 'tuple'"),
        ("...", "float() argument must be a string or a real number, not 'ellipsis'"),
        ("2(3 + 4)", "'int' object is not callable"),
        ("2**999999", "int too large to convert to float"),
        ("1.5 ** 100000", "(34, 'Numerical result out of range')"),
        ("9" * 400, "int too large to convert to float"),
        ("(0 - 8) ** 0.5", "float() argument must be a string or a real number, not 'complex'"),
        ("(" * 300 + "1" + ")" * 300, "too many nested parentheses (<string>, line 1)"),
        ("9 ** 9 ** 9", "result is too large"),  # deedbench's one bound: eval would hang
    ],
)
def test_calculate_errors_are_tau_bench_errors(
    world: DeskWorld, expression: str, error: str
) -> None:
    fails(world, "calculate", error, expression=expression)


def test_calculate_adds_a_thousand_terms(world: DeskWorld) -> None:
    assert ok(world, "calculate", expression="1" + "+1" * 999) == "1000.0"


def test_calculate_never_runs_the_text(world: DeskWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    """No eval or exec anywhere; compile appears once, only for its syntax errors, and the
    code object it returns is discarded (a bare expression statement)."""

    def no_eval(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("eval was called")

    monkeypatch.setattr(builtins, "eval", no_eval)
    monkeypatch.setattr(builtins, "exec", no_eval)
    assert ok(world, "calculate", expression="(1 + 2) * 3") == "9.0"
    tree = ast.parse(inspect.getsource(arithmetic))
    called = [
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert not set(called) & {"eval", "exec"}
    assert called.count("compile") == 1
    discarded = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "compile"
    ]
    assert len(discarded) == 1
