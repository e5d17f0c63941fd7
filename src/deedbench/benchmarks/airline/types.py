"""The airline tools' argument types: cabins, trip types, and the JSON objects they take.

τ-bench stores the objects an agent sends (flights, passengers, payments) as it
sent them, extra keys, key order and int-versus-float included, so each type
validates an object in place instead of rebuilding it (`_JsonObject`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

__all__ = ["Cabin", "FlightSegment", "FlightType", "Passenger", "PaymentShare", "YesNo"]

Cabin = Literal["basic_economy", "economy", "business"]
FlightType = Literal["one_way", "round_trip"]
YesNo = Literal["yes", "no"]


class _JsonObject(dict[str, Any]):
    """A JSON-object argument with required keys of given types; other keys are kept.

    τ-bench stores these objects as the agent sent them (extra keys, key order and
    int-versus-float included), so they are validated in place rather than rebuilt.
    Each subclass lists its keys as ``{name: (JSON type, description)}``.
    """

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {}

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        any_object = core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
        return core_schema.no_info_after_validator_function(cls._check, any_object)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "object",
            "properties": {
                name: {"type": kind, "description": text} for name, (kind, text) in cls.KEYS.items()
            },
            "required": list(cls.KEYS),
        }

    @classmethod
    def _check(cls, value: dict[str, Any]) -> _JsonObject:
        for name, (kind, _) in cls.KEYS.items():
            if name not in value:
                raise ValueError(f"missing required key '{name}'")
            item = value[name]
            if kind == "string" and not isinstance(item, str):
                raise ValueError(f"'{name}' must be a string")
            if kind == "number" and (isinstance(item, bool) or not isinstance(item, int | float)):
                raise ValueError(f"'{name}' must be a number")
        return cls(value)


class FlightSegment(_JsonObject):
    """One flight of a reservation: its number and date."""

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        "flight_number": ("string", "The flight's number, for example 'HAT417'."),
        "date": (
            "string",
            "The day this flight departs, written YYYY-MM-DD, for example '2024-05-18'.",
        ),
    }


class Passenger(_JsonObject):
    """One passenger of a reservation."""

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        "first_name": ("string", "The passenger's given name, for example 'Ines'."),
        "last_name": ("string", "The passenger's family name, for example 'Okafor'."),
        "dob": (
            "string",
            "The passenger's birth date, written YYYY-MM-DD, for example '1987-11-23'.",
        ),
    }


class PaymentShare(_JsonObject):
    """One payment method of a booking and the amount it pays."""

    KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        "payment_id": (
            "string",
            "Id of a payment method saved in the user's profile, for example "
            "'credit_card_4402913', 'gift_card_4402913' or 'certificate_4402913'.",
        ),
        "amount": ("number", "How much this payment method is charged."),
    }
