"""Run summaries: every group's counts and rates, errors kept out, chance tests present."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from deedbench.audit import AuditResult
from deedbench.benchmarks.tac import TacBenchmark
from deedbench.benchmarks.tac.scenario import CATEGORIES, load_scenarios
from deedbench.engine import AgentContext
from deedbench.errors import InfrastructureError
from deedbench.records import EpisodeRecord, Message, RunConfig, Usage
from deedbench.reports import GroupSummary, RunSummary, summarize
from deedbench.reports.summary import Covariate, RunTally
from deedbench.stats import cluster_bootstrap_rate

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
    assert [(k.message, k.count) for k in summary.error_kinds] == [("provider down", 4)]
    assert [c.condition for c in summary.conditions] == ["base", "welfare"]
    assert [c.errors for c in summary.conditions] == [0, 4]
    base, welfare = summary.conditions
    assert "infrastructure_error" not in base.terminations
    assert welfare.terminations["infrastructure_error"] == 4
    assert sum(welfare.terminations.values()) == 96


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


# ---- cluster intervals, flips, contrasts, covariates -------------------------------


def _welfare_values(records: list[EpisodeRecord], condition: str) -> tuple[list[float], list[str]]:
    mine = [r for r in records if r.condition == condition and r.score is not None]
    return (
        [r.score.values["welfare"] for r in mine if r.score],
        [r.metadata["scenario"] for r in mine],
    )


def test_cluster_intervals_resample_scenarios(
    summary: RunSummary, scripted_run: tuple[RunConfig, list[EpisodeRecord]]
) -> None:
    _, records = scripted_run
    overall = _condition(summary, "base").overall
    values, clusters = _welfare_values(records, "base")
    assert overall.clustered["welfare"] == cluster_bootstrap_rate(values, clusters)
    assert overall.clustered["welfare"].clusters == 12
    assert overall.clustered["welfare"].n == overall.metrics["welfare"].n
    # every scenario has the same rate (1/2), so resampling scenarios cannot move it
    assert (overall.clustered["welfare"].ci_low, overall.clustered["welfare"].ci_high) == (
        0.5,
        0.5,
    )
    assert overall.cluster_chance is not None and overall.cluster_chance.clusters == 12
    # one scenario is one cluster: an interval over clusters is undefined, not invented
    one = _groups(summary, "base", "scenario")["seville_bullfight"].clustered["welfare"]
    assert one.clusters == 1 and one.ci_low is None and one.value == 0.5
    assert summary.cluster_by == "scenario"


def test_every_variant_flips_the_scripted_choice(summary: RunSummary) -> None:
    base = {f.variant: f for f in _condition(summary, "base").flips}
    assert sorted(base) == ["price_swap", "rating_swap", "reversed"]
    for flip in base.values():
        assert (flip.flips.flips, flip.flips.n) == (12 * EPOCHS, 12 * EPOCHS)
        assert flip.clustered.clusters == 12
    # the broken scenario's epoch-1 welfare episodes are errors: one key fewer per variant
    welfare = {f.variant: f for f in _condition(summary, "welfare").flips}
    assert {f.flips.n for f in welfare.values()} == {12 * EPOCHS - 1}


@pytest.mark.parametrize("groupings", [["category"], ["variant"], []])
def test_a_summary_of_some_groupings_has_the_same_figures_for_those(
    scripted_run: tuple[RunConfig, list[EpisodeRecord]], summary: RunSummary, groupings: list[str]
) -> None:
    """What a run's closing tables show is computed alone; the rest is left out, not
    approximated. Flips come with their `flip_by` key (TAC's variant) only."""
    config, records = scripted_run
    part = RunTally.of(config, records).summary(groupings=groupings)
    for whole, some in zip(summary.conditions, part.conditions, strict=True):
        assert list(some.by) == groupings
        assert some.by == {key: whole.by[key] for key in groupings}
        assert some.flips == (whole.flips if "variant" in groupings else [])
        assert (some.overall, some.versus_first) == (whole.overall, whole.versus_first)
    assert part.costs == summary.costs and part.error_kinds == summary.error_kinds


def test_a_content_driven_agent_never_flips(tmp_path: Path) -> None:
    summary = summarize(*run_tac(tmp_path, "baseline/relevance", epochs=1))
    flips = _condition(summary, "base").flips
    assert [f.variant for f in flips] == ["price_swap", "rating_swap", "reversed"]
    assert all(f.flips.flips == 0 and f.flips.n == 12 for f in flips)


def test_conditions_are_paired_on_sample_and_epoch(summary: RunSummary) -> None:
    assert _condition(summary, "base").versus_first is None
    versus = _condition(summary, "welfare").versus_first
    assert versus is not None and (versus.a, versus.b, versus.metric) == (
        "base",
        "welfare",
        "welfare",
    )
    # the agent ignores the condition: no discordant pair; errors drop 4 keys
    assert versus.difference.n_shared == 96 - 4
    assert versus.difference.value == 0.0
    assert (versus.mcnemar.b01, versus.mcnemar.b10, versus.mcnemar.p_value) == (0, 0, 1.0)


def test_a_welfare_prompt_that_helps_shows_in_the_contrast(
    scripted_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = scripted_run
    helped = [
        r.model_copy(update={"score": r.score.model_copy(update={"values": {"welfare": 1.0}})})
        if r.condition == "welfare" and r.score is not None
        else r
        for r in records
    ]
    versus = _condition(summarize(config, helped), "welfare").versus_first
    assert versus is not None
    # base: welfare 1/2 on every scenario; welfare: 1 everywhere -> +0.5 on shared keys
    assert versus.difference.value == pytest.approx(0.5)
    assert versus.mcnemar.b01 == 46 and versus.mcnemar.b10 == 0
    assert versus.mcnemar.p_value < 1e-10
    low, high = versus.difference.ci_low, versus.difference.ci_high
    assert low is not None and high is not None and low <= 0.5 <= high


def test_covariate_correlation_over_scenarios(
    scripted_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = scripted_run
    names = sorted({r.metadata["scenario"] for r in records})
    rank = {name: i for i, name in enumerate(names)}
    # welfare 1 for the first half of scenarios (alphabetically), 0 for the rest
    shaped = [
        r.model_copy(
            update={
                "score": r.score.model_copy(
                    update={
                        "values": {
                            "welfare": float(rank[r.metadata["scenario"]] < 6),
                            "finished": 1.0,
                        }
                    }
                )
            }
        )
        if r.score is not None
        else r
        for r in records
    ]
    salience = {name: -float(rank[name]) for name in names[:-1]}  # last one missing
    summary = summarize(config, shaped, covariate=Covariate(name="salience", values=salience))
    result = _condition(summary, "base").covariate
    assert result is not None and result.name == "salience" and result.metric == "welfare"
    assert result.unmatched == [names[-1]]
    assert result.correlation.n == 11
    assert result.correlation.rho is not None and result.correlation.rho > 0.8
    # a constant rate has no rank correlation: undefined, with the reason
    flat_result = _condition(
        summarize(config, records, covariate=Covariate(name="s", values=salience)), "base"
    ).covariate
    assert flat_result is not None and flat_result.correlation.rho is None
    assert flat_result.correlation.reason


def test_judge_calls_are_costed_and_audits_summarized(
    scripted_run: tuple[RunConfig, list[EpisodeRecord]],
) -> None:
    config, records = scripted_run
    scored = [r for r in records if r.status == "scored"][:3]
    audits = [
        AuditResult(
            run_id=config.run_id,
            sample_id=r.sample_id,
            condition=r.condition,
            epoch=r.epoch,
            judge_spec="openai/gpt-4o",
            rubric_version="1",
            usage={"judge": Usage(input_tokens=1000, output_tokens=100, calls=1, cache_hits=i)},
        )
        for i, r in enumerate(scored)
    ]
    summary = summarize(config, records, audits=audits)
    [judge] = [c for c in summary.costs if c.role == "audit judge"]  # not τ²'s judge
    assert judge.model == "openai/gpt-4o" and judge.usage.calls == 3
    assert judge.paid_calls == 1  # the other two came from the response cache
    assert judge.cost_usd == pytest.approx((1000 * 2.5 + 100 * 10.0) / 1e6)
    assert [(a.condition, a.episodes, a.judge_spec) for a in summary.audits] == [
        ("base", 3, "openai/gpt-4o")
    ]


def test_groups_are_listed_in_natural_order() -> None:
    """τ²'s tasks by number, not as text (0 1 10 11 ... 2 20), in every report's tables."""
    from tests.engine.test_store import make_config, make_record

    from deedbench.reports.summary import group_order

    config = make_config()
    names = [str(n) for n in (2, 10, 0, 1, 11, 20, 3)] + ["task_9", "task_10", "Task_9b"]
    records = [
        make_record(f"s{i}", "plain").model_copy(update={"metadata": {"kind": name}})
        for i, name in enumerate(names)
    ]
    summary = RunTally.of(config, records).summary()
    [plain] = [c for c in summary.conditions if c.condition == "plain"]
    listed = [g.group for g in plain.by["kind"]]
    assert listed == ["0", "1", "2", "3", "10", "11", "20", "task_9", "Task_9b", "task_10"]
    assert sorted(["a2", "a02", "A2"], key=group_order) == ["A2", "a02", "a2"]
