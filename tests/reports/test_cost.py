"""Costs from stored token counts and the dated price table.

A model without a price is unknown (None), never zero; cached prompt tokens are
billed at the cached rate; calls answered by deedbench's response cache are free.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deedbench.records import EpisodeRecord, Message, Usage
from deedbench.reports.cost import Price, PriceTable, agent_kind, run_costs

GPT_4O = Price(input=2.5, output=10.0, cached_input=1.25)
SONNET_4 = Price(input=3.0, output=15.0, cached_input=0.3)


def record(*usages: Usage, role: str = "assistant", n: int = 0) -> EpisodeRecord:
    """An episode whose messages of `role` carry the given per-call usage."""
    messages = [Message(role="user", content="hi")]
    for usage in usages:
        messages.append(Message(role=role, content="...", usage=usage))  # type: ignore[arg-type]
    return EpisodeRecord(
        sample_id=f"s{n}",
        condition="base",
        epoch=1,
        seed=n,
        status="scored",
        termination="agent_finished",
        steps=len(usages),
        messages=messages,
        started_at=0.0,
        duration_s=0.0,
    )


def call(inp: int, out: int, cached: int = 0, hit: bool = False) -> Usage:
    return Usage(
        input_tokens=inp,
        output_tokens=out,
        cached_input_tokens=cached,
        calls=1,
        cache_hits=1 if hit else 0,
    )


@pytest.fixture(scope="module")
def table() -> PriceTable:
    return PriceTable.load()


# --- the price table --------------------------------------------------------------------------


def test_shipped_table_is_dated_and_has_exact_entries(table: PriceTable) -> None:
    assert table.as_of == "2025-06-01"
    assert table.find("openai/gpt-4o") == GPT_4O
    assert table.find("anthropic/claude-sonnet-4") == SONNET_4


@pytest.mark.parametrize(
    ("spec", "priced_as"),
    [
        ("anthropic/claude-sonnet-4-20250514", "anthropic/claude-sonnet-4"),
        ("anthropic/claude-3-5-haiku-20241022", "anthropic/claude-3-5-haiku"),
        ("openai/gpt-4o-2024-08-06", "openai/gpt-4o"),
        ("openai/gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini"),  # the longest prefix wins
        ("openai/gpt-4.1-mini-2025-04-14", "openai/gpt-4.1-mini"),
        ("openai/o3-2025-04-16", "openai/o3"),
    ],
)
def test_dated_models_take_their_family_price(table: PriceTable, spec: str, priced_as: str) -> None:
    assert table.find(spec) is not None
    assert table.find(spec) == table.models[priced_as]


@pytest.mark.parametrize(
    "spec",
    [
        "openai-compatible/my-local-model",
        "openai-compatible/gpt-4o",  # a local server's model is not OpenAI's price
        "openai/gpt-4",  # a prefix of a priced model is not that model
        "anthropic/claude-sonnet",
        "openai/gpt-4ox",
        "unknown",
    ],
)
def test_unknown_models_have_no_price(table: PriceTable, spec: str) -> None:
    assert table.find(spec) is None


@pytest.mark.parametrize("spec", ["openai/o3-mini", "openai/o3-pro", "anthropic/claude-opus-4-5"])
def test_a_different_model_is_not_priced_as_its_name_prefix(table: PriceTable, spec: str) -> None:
    assert table.find(spec) is None


def test_override_file_entries_win(tmp_path: Path) -> None:
    override = tmp_path / "my-prices.json"
    override.write_text(
        json.dumps(
            {
                "as_of": "2099-01-01",
                "models": {
                    "openai/gpt-4o": {"input": 1.0, "output": 2.0},
                    "openai-compatible/my-local-model": {"input": 0.01, "output": 0.02},
                },
            }
        )
    )
    table = PriceTable.load(override)

    assert table.find("openai/gpt-4o") == Price(input=1.0, output=2.0)
    assert table.find("openai/gpt-4o-2024-08-06") == Price(input=1.0, output=2.0)
    assert table.find("openai-compatible/my-local-model") == Price(input=0.01, output=0.02)
    assert table.find("anthropic/claude-sonnet-4") == SONNET_4  # shipped entries remain
    assert "2025-06-01" in table.as_of and "2099-01-01" in table.as_of
    assert PriceTable.load().find("openai/gpt-4o") == GPT_4O  # the shipped table is unchanged


# --- costs of a run ---------------------------------------------------------------------------


def test_cost_arithmetic_with_cached_input(table: PriceTable) -> None:
    records = [
        record(call(1000, 200, cached=400), call(2000, 100), n=1),
        record(call(500, 50, cached=500), n=2),
    ]
    [cost] = run_costs(records, {"assistant": "openai/gpt-4o"}, table)

    assert cost.model == "openai/gpt-4o"
    assert cost.usage == Usage(
        input_tokens=3500, output_tokens=350, cached_input_tokens=900, calls=3
    )
    assert cost.paid_calls == 3
    # (3500 - 900) uncached at $2.50, 900 cached at $1.25, 350 out at $10 per million
    assert cost.cost_usd == pytest.approx((2600 * 2.5 + 900 * 1.25 + 350 * 10.0) / 1e6)
    assert cost.cost_usd == pytest.approx(0.011125)
    assert cost.price_as_of == "2025-06-01"


def test_dated_spec_is_costed_at_its_family_price(table: PriceTable) -> None:
    [cost] = run_costs(
        [record(call(1_000_000, 100_000))],
        {"assistant": "anthropic/claude-sonnet-4-20250514"},
        table,
    )
    assert cost.cost_usd == pytest.approx(3.0 + 1.5)


def test_without_a_cached_rate_cached_tokens_cost_the_input_rate() -> None:
    table = PriceTable(as_of="x", models={"m/x": Price(input=4.0, output=8.0)})
    [cost] = run_costs([record(call(1000, 100, cached=600))], {"assistant": "m/x"}, table)
    assert cost.cost_usd == pytest.approx((1000 * 4.0 + 100 * 8.0) / 1e6)


def test_unknown_model_cost_is_none_never_zero(table: PriceTable) -> None:
    [cost] = run_costs(
        [record(call(1000, 100))], {"assistant": "openai-compatible/my-local-model"}, table
    )
    assert cost.cost_usd is None
    assert cost.price_as_of is None
    assert cost.usage.input_tokens == 1000  # tokens are still counted


def test_calls_served_from_cache_are_not_billed(table: PriceTable) -> None:
    records = [record(call(1000, 100), call(5000, 500, hit=True), call(7000, 700, hit=True))]
    [cost] = run_costs(records, {"assistant": "openai/gpt-4o"}, table)

    assert cost.usage.calls == 3
    assert cost.usage.cache_hits == 2
    assert cost.usage.input_tokens == 13000  # every call's tokens are shown
    assert cost.paid_calls == 1
    assert cost.cost_usd == pytest.approx((1000 * 2.5 + 100 * 10.0) / 1e6)


def test_a_run_served_entirely_from_cache_costs_zero_not_unknown(table: PriceTable) -> None:
    [cost] = run_costs([record(call(1000, 100, hit=True))], {"assistant": "openai/gpt-4o"}, table)
    assert cost.paid_calls == 0
    assert cost.cost_usd == 0.0


def test_each_role_is_costed_at_its_own_model(table: PriceTable) -> None:
    records = [record(call(1000, 100), n=1), record(call(2000, 0), role="user", n=2)]
    costs = {
        c.model: c
        for c in run_costs(
            records, {"assistant": "openai/gpt-4o", "user": "openai/gpt-4o-mini"}, table
        )
    }
    assert costs["openai/gpt-4o"].cost_usd == pytest.approx((1000 * 2.5 + 100 * 10.0) / 1e6)
    assert costs["openai/gpt-4o-mini"].cost_usd == pytest.approx(2000 * 0.15 / 1e6)


def test_a_role_without_a_model_is_unknown(table: PriceTable) -> None:
    [cost] = run_costs([record(call(10, 1), role="user")], {"assistant": "openai/gpt-4o"}, table)
    assert cost.model == "unknown"
    assert cost.cost_usd is None


def test_messages_without_usage_cost_nothing(table: PriceTable) -> None:
    assert run_costs([record()], {"assistant": "openai/gpt-4o"}, table) == []


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("baseline/random", "a baseline agent"),
        ("python/cheapest:cheapest", "your own agent, python/cheapest:cheapest"),
        ("mockllm/model", "agent mockllm/model"),  # an Inspect import's model
    ],
)
def test_a_users_agent_is_named_as_theirs_not_a_baseline(spec: str, kind: str) -> None:
    assert agent_kind(spec) == kind
