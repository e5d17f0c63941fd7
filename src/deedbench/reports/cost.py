"""What a run's model calls cost, from stored token counts and a dated price table.

A model without a price is reported as unknown, never as zero. Calls answered
by deedbench's response cache cost nothing and are counted apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from deedbench.engine import EpisodeRecord, Usage

__all__ = ["Price", "PriceTable", "RoleCost", "run_costs"]

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


class Price(BaseModel):
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None


class PriceTable(BaseModel):
    as_of: str
    models: dict[str, Price]

    @classmethod
    def load(cls, override: Path | None = None) -> PriceTable:
        """The shipped table, with entries from `override` (same shape) taking precedence."""
        shipped = json.loads(
            resources.files("deedbench.reports").joinpath("prices.json").read_text()
        )
        table = cls.model_validate(shipped)
        if override is not None:
            extra = cls.model_validate(json.loads(override.read_text()))
            table = cls(
                as_of=f"{table.as_of}; {override.name}: {extra.as_of}",
                models={**table.models, **extra.models},
            )
        return table

    def find(self, spec: str) -> Price | None:
        """The price for an agent spec: exact, or the same model with a date suffix
        (``claude-sonnet-4-20250514``, ``gpt-4o-2024-08-06``); never a different
        model that merely starts with the same name (``o3-mini`` is not ``o3``)."""
        if spec in self.models:
            return self.models[spec]
        undated = _DATE_SUFFIX.sub("", spec)
        return self.models.get(undated)


class RoleCost(BaseModel):
    """Tokens and cost of one role's model calls (the agent's, or a simulated user's)."""

    role: str
    model: str
    usage: Usage
    paid_calls: int
    cost_usd: float | None
    price_as_of: str | None


def run_costs(
    records: Iterable[EpisodeRecord], models: dict[str, str], prices: PriceTable
) -> list[RoleCost]:
    """Cost per role; `models` maps a role ("assistant", "user") to its agent spec."""
    usage: dict[str, Usage] = {}
    paid: dict[str, Usage] = {}
    for record in records:
        for message in record.messages:
            if message.usage is None:
                continue
            role = message.role
            usage[role] = usage.get(role, Usage()) + message.usage
            if not message.usage.cache_hits:
                paid[role] = paid.get(role, Usage()) + message.usage
    result = []
    for role, total in usage.items():
        spec = models.get(role, "unknown")
        price = prices.find(spec)
        bill = paid.get(role, Usage())
        cost = None
        if price is not None:
            cached = bill.cached_input_tokens
            cached_rate = price.cached_input if price.cached_input is not None else price.input
            cost = (
                (bill.input_tokens - cached) * price.input
                + cached * cached_rate
                + bill.output_tokens * price.output
            ) / 1e6
        result.append(
            RoleCost(
                role="agent" if role == "assistant" else role,
                model=spec,
                usage=total,
                paid_calls=bill.calls,
                cost_usd=cost,
                price_as_of=prices.as_of if price else None,
            )
        )
    return result
