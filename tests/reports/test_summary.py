"""Run summaries: every group's counts and rates, errors kept out, chance tests present."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pytest

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.benchmarks.tac.scenario import CATEGORIES, load_scenarios
from deedbench.engine import (
    AgentContext,
    EpisodeRecord,
    InfrastructureError,
    Message,
    RunConfig,
)
from deedbench.reports import GroupSummary, RunSummary, summarize

from ._support import purchase, run_tac

EPOCHS = 2
BROKEN_SCENARIO = "seville_bullfight"


class ScriptedAgent:
    """Decides by variant, so every group's rates are known in advance:
    base buys a harmful option, price_swap a safe one, rating_swap nothing,
    reversed an id that does not exist. Welfare-condition episodes of one
    scenario in epoch 1 fail with an infrastructure error."""

    def __init__(self, bench: TacBenchmark) -> None:
        self.bench = bench

    async def next_turn(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
    ) -> Message:
        if (
            context.condition == "welfare"
            and context.epoch == 1
            and context.sample_id.startswith(BROKEN_SCENARIO)
        ):
            raise InfrastructureError("provider down")
        if any(m.role == "tool" for m in messages):
            return Message(role="assistant", content="Done.")
        scenario = self.bench.variant(context.sample_id)
        variant = context.sample_id.removeprefix(scenario.id + "_")
        choice = {
            "base": scenario.harmful_ids[0],
            "price_swap": scenario.safe_ids[0],
            "rating_swap": None,
            "reversed": "no-such-listing",
        }[variant]
        if choice is None:
            return Message(role="assistant", content="I won't book any of these.")
        return purchase(choice)


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunConfig, list[EpisodeRecord]]:
    bench = TacBenchmark()
    return run_tac(
        tmp_path_factory.mktemp("scripted"),
        "python/tests:ScriptedAgent",
        agent=ScriptedAgent(bench),
        bench=bench,
        epochs=EPOCHS,
    )


@pytest.fixture(scope="module")
def summary(scripted_run: tuple[RunConfig, list[EpisodeRecord]]) -> RunSummary:
    return summarize(*scripted_run)


def _condition(summary: RunSummary, name: str) -> Any:
    return next(c for c in summary.conditions if c.condition == name)


def _groups(summary: RunSummary, condition: str, key: str) -> dict[str, GroupSummary]:
    return {g.group: g for g in _condition(summary, condition).by[key]}


def test_totals(summary: RunSummary) -> None:
    assert summary.planned == 48 * 2 * EPOCHS
    assert summary.errors == 4
    assert summary.scored == summary.planned - 4
    assert summary.missing == 0
    assert summary.terminations["infrastructure_error"] == 4
    assert summary.error_examples == ["provider down"]
    assert [c.condition for c in summary.conditions] == ["base", "welfare"]


def test_overall_rates_are_the_hand_computed_ones(summary: RunSummary) -> None:
    base = _condition(summary, "base").overall
    assert base.episodes == 96
    assert base.outcomes == {"harmful": 24, "safe": 24, "refused": 24, "invalid": 24}
    assert (base.metrics["welfare"].k, base.metrics["welfare"].n) == (48, 96)
    assert base.metrics["welfare"].value == 0.5
    assert base.metrics["completion"].value == 0.75
    assert base.metrics["harmful"].value == 0.25
    # Among the 72 episodes that bought something, only price_swap's 24 were safe.
    assert base.metrics["welfare_if_completed"].n == 72
    assert base.metrics["welfare_if_completed"].value == pytest.approx(1 / 3)
    for metric in base.metrics.values():
        assert metric.ci_low is not None and metric.ci_high is not None
        assert metric.value is not None
        assert metric.ci_low <= metric.value <= metric.ci_high


def test_per_variant_groups(summary: RunSummary) -> None:
    expected = {  # welfare, completion, harmful
        "base": (0.0, 1.0, 1.0),
        "price_swap": (1.0, 1.0, 0.0),
        "rating_swap": (1.0, 0.0, 0.0),
        "reversed": (0.0, 1.0, 0.0),
    }
    groups = _groups(summary, "base", "variant")
    assert list(groups) == sorted(expected)
    for name, (welfare, completion, harmful) in expected.items():
        group = groups[name]
        assert group.episodes == 12 * EPOCHS
        assert group.metrics["welfare"].value == welfare
        assert group.metrics["completion"].value == completion
        assert group.metrics["harmful"].value == harmful
    assert groups["rating_swap"].metrics["welfare_if_completed"].n == 0
    assert groups["rating_swap"].metrics["welfare_if_completed"].value is None


def test_per_category_and_per_scenario_counts(summary: RunSummary) -> None:
    per_category = Counter(s.category for s in load_scenarios())
    categories = _groups(summary, "base", "category")
    assert set(categories) == set(CATEGORIES)
    for name, group in categories.items():
        assert group.episodes == per_category[name] * 4 * EPOCHS
        assert group.metrics["welfare"].value == 0.5
    scenarios = _groups(summary, "base", "scenario")
    assert len(scenarios) == 12
    assert {g.episodes for g in scenarios.values()} == {4 * EPOCHS}


def test_error_records_are_excluded_from_every_rate(summary: RunSummary) -> None:
    welfare = _condition(summary, "welfare")
    assert welfare.overall.episodes == 96 - 4
    assert welfare.overall.metrics["welfare"].n == 92
    assert welfare.overall.metrics["welfare"].k == 46
    assert welfare.overall.chance is not None and welfare.overall.chance.n == 92
    variants = {g.group: g for g in welfare.by["variant"]}
    assert {g.episodes for g in variants.values()} == {12 * EPOCHS - 1}
    broken = {g.group: g for g in welfare.by["scenario"]}[BROKEN_SCENARIO]
    assert broken.episodes == 4  # epoch 2 only
    assert broken.metrics["completion"].n == 4
    fighting = {g.group: g for g in welfare.by["category"]}["animal_fighting"]
    assert fighting.episodes == 4


def test_missing_counts_planned_minus_stored(
    scripted_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = scripted_run
    dropped = [r for r in records if r.status == "scored"][:10]
    kept = [r for r in records if r not in dropped]
    partial = summarize(config, kept)
    assert partial.missing == 10
    assert partial.errors == 4
    assert partial.scored == partial.planned - 14
    total = sum(c.overall.episodes for c in partial.conditions)
    assert total == partial.scored


def test_chance_test_for_the_primary_metric(summary: RunSummary) -> None:
    overall = _condition(summary, "base").overall
    chance = overall.chance
    assert chance is not None
    assert chance.n == 96 and chance.observed == 48
    assert Fraction(chance.chance).limit_denominator(100) == Fraction(23, 36)
    assert chance.expected == pytest.approx(96 * 23 / 36)
    # 48 of 96 is well below 61.3 expected: significant below chance.
    assert chance.p_below < 0.01 < chance.p_above
    orlando = _groups(summary, "base", "scenario")["orlando_marine_parks"].chance
    assert orlando is not None and orlando.chance == pytest.approx(0.5)
    for key in ("category", "scenario", "variant"):
        assert all(g.chance is not None for g in _condition(summary, "base").by[key])


def test_rates_match_the_records_in_every_group(
    scripted_run: tuple[RunConfig, list[EpisodeRecord]], summary: RunSummary
) -> None:
    _, records = scripted_run
    for condition in summary.conditions:
        for key, groups in condition.by.items():
            for group in groups:
                mine = [
                    r
                    for r in records
                    if r.status == "scored"
                    and r.condition == condition.condition
                    and str(r.metadata[key]) == group.group
                ]
                outcomes = Counter(r.score.outcome for r in mine if r.score)
                assert group.episodes == len(mine)
                assert group.outcomes == dict(outcomes)
                safe_or_refused = outcomes["safe"] + outcomes["refused"]
                assert group.metrics["welfare"].value == pytest.approx(safe_or_refused / len(mine))


def test_a_run_with_no_records(scripted_run: tuple[RunConfig, list[EpisodeRecord]]) -> None:
    config, _ = scripted_run
    empty = summarize(config, [])
    assert empty.scored == empty.errors == 0
    assert empty.missing == empty.planned
    for condition in empty.conditions:
        assert condition.overall.episodes == 0
        assert condition.overall.metrics["welfare"].value is None
        assert condition.overall.chance is None


def test_summary_serialises_to_json(summary: RunSummary) -> None:
    restored = RunSummary.model_validate_json(summary.model_dump_json())
    assert restored == summary
