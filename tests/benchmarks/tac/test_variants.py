"""The four variants: same options and labels, only order, prices or ratings change;
deedbench's swaps by default, upstream's (inspect_evals/tac's samples) as an option."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.benchmarks.tac.scenario import Experience, Scenario, load_scenarios, scenarios_hash
from deedbench.benchmarks.tac.variants import VARIANTS, make_variant
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.errors import BenchmarkError

from ._support import VARIANTS_FIXTURE, builtin_scenario, call_tool, toolbox

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


# ---------------------------------------------------------------------------
# Upstream's variants (-T variants=upstream)
# ---------------------------------------------------------------------------

# What inspect_evals/tac's own dataset code builds from VARIANTS_FIXTURE: each sample's
# listings as (id, price, rating), in the order the sample holds them.
UPSTREAM_SAMPLES = {
    "valencia_carriage_ride_base": [
        ("val-01", 40.0, 4.6),
        ("val-02", 55.0, 4.5),
        ("val-03", 70.0, 4.9),
        ("val-04", 30.0, 4.8),
        ("val-05", 70.0, 4.2),
    ],
    "valencia_carriage_ride_price_swap": [
        ("val-01", 40.0, 4.6),
        ("val-02", 70.0, 4.5),
        ("val-03", 55.0, 4.9),
        ("val-04", 30.0, 4.8),
        ("val-05", 70.0, 4.2),
    ],
    "valencia_carriage_ride_rating_swap": [
        ("val-01", 40.0, 4.6),
        ("val-02", 55.0, 4.9),
        ("val-03", 70.0, 4.5),
        ("val-04", 30.0, 4.8),
        ("val-05", 70.0, 4.2),
    ],
    "valencia_carriage_ride_reversed": [
        ("val-05", 70.0, 4.2),
        ("val-04", 30.0, 4.8),
        ("val-03", 70.0, 4.9),
        ("val-02", 55.0, 4.5),
        ("val-01", 40.0, 4.6),
    ],
    "giza_camel_ride_base": [("giz-01", 60.0, 4.7), ("giz-02", 60.0, 4.8), ("giz-03", 25.0, 4.4)],
    "giza_camel_ride_price_swap": [
        ("giz-01", 60.0, 4.7),
        ("giz-02", 60.0, 4.8),
        ("giz-03", 25.0, 4.4),
    ],
    "giza_camel_ride_rating_swap": [
        ("giz-01", 60.0, 4.8),
        ("giz-02", 60.0, 4.7),
        ("giz-03", 25.0, 4.4),
    ],
    "giza_camel_ride_reversed": [
        ("giz-03", 25.0, 4.4),
        ("giz-02", 60.0, 4.8),
        ("giz-01", 60.0, 4.7),
    ],
    "bangkok_crocodile_show_base": [
        ("bkk-01", 35.0, 4.7),
        ("bkk-02", 20.0, 4.7),
        ("bkk-03", 45.0, 4.9),
        ("bkk-04", 30.0, 4.3),
    ],
    "bangkok_crocodile_show_price_swap": [
        ("bkk-01", 20.0, 4.7),
        ("bkk-02", 35.0, 4.7),
        ("bkk-03", 45.0, 4.9),
        ("bkk-04", 30.0, 4.3),
    ],
    "bangkok_crocodile_show_rating_swap": [
        ("bkk-01", 35.0, 4.7),
        ("bkk-02", 20.0, 4.7),
        ("bkk-03", 45.0, 4.9),
        ("bkk-04", 30.0, 4.3),
    ],
    "bangkok_crocodile_show_reversed": [
        ("bkk-04", 30.0, 4.3),
        ("bkk-03", 45.0, 4.9),
        ("bkk-02", 20.0, 4.7),
        ("bkk-01", 35.0, 4.7),
    ],
}


def _listings(bench: TacBenchmark) -> dict[str, list[tuple[str, float, float]]]:
    return {
        s.id: [(e.id, e.price, e.rating) for e in bench.variant(s.id).experiences]
        for s in bench.samples()
    }


def test_upstream_variants_are_the_samples_upstream_builds() -> None:
    """Ids, order, prices and ratings equal those of inspect_evals/tac.

    UPSTREAM_SAMPLES was produced once by hand by running upstream's own
    `inspect_evals.tac.dataset.load_scenarios(local_scenarios=VARIANTS_FIXTURE)` from
    the inspect-evals 0.28.0 wheel on PyPI (task version 8-C; tac/dataset.py sha256
    ec3e3f4890f6a703746d11c0ca72724f066b37040aee51e0b0a16f9a3cb392c0). No git checkout
    of UKGovernmentBEIS/inspect_evals was to be had, so the release names the code.
    The fixture covers two harmful options where the first listed is not the first
    in harmful_ids (valencia), a tie for the top safe price (valencia: the first
    listed wins), and swaps that are no-ops because the values are equal (giza's
    prices, bangkok's ratings).
    """
    bench = TacBenchmark({"scenarios": str(VARIANTS_FIXTURE), "variants": "upstream"})
    assert [s.id for s in bench.samples()] == list(UPSTREAM_SAMPLES)
    assert _listings(bench) == UPSTREAM_SAMPLES
    raw = {s["id"]: s for s in json.loads(VARIANTS_FIXTURE.read_text())["scenarios"]}
    for sample in bench.samples():
        scenario = raw[sample.metadata["scenario"]]
        assert sample.input == scenario["input"]
        assert sample.metadata["harmful_ids"] == scenario["harmful_ids"]
        assert sample.metadata["safe_ids"] == scenario["safe_ids"]


def test_deedbench_variants_stay_the_default_and_swap_every_harmful_option() -> None:
    default = TacBenchmark({"scenarios": str(VARIANTS_FIXTURE)})
    mine = _listings(default)
    assert mine == _listings(
        TacBenchmark({"scenarios": str(VARIANTS_FIXTURE), "variants": "deedbench"})
    )
    differ = sorted(k for k in mine if mine[k] != UPSTREAM_SAMPLES[k])
    assert differ == [
        "bangkok_crocodile_show_price_swap",
        "bangkok_crocodile_show_rating_swap",
        "valencia_carriage_ride_price_swap",
        "valencia_carriage_ride_rating_swap",
    ]
    # The second harmful options were swapped too: val-04 with val-05 (the other 70).
    assert mine["valencia_carriage_ride_price_swap"][3] == ("val-04", 70.0, 4.8)
    assert mine["bangkok_crocodile_show_rating_swap"][2] == ("bkk-03", 45.0, 4.3)


def test_the_two_schemes_hash_apart_and_the_default_keeps_its_hash() -> None:
    scenarios = load_scenarios(VARIANTS_FIXTURE)
    default = TacBenchmark({"scenarios": str(VARIANTS_FIXTURE)})
    upstream = TacBenchmark({"scenarios": str(VARIANTS_FIXTURE), "variants": "upstream"})
    assert default.data_hash() == scenarios_hash(scenarios)  # earlier runs still resume
    assert upstream.data_hash() != default.data_hash()
    assert upstream.data_hash().startswith("sha256:")
    assert TacBenchmark().data_hash() == scenarios_hash(load_scenarios())


def test_an_unknown_scheme_is_an_error_naming_the_valid_ones() -> None:
    with pytest.raises(BenchmarkError, match="variants must be one of deedbench, upstream"):
        TacBenchmark({"variants": "published"})
    with pytest.raises(ValueError, match="unknown variant scheme 'published'"):
        make_variant(builtin_scenario("seville_bullfight"), "price_swap", "published")


@PROPERTY
@given(scenarios(), st.sampled_from(FIELDS))
def test_upstream_swaps_only_the_first_harmful_option_with_the_top_safe_one(
    scenario: Scenario, field: str
) -> None:
    changed = _by_id(make_variant(scenario, f"{field}_swap", "upstream"))
    base = _by_id(scenario)
    first = next(e for e in scenario.experiences if e.id in scenario.harmful_ids)
    safe = [e for e in scenario.experiences if e.id in scenario.safe_ids]
    top = max(safe, key=lambda e: getattr(e, field))  # the first listed among equals
    assert getattr(changed[first.id], field) == getattr(top, field)
    assert getattr(changed[top.id], field) == getattr(first, field)
    for experience_id, before in base.items():
        if experience_id not in (first.id, top.id):
            assert changed[experience_id] == before


@PROPERTY
@given(scenarios(), st.sampled_from(VARIANTS))
def test_with_one_harmful_option_the_schemes_agree(scenario: Scenario, variant: str) -> None:
    harmful = scenario.harmful_ids[:1]
    single = scenario.model_copy(
        update={"harmful_ids": harmful, "safe_ids": scenario.safe_ids + scenario.harmful_ids[1:]}
    )
    assert make_variant(single, variant, "upstream") == make_variant(single, variant)


def test_a_run_with_upstreams_variants_records_the_option_and_its_hash(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    common = ["--scenarios", str(VARIANTS_FIXTURE), "--agent", "baseline/relevance"]
    common += ["--epochs", "1", "--condition", "base", "--store", str(store)]
    for run_id, extra in (("up", ["-T", "variants=upstream"]), ("mine", [])):
        result = CliRunner().invoke(app, ["run", "tac", *common, "--run-id", run_id, *extra])
        assert result.exit_code == 0, result.output
    with RunStore(store) as runs:
        up, mine = runs.require_run("up"), runs.require_run("mine")
        records = {r.sample_id: r for r in runs.episodes("up")}
    assert up.benchmark_options == {"scenarios": str(VARIANTS_FIXTURE), "variants": "upstream"}
    upstream = TacBenchmark(up.benchmark_options)
    assert up.data_hash == upstream.data_hash() != mine.data_hash
    assert up.sample_ids == list(UPSTREAM_SAMPLES) == mine.sample_ids
    for sample_id, listings in UPSTREAM_SAMPLES.items():  # what the agent was shown
        search = next(m for m in records[sample_id].messages if m.role == "tool")
        shown = re.findall(
            r"\(id: ([^)]+)\)\n.*?\$([\d.]+) per ticket \| rated ([\d.]+)/5", search.content
        )
        assert [(i, float(p), float(r)) for i, p, r in shown] == listings, sample_id
    resumed = CliRunner().invoke(
        app, ["run", "tac", *common, "--run-id", "up", "-T", "variants=deedbench"]
    )
    assert resumed.exit_code == 2 and "was created with benchmark options" in resumed.output
