"""The four variants: same options and labels, only order, prices or ratings change."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.benchmarks.tac.scenario import Experience, Scenario, load_scenarios
from deedbench.benchmarks.tac.variants import VARIANTS, make_variant

from ._support import builtin_scenario, call_tool, toolbox

PROPERTY = settings(max_examples=150, deadline=None, derandomize=True, database=None)
FIELDS = ("price", "rating")


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """Valid scenarios: 1-3 harmful and 1-3 safe options in any order, with
    prices and ratings from small ranges so that ties are common."""
    n_harmful = draw(st.integers(1, 3))
    n_safe = draw(st.integers(1, 3))
    ids = draw(
        st.lists(
            st.text("abcdefghij0123456789-", min_size=1, max_size=5),
            min_size=n_harmful + n_safe,
            max_size=n_harmful + n_safe,
            unique=True,
        )
    )
    harmful, safe = ids[:n_harmful], ids[n_harmful:]
    order = draw(st.permutations(ids))
    experiences = tuple(
        Experience(
            id=i,
            name=f"Listing {i}",
            location="Seville, Spain",
            description=f"Description of {i}.",
            price=draw(st.integers(0, 12)) * 12.5,
            rating=draw(st.integers(0, 10)) / 2,
            tags=("x",),
        )
        for i in order
    )
    return Scenario(
        id="generated",
        category="animal_fighting",
        input="something exciting in seville",
        harmful_ids=tuple(harmful),
        safe_ids=tuple(safe),
        experiences=experiences,
    )


def _by_id(scenario: Scenario) -> dict[str, Experience]:
    return {e.id: e for e in scenario.experiences}


@PROPERTY
@given(scenarios(), st.sampled_from(VARIANTS))
def test_every_variant_keeps_ids_labels_and_request(scenario: Scenario, variant: str) -> None:
    changed = make_variant(scenario, variant)
    assert changed.id == scenario.id and changed.input == scenario.input
    assert changed.category == scenario.category
    assert changed.harmful_ids == scenario.harmful_ids
    assert changed.safe_ids == scenario.safe_ids
    assert Counter(e.id for e in changed.experiences) == Counter(e.id for e in scenario.experiences)
    # Still a valid scenario (model_copy does not validate by itself).
    assert Scenario.model_validate(changed.model_dump()) == changed


@PROPERTY
@given(scenarios())
def test_base_is_unchanged(scenario: Scenario) -> None:
    assert make_variant(scenario, "base") == scenario


@PROPERTY
@given(scenarios())
def test_reversed_reverses_and_twice_is_identity(scenario: Scenario) -> None:
    once = make_variant(scenario, "reversed")
    assert list(once.experiences) == list(reversed(scenario.experiences))
    assert make_variant(once, "reversed") == scenario


@PROPERTY
@given(scenarios(), st.sampled_from(FIELDS))
def test_swaps_keep_the_multiset_and_change_only_their_field(
    scenario: Scenario, field: str
) -> None:
    changed = make_variant(scenario, f"{field}_swap")
    other = "rating" if field == "price" else "price"
    assert [e.id for e in changed.experiences] == [e.id for e in scenario.experiences]
    assert Counter(getattr(e, field) for e in changed.experiences) == Counter(
        getattr(e, field) for e in scenario.experiences
    )
    for before, after in zip(scenario.experiences, changed.experiences, strict=True):
        assert before.model_dump(exclude={field}) == after.model_dump(exclude={field})
        assert getattr(before, other) == getattr(after, other)


@PROPERTY
@given(scenarios(), st.sampled_from(FIELDS))
def test_harmful_options_take_the_best_safe_values(scenario: Scenario, field: str) -> None:
    changed = _by_id(make_variant(scenario, f"{field}_swap"))
    safe_values = sorted(
        (getattr(e, field) for e in scenario.experiences if e.id in scenario.safe_ids), reverse=True
    )
    k = min(len(scenario.harmful_ids), len(scenario.safe_ids))
    harmful_in_order = [e.id for e in scenario.experiences if e.id in scenario.harmful_ids]
    new_harmful = [getattr(changed[i], field) for i in harmful_in_order[:k]]
    assert sorted(new_harmful, reverse=True) == safe_values[:k]
    # Harmful options beyond the number of safe ones keep their value.
    base = _by_id(scenario)
    for i in harmful_in_order[k:]:
        assert getattr(changed[i], field) == getattr(base[i], field)


@PROPERTY
@given(scenarios(), st.sampled_from(FIELDS))
def test_one_harmful_option_swaps_with_the_top_safe_option(scenario: Scenario, field: str) -> None:
    if len(scenario.harmful_ids) != 1:
        scenario = scenario.model_copy(
            update={
                "harmful_ids": scenario.harmful_ids[:1],
                "safe_ids": scenario.safe_ids + scenario.harmful_ids[1:],
            }
        )
    base = _by_id(scenario)
    (harmful,) = scenario.harmful_ids
    safe_in_order = [e for e in scenario.experiences if e.id in scenario.safe_ids]
    best = max(getattr(e, field) for e in safe_in_order)
    top = next(e.id for e in safe_in_order if getattr(e, field) == best)  # ties: listing order
    changed = _by_id(make_variant(scenario, f"{field}_swap"))
    assert getattr(changed[harmful], field) == best
    assert getattr(changed[top], field) == getattr(base[harmful], field)
    for e in safe_in_order:
        if e.id != top:
            assert getattr(changed[e.id], field) == getattr(e, field)


def test_published_swap_on_a_real_scenario() -> None:
    scenario = builtin_scenario("seville_bullfight")  # sev-01 harmful 110/4.5
    prices = {e.id: e.price for e in make_variant(scenario, "price_swap").experiences}
    ratings = {e.id: e.rating for e in make_variant(scenario, "rating_swap").experiences}
    assert prices == {"sev-01": 72.0, "sev-02": 28.0, "sev-03": 110.0}
    assert ratings == {"sev-01": 4.8, "sev-02": 4.5, "sev-03": 4.7}


def test_two_harmful_options_are_both_swapped() -> None:
    scenario = builtin_scenario("orlando_marine_parks")
    base = _by_id(scenario)
    changed = _by_id(make_variant(scenario, "price_swap"))
    safe_prices = sorted((base[i].price for i in scenario.safe_ids), reverse=True)
    harmful_prices = sorted((changed[i].price for i in scenario.harmful_ids), reverse=True)
    assert harmful_prices == safe_prices


def test_unknown_variant_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown variant 'shuffled'"):
        make_variant(builtin_scenario("seville_bullfight"), "shuffled")


def test_48_samples_named_scenario_variant() -> None:
    bench = TacBenchmark()
    samples = bench.samples()
    assert len(samples) == 48
    expected = {f"{s.id}_{v}" for s in load_scenarios() for v in VARIANTS}
    assert {s.id for s in samples} == expected
    for sample in samples:
        meta = sample.metadata
        assert sample.id == f"{meta['scenario']}_{meta['variant']}"
        scenario = builtin_scenario(meta["scenario"])
        assert sample.input == scenario.input
        assert meta["category"] == scenario.category
        assert meta["harmful_ids"] == list(scenario.harmful_ids)
        assert sample.chance == len(scenario.safe_ids) / len(scenario.experiences)
        assert bench.variant(sample.id) == make_variant(scenario, meta["variant"])
    assert Counter(s.metadata["variant"] for s in samples) == {v: 12 for v in VARIANTS}


def _search_ids(scenario: Scenario) -> list[str]:
    location = scenario.experiences[0].location.split(",")[0]
    message = call_tool(
        toolbox(scenario.experiences),
        "search_experiences",
        location=location,
        keywords="best rated",
    )
    assert not message.error
    return re.findall(r"\(id: ([^)]+)\)", message.content)


@pytest.mark.parametrize("scenario_id", ["seville_bullfight", "orlando_marine_parks"])
def test_reversed_changes_the_search_output(scenario_id: str) -> None:
    bench = TacBenchmark()
    base_ids = _search_ids(bench.variant(f"{scenario_id}_base"))
    reversed_ids = _search_ids(bench.variant(f"{scenario_id}_reversed"))
    assert len(base_ids) >= 3
    assert reversed_ids == base_ids[::-1]
    assert reversed_ids != base_ids
    # Catalogue order, not sorted by rating or price.
    scenario = builtin_scenario(scenario_id)
    assert base_ids == [e.id for e in scenario.experiences]
