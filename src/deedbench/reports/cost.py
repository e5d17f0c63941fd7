"""What a run's model calls cost, from stored token counts and a dated price table.

A model without a price is reported as unknown, never as zero. Calls answered
by deedbench's response cache cost nothing and are counted apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from deedbench.files import read_text
from deedbench.records import EpisodeRecord, RunConfig, Usage

__all__ = [
    "OUTSIDE_ROLES",
    "CallTotals",
    "Price",
    "PriceTable",
    "RoleCost",
    "agent_kind",
    "call_costs",
    "costs_text",
    "record_cost",
    "role_models",
    "run_costs",
]

OUTSIDE_ROLES = ("judge",)
"""The roles whose model calls are no message of the conversation (τ²'s NL judge): an
episode's record counts them in its `usage` only, and every cost counts them from there."""

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


class Price(BaseModel):
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, usage: Usage) -> float:
        """USD for the tokens in `usage`; cached input at its own rate where one is listed."""
        cached = usage.cached_input_tokens
        cached_rate = self.cached_input if self.cached_input is not None else self.input
        return (
            (usage.input_tokens - cached) * self.input
            + cached * cached_rate
            + usage.output_tokens * self.output
        ) / 1e6


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
            extra = cls.model_validate(json.loads(read_text(override)))
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
    """Tokens and cost of one role's model calls: the agent's, a simulated user's, τ²'s
    NL judge's, an audit's judge ("audit judge")."""

    role: str
    model: str
    usage: Usage
    paid_calls: int
    cost_usd: float | None
    price_as_of: str | None


class CallTotals:
    """Tokens of model calls summed per (role, model) as calls stream by, all of them and
    the billed ones apart (a call answered by deedbench's response cache is counted but
    not billed), in the order each (role, model) first appears."""

    def __init__(self) -> None:
        self._usage: dict[tuple[str, str], list[int]] = {}
        self._paid: dict[tuple[str, str], list[int]] = {}

    def add(self, role: str, spec: str, call: Usage) -> None:
        """Count one call's usage; `spec` is the agent spec of the model that answered."""
        counts = [getattr(call, name) for name in _FIELDS]
        for totals, counted in ((self._usage, True), (self._paid, not call.cache_hits)):
            if counted:
                total = totals.setdefault((role, spec), [0] * len(_FIELDS))
                for i, n in enumerate(counts):
                    total[i] += n

    def add_total(self, role: str, spec: str, calls: Usage, billed: bool) -> None:
        """Count calls whose usage is summed already (the store's `run_calls`): billed
        ones, or ones answered by deedbench's response cache."""
        counts = [getattr(calls, name) for name in _FIELDS]
        for totals, counted in ((self._usage, True), (self._paid, billed)):
            if counted:
                total = totals.setdefault((role, spec), [0] * len(_FIELDS))
                for i, n in enumerate(counts):
                    total[i] += n

    def costs(self, prices: PriceTable) -> list[RoleCost]:
        """Cost per (role, model) of the calls counted so far."""
        result = []
        for (role, spec), total in self._usage.items():
            price = prices.find(spec)
            bill = _usage(self._paid.get((role, spec), [0] * len(_FIELDS)))
            result.append(
                RoleCost(
                    role="agent" if role == "assistant" else role,
                    model=spec,
                    usage=_usage(total),
                    paid_calls=bill.calls,
                    cost_usd=price.cost(bill) if price is not None else None,
                    price_as_of=prices.as_of if price else None,
                )
            )
        return result


_FIELDS = tuple(Usage.model_fields)


def _usage(counts: list[int]) -> Usage:
    return Usage(**dict(zip(_FIELDS, counts, strict=True)))


def run_costs(
    records: Iterable[EpisodeRecord], models: dict[str, str], prices: PriceTable
) -> list[RoleCost]:
    """Cost per role; `models` maps a role ("assistant", "user") to its agent spec."""

    def calls(record: EpisodeRecord) -> Iterable[tuple[str, str, Usage]]:
        for m in record.messages:
            if m.usage is not None:
                yield m.role, models.get(m.role, "unknown"), m.usage
        for role in OUTSIDE_ROLES:  # a judge's call is no message of the conversation
            used = record.usage.get(role)
            if used is not None:
                yield role, models.get(role, "unknown"), used

    return call_costs((call for record in records for call in calls(record)), prices)


def role_models(config: RunConfig) -> dict[str, str]:
    """The agent spec of the model behind each role whose calls a run's records count
    ("assistant" for the agent, "user", "judge")."""
    models = {"assistant": config.agent, "user": config.user.spec if config.user else "unknown"}
    if config.judge is not None:
        models["judge"] = config.judge.spec
    elif "judge" in config.benchmark_options:  # τ²'s NL judge, recorded as an option only
        models["judge"] = config.benchmark_options["judge"]
    return models


def record_cost(record: EpisodeRecord, config: RunConfig, prices: PriceTable) -> float | None:
    """What one episode's model calls cost, for progress as records arrive (None: a
    model without a price)."""
    total: float | None = 0.0
    for c in run_costs([record], role_models(config), prices):
        total = None if c.cost_usd is None or total is None else total + c.cost_usd
    return total


def call_costs(calls: Iterable[tuple[str, str, Usage]], prices: PriceTable) -> list[RoleCost]:
    """Cost per (role, model) of calls given as (role, model spec, usage of the call)."""
    totals = CallTotals()
    for role, spec, call in calls:
        totals.add(role, spec, call)
    return totals.costs(prices)


def agent_kind(spec: str) -> str:
    """What a run's agent spec is, in words, for a report that says why it has no cost: a
    user's own ``python/`` agent is theirs, not one of deedbench's baselines."""
    prefix = spec.partition("/")[0]
    if prefix == "baseline":
        return "a baseline agent"
    if prefix == "python":
        return f"your own agent, {spec}"
    return f"agent {spec}"


def costs_text(costs: Sequence[RoleCost]) -> str:
    """A run's model calls in a line, role by role, with the total: "agent openai/x 12
    calls $0.0100, judge openai/y 3 calls $0.0020; $0.0120 in all" ("none" without calls;
    a total "unknown" where a model has no price)."""
    if not costs:
        return "none (no model calls were recorded)"
    parts = []
    for cost in costs:
        money = "cost unknown" if cost.cost_usd is None else f"${cost.cost_usd:.4f}"
        parts.append(f"{cost.role} {cost.model} {cost.usage.calls:,} calls {money}")
    known = [c.cost_usd for c in costs if c.cost_usd is not None]
    total = "unknown in all" if len(known) < len(costs) else f"${sum(known):.4f} in all"
    return ", ".join(parts) + f"; {total}"
