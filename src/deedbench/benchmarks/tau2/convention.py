"""How τ²'s environment turns what a tool returns into the text its caller reads.

τ²'s tools return pydantic models, strings, numbers, lists and dicts, and its
environment serialises them one way (``Environment.to_json_str``): a string is
sent as it is; anything else becomes JSON, where a model is its ``model_dump()``
and, inside lists and plain dicts, every number and boolean becomes its
``str()`` (so a dict ``{"n": 1}`` reads ``{"n": "1"}`` while a model's field
reads ``1``). deedbench's τ² tools keep their data as the dumps themselves, so a
tool that returns a model returns its dump wrapped in `Dump`, and `to_json_str`
writes exactly what τ²'s would.
"""

from __future__ import annotations

import json
from datetime import date, datetime
from typing import Any

__all__ = ["Dump", "to_json_str"]


class Dump(dict[str, Any]):
    """A model's ``model_dump()``, as a τ² tool returns the model: written as it is."""


def to_json_str(value: Any) -> str:
    """The text τ²'s environment makes of a tool's return value."""
    if isinstance(value, str):
        return value
    return json.dumps(_process(value), default=str)


def _process(value: Any) -> Any:
    if isinstance(value, Dump):
        return value
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, int | float):  # bool is an int
        return str(value)
    if isinstance(value, list):
        return [_process(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_process(item) for item in value)
    if isinstance(value, dict):
        return {key: _process(item) for key, item in value.items()}
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise ValueError(f"Unsupported type: {type(value)}")
