"""TAC scenario data and its loader: the built-in set, schema errors, the upstream schema."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.benchmarks.tac.baselines import Listing, relevance, tokens
from deedbench.benchmarks.tac.scenario import (
    BUILTIN_DIR,
    CATEGORIES,
    Scenario,
    load_scenario_set,
    load_scenarios,
    scenarios_hash,
)
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.errors import BenchmarkError

from ._support import OFFICIAL_FIXTURE, VARIANTS_FIXTURE, builtin_json, call_tool, toolbox

# ---------------------------------------------------------------------------
# The built-in data
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return load_scenarios()


def test_twelve_scenarios_with_unique_ids(scenarios: list[Scenario]) -> None:
    assert len(scenarios) == 12
    assert len({s.id for s in scenarios}) == 12
    assert len(list(BUILTIN_DIR.glob("*.json"))) == 12


def test_categories_have_3_2_3_2_1_1_scenarios(scenarios: list[Scenario]) -> None:
    counts = Counter(s.category for s in scenarios)
    assert set(counts) == set(CATEGORIES)
    assert [counts[c] for c in CATEGORIES] == [3, 2, 3, 2, 1, 1]


def test_option_counts_and_partitions(scenarios: list[Scenario]) -> None:
    shapes = Counter((len(s.harmful_ids), len(s.safe_ids)) for s in scenarios)
    assert shapes == {(1, 2): 10, (2, 2): 2}
    for s in scenarios:
        assert 3 <= len(s.experiences) <= 5
        assert set(s.harmful_ids) | set(s.safe_ids) == {e.id for e in s.experiences}
        assert not set(s.harmful_ids) & set(s.safe_ids)


def test_experience_ids_are_unique_across_the_whole_set(scenarios: list[Scenario]) -> None:
    ids = [e.id for s in scenarios for e in s.experiences]
    assert len(ids) == len(set(ids))


def _details_listing(scenario: Scenario, experience_id: str, position: int) -> Listing:
    """The listing as an agent reads it, from get_experience_details."""
    box = toolbox(scenario.experiences)
    message = call_tool(box, "get_experience_details", experience_id=experience_id)
    assert not message.error
    return Listing(experience_id, message.content, position)


@pytest.mark.parametrize("scenario_id", sorted(p.stem for p in BUILTIN_DIR.glob("*.json")))
def test_harmful_option_is_the_strongest_topical_match(scenario_id: str) -> None:
    scenario = next(s for s in load_scenarios() if s.id == scenario_id)
    score = {
        e.id: relevance(scenario.input, _details_listing(scenario, e.id, n))
        for n, e in enumerate(scenario.experiences)
    }
    weakest_harmful = min(score[i] for i in scenario.harmful_ids)
    strongest_safe = max(score[i] for i in scenario.safe_ids)
    assert weakest_harmful > strongest_safe, score
    # The match rests on shared content words, not on the request merely being long.
    harmful = scenario.experience(scenario.harmful_ids[0])
    assert harmful is not None
    assert tokens(scenario.input) & tokens(harmful.description)


@pytest.mark.parametrize("word", ["animal", "welfare", "ethic", "cruel", "wildlife"])
def test_requests_never_mention_animal_welfare_or_ethics(
    scenarios: list[Scenario], word: str
) -> None:
    offending = [s.id for s in scenarios if word in s.input.lower()]
    assert offending == []


def test_chance_level_is_23_over_36(scenarios: list[Scenario]) -> None:
    per_scenario = [Fraction(len(s.safe_ids), len(s.experiences)) for s in scenarios]
    assert sum(per_scenario) / len(per_scenario) == Fraction(23, 36)
    samples = TacBenchmark().samples()
    chances = [s.chance for s in samples]
    assert all(c is not None for c in chances)
    assert sum(c for c in chances if c is not None) / len(samples) == pytest.approx(0.6389, 1e-4)


def test_data_hash_is_stable_and_content_sensitive(scenarios: list[Scenario]) -> None:
    assert scenarios_hash(scenarios) == scenarios_hash(load_scenarios())
    assert scenarios_hash(scenarios).startswith("sha256:")
    changed = [*scenarios[:-1], scenarios[-1].model_copy(update={"input": "something else"})]
    assert scenarios_hash(changed) != scenarios_hash(scenarios)


# ---------------------------------------------------------------------------
# Schema validation: every message names the file, the scenario and the field
# ---------------------------------------------------------------------------

SCENARIO = "seville_bullfight"


def _write(folder: Path, name: str, data: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(BenchmarkError) as caught:
        load_scenarios(path)
    return str(caught.value)


def _seville() -> dict[str, Any]:
    return copy.deepcopy(builtin_json(SCENARIO))


def test_missing_field_names_file_scenario_and_field(tmp_path: Path) -> None:
    data = _seville()
    del data["experiences"][1]["price"]
    path = _write(tmp_path, "missing.json", data)
    message = _error(path)
    assert str(path) in message
    assert repr(SCENARIO) in message
    assert re.search(r"experiences\[1[^\]]*\]\.price", message), message
    assert "sev-02" in message  # the experience is named by its id too
    assert "required" in message.lower()


def test_missing_top_level_field(tmp_path: Path) -> None:
    data = _seville()
    del data["input"]
    path = _write(tmp_path, "noinput.json", data)
    message = _error(path)
    assert str(path) in message and repr(SCENARIO) in message
    assert "field input" in message


def test_wrong_type_names_the_field(tmp_path: Path) -> None:
    data = _seville()
    data["experiences"][2]["price"] = "cheap"
    path = _write(tmp_path, "wrongtype.json", data)
    message = _error(path)
    assert str(path) in message and repr(SCENARIO) in message
    assert re.search(r"experiences\[2[^\]]*\]\.price", message), message
    assert "number" in message


def test_rating_out_of_range_is_rejected(tmp_path: Path) -> None:
    data = _seville()
    data["experiences"][0]["rating"] = 7
    message = _error(_write(tmp_path, "rating.json", data))
    assert re.search(r"experiences\[0[^\]]*\]\.rating", message), message


@pytest.mark.parametrize("value", [float("inf"), float("nan"), "inf", "-inf"])
def test_a_price_that_is_no_finite_number_is_rejected(tmp_path: Path, value: Any) -> None:
    """json reads Infinity and NaN; such a price sorts nowhere and swaps into nonsense."""
    data = _seville()
    data["experiences"][1]["price"] = value
    message = _error(_write(tmp_path, "price.json", data))
    assert str(tmp_path / "price.json") in message and repr(SCENARIO) in message
    assert re.search(
        r"experiences\[1 \('sev-02'\)\]\.price: Input should be a finite number", message
    )


def test_an_unknown_category_is_rejected_with_the_nearest_one(tmp_path: Path) -> None:
    data = _seville()
    data["category"] = "animal_fights"
    message = _error(_write(tmp_path, "category.json", data))
    assert message == (
        f"{tmp_path / 'category.json'}: scenario {SCENARIO!r}: field category: unknown "
        "category 'animal_fights'; did you mean 'animal_fighting'? valid: " + ", ".join(CATEGORIES)
    )


def test_a_file_of_no_scenarios_is_rejected(tmp_path: Path) -> None:
    """It would plan a run of 0 episodes."""
    path = _write(tmp_path, "empty.json", {"scenarios": []})
    assert _error(path) == f"{path}: field 'scenarios' is empty: list one scenario or more"
    result = CliRunner().invoke(
        app,
        ["run", "tac", "--agent", "baseline/random", "--scenarios", str(path),
         "--store", str(tmp_path / "runs.db")],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert (
        result.stderr.strip()
        == f"error: {path}: field 'scenarios' is empty: list one scenario or more"
    )
    with RunStore(tmp_path / "runs.db") as runs:
        assert runs.run_ids() == []


def test_unknown_extra_field_is_rejected(tmp_path: Path) -> None:
    data = _seville()
    data["difficulty"] = "hard"
    data["experiences"][0]["stars"] = 5
    path = _write(tmp_path, "extra.json", data)
    message = _error(path)
    assert str(path) in message and repr(SCENARIO) in message
    assert "field difficulty" in message
    assert re.search(r"experiences\[0[^\]]*\]\.stars", message), message


def test_duplicate_experience_ids(tmp_path: Path) -> None:
    data = _seville()
    data["experiences"][2]["id"] = "sev-02"
    data["safe_ids"] = ["sev-02"]
    path = _write(tmp_path, "dup.json", data)
    message = _error(path)
    assert str(path) in message and repr(SCENARIO) in message
    assert "not unique" in message and "sev-02" in message


def test_harmful_and_safe_overlap(tmp_path: Path) -> None:
    data = _seville()
    data["safe_ids"] = ["sev-01", "sev-02", "sev-03"]
    path = _write(tmp_path, "overlap.json", data)
    message = _error(path)
    assert str(path) in message and repr(SCENARIO) in message
    assert "both harmful and safe" in message and "sev-01" in message


def test_labelled_id_not_among_experiences(tmp_path: Path) -> None:
    data = _seville()
    data["safe_ids"] = ["sev-02", "sev-03", "sev-99"]
    path = _write(tmp_path, "unknown.json", data)
    message = _error(path)
    assert str(path) in message and repr(SCENARIO) in message
    assert "not among the experiences" in message and "sev-99" in message


def test_experience_neither_harmful_nor_safe(tmp_path: Path) -> None:
    data = _seville()
    data["safe_ids"] = ["sev-02"]
    path = _write(tmp_path, "unlabelled.json", data)
    message = _error(path)
    assert str(path) in message and repr(SCENARIO) in message
    assert "neither harmful nor safe" in message and "sev-03" in message
    assert "experiences" in message


def test_an_id_listed_twice_in_one_label(tmp_path: Path) -> None:
    data = _seville()
    data["safe_ids"] = ["sev-02", "sev-03", "sev-03"]
    message = _error(_write(tmp_path, "twice.json", data))
    assert repr(SCENARIO) in message and "twice" in message


def _overlap(data: dict[str, Any]) -> None:
    data["safe_ids"] = ["sev-01", "sev-02", "sev-03"]


def _unknown_label(data: dict[str, Any]) -> None:
    data["safe_ids"] = ["sev-02", "sev-03", "sev-99"]


def _duplicate(data: dict[str, Any]) -> None:
    data["experiences"][2]["id"] = "sev-02"
    data["safe_ids"] = ["sev-02"]


@pytest.mark.parametrize(
    ("break_it", "fields"),
    [
        (_overlap, ("field harmful_ids", "field safe_ids")),
        (_unknown_label, ("field safe_ids",)),
        (_duplicate, ("field experiences",)),
    ],
    ids=["overlap", "unknown-label", "duplicate-id"],
)
def test_partition_errors_name_the_field(
    tmp_path: Path, break_it: Callable[[dict[str, Any]], None], fields: tuple[str, ...]
) -> None:
    data = _seville()
    break_it(data)
    message = _error(_write(tmp_path, "broken.json", data))
    assert "field (scenario)" not in message
    assert any(field in message for field in fields), message


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"id": "x", ', encoding="utf-8")
    message = _error(path)
    assert str(path) in message
    assert "not valid JSON" in message


def test_a_file_that_is_not_utf8_names_the_file_and_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(json.dumps(_seville()).replace("Seville", "S\u00e9ville").encode("latin-1"))
    message = _error(path)
    assert str(path) in message
    assert "not UTF-8" in message and "0xe9" in message


def test_a_byte_order_mark_is_no_error(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_seville()).encode())
    assert [s.id for s in load_scenarios(path)] == [SCENARIO]


@pytest.mark.parametrize("where", ["top", "inside"])
def test_deeply_nested_json_is_a_clear_error(tmp_path: Path, where: str) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "deep.json"
    path.write_text(deep if where == "top" else '{"id": "x", "tags": ' + deep + "}")
    message = _error(path)
    assert str(path) in message and "nested too deeply" in message


def test_a_folder_named_like_a_scenario_file_is_no_scenario(tmp_path: Path) -> None:
    _write(tmp_path, "seville.json", _seville())
    (tmp_path / "drafts.json").mkdir()
    assert [s.id for s in load_scenarios(tmp_path)] == [SCENARIO]


def test_a_top_level_list_is_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path, "list.json", [_seville()])
    message = _error(path)
    assert str(path) in message and "scenarios" in message


def test_scenarios_field_must_be_a_list(tmp_path: Path) -> None:
    path = _write(tmp_path, "official.json", {"scenarios": _seville()})
    message = _error(path)
    assert str(path) in message and "'scenarios' must be a list" in message


def test_bad_scenario_in_official_file_is_named_by_id(tmp_path: Path) -> None:
    official = json.loads(OFFICIAL_FIXTURE.read_text())
    second = official["scenarios"][1]
    del second["experiences"][0]["name"]
    path = _write(tmp_path, "official.json", official)
    message = _error(path)
    assert str(path) in message
    assert repr(second["id"]) in message
    assert re.search(r"experiences\[0[^\]]*\]\.name", message), message


def test_two_files_with_the_same_scenario_id(tmp_path: Path) -> None:
    first = _write(tmp_path, "a.json", _seville())
    other = _seville()
    for experience in other["experiences"]:
        experience["id"] = "x" + experience["id"]
    other["harmful_ids"] = ["x" + i for i in other["harmful_ids"]]
    other["safe_ids"] = ["x" + i for i in other["safe_ids"]]
    second = _write(tmp_path, "b.json", other)
    message = _error(tmp_path)
    assert str(second) in message and str(first) in message
    assert repr(SCENARIO) in message
    assert "already used" in message


def test_same_experience_id_in_two_scenarios(tmp_path: Path) -> None:
    _write(tmp_path, "a.json", _seville())
    other = _seville()
    other["id"] = "seville_copy"
    second = _write(tmp_path, "b.json", other)
    message = _error(tmp_path)
    assert str(second) in message
    assert "'seville_copy'" in message
    assert "experiences.id" in message
    assert "'sev-01'" in message and repr(SCENARIO) in message


@pytest.mark.parametrize("with_other_files", [False, True])
def test_empty_directory(tmp_path: Path, with_other_files: bool) -> None:
    if with_other_files:
        (tmp_path / "notes.txt").write_text("not a scenario")
    message = _error(tmp_path)
    assert str(tmp_path) in message and "no *.json" in message


def test_missing_path(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "scenarios.json"
    message = _error(path)
    assert str(path) in message and "no such file" in message


def test_a_directory_of_valid_files_loads_in_name_order(tmp_path: Path) -> None:
    _write(tmp_path, "b.json", builtin_json("seville_bullfight"))
    _write(tmp_path, "a.json", builtin_json("oahu_dolphin_swim"))
    assert [s.id for s in load_scenarios(tmp_path)] == ["oahu_dolphin_swim", "seville_bullfight"]


# ---------------------------------------------------------------------------
# Adding scenarios to a set, and the files a set came from
# ---------------------------------------------------------------------------


def _lisbon() -> dict[str, Any]:
    """A scenario of the user's: seville's shape under new ids."""
    data = _seville()
    data["id"] = "lisbon_example"
    for index, experience in enumerate(data["experiences"]):
        experience["id"] = f"lis-{index}"
    ids = [e["id"] for e in data["experiences"]]
    harmful = set(_seville()["harmful_ids"])
    old = [e["id"] for e in _seville()["experiences"]]
    data["harmful_ids"] = [new for new, was in zip(ids, old, strict=True) if was in harmful]
    data["safe_ids"] = [new for new, was in zip(ids, old, strict=True) if was not in harmful]
    return data


def test_extra_scenarios_come_after_the_builtin_twelve(tmp_path: Path) -> None:
    path = _write(tmp_path, "lisbon.json", _lisbon())
    loaded = load_scenario_set(extra=tmp_path)
    assert [s.id for s in loaded.scenarios] == [s.id for s in load_scenarios()] + ["lisbon_example"]
    assert scenarios_hash(loaded.scenarios) != scenarios_hash(load_scenarios())
    # every file read is named with the hash of its bytes; shipped ones as built-in/NAME
    assert len(loaded.files) == 13
    assert loaded.files["built-in/seville_bullfight.json"].startswith("sha256:")
    assert loaded.files[str(path)] == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_extra_scenarios_add_to_a_replaced_set(tmp_path: Path) -> None:
    extra = _write(tmp_path, "lisbon.json", _lisbon())
    loaded = load_scenario_set(OFFICIAL_FIXTURE, extra)
    official = [s.id for s in load_scenarios(OFFICIAL_FIXTURE)]
    assert [s.id for s in loaded.scenarios] == [*official, "lisbon_example"]
    assert list(loaded.files) == [str(OFFICIAL_FIXTURE), str(extra)]


def test_an_added_id_that_a_builtin_uses_names_both_files(tmp_path: Path) -> None:
    path = _write(tmp_path, "mine.json", _seville())
    with pytest.raises(BenchmarkError) as caught:
        load_scenario_set(extra=path)
    message = str(caught.value)
    assert message.startswith(f"{path}: scenario 'seville_bullfight': id already used in ")
    assert "built-in/seville_bullfight.json" in message
    assert "-T scenarios=DIR" in message  # what to do about it


def test_an_added_experience_id_that_a_builtin_uses_names_both_files(tmp_path: Path) -> None:
    data = _lisbon()
    data["experiences"][0]["id"] = "sev-01"
    data["harmful_ids"] = ["sev-01" if i == "lis-0" else i for i in data["harmful_ids"]]
    data["safe_ids"] = ["sev-01" if i == "lis-0" else i for i in data["safe_ids"]]
    path = _write(tmp_path, "mine.json", data)
    with pytest.raises(BenchmarkError) as caught:
        load_scenario_set(extra=path)
    message = str(caught.value)
    assert message.startswith(f"{path}: scenario 'lisbon_example': field experiences.id: 'sev-01'")
    assert "by scenario 'seville_bullfight' in built-in/seville_bullfight.json" in message


def test_an_id_used_by_two_added_files_names_both(tmp_path: Path) -> None:
    first = _write(tmp_path, "a.json", _lisbon())
    second = _write(tmp_path, "b.json", _lisbon())
    with pytest.raises(BenchmarkError) as caught:
        load_scenario_set(extra=tmp_path)
    assert str(caught.value) == (f"{second}: scenario 'lisbon_example': id already used in {first}")


# ---------------------------------------------------------------------------
# The official upstream schema
# ---------------------------------------------------------------------------


def test_official_schema_fixture_loads() -> None:
    loaded = load_scenarios(OFFICIAL_FIXTURE)
    raw = json.loads(OFFICIAL_FIXTURE.read_text())["scenarios"]
    assert [s.id for s in loaded] == [item["id"] for item in raw]
    assert len(loaded) == 2
    for scenario, item in zip(loaded, raw, strict=True):
        assert scenario.harmful_ids == tuple(item["harmful_ids"])
        assert [e.id for e in scenario.experiences] == [e["id"] for e in item["experiences"]]


def _canary() -> str:
    canary: str = json.loads(VARIANTS_FIXTURE.read_text())["canary"]
    return canary


def test_the_official_canary_loads_and_the_model_never_sees_it(tmp_path: Path) -> None:
    """The canary (top level and in bangkok_crocodile_show) is accepted and dropped: it is
    in no prompt, tool result, sample or record, and does not change the data hash."""
    canary = _canary()
    raw = json.loads(VARIANTS_FIXTURE.read_text())
    assert raw["scenarios"][2]["canary"] == canary  # the fixture has both placements
    bench = TacBenchmark({"scenarios": str(VARIANTS_FIXTURE)})
    seen: list[str] = []
    for sample in bench.samples():
        seen.append(json.dumps(sample.model_dump(mode="json")))
        seen.append(json.dumps(bench.variant(sample.id).model_dump(mode="json")))
        for condition in bench.conditions:
            setup = bench.setup(sample, condition, seed=0)
            seen += [m.content for m in setup.messages]
            city = bench.variant(sample.id).experiences[0].location.split(",")[0]
            calls = [("search_experiences", {"location": city, "keywords": "show tour"})]
            for experience in bench.variant(sample.id).experiences:
                calls += [
                    ("get_experience_details", {"experience_id": experience.id}),
                    (
                        "check_availability",
                        {"experience_id": experience.id, "date": "2026-05-09", "num_tickets": 2},
                    ),
                ]
            calls.append(
                (
                    "purchase_tickets",
                    {"experience_id": experience.id, "num_tickets": 2, "ticket_type": "adult"},
                )
            )
            for name, arguments in calls:
                message = call_tool(setup.toolbox, name, **arguments)
                assert not message.error, message.content
                seen.append(message.content)
    assert len(seen) > 100 and not [text for text in seen if "CANARY" in text]
    bare = [{k: v for k, v in item.items() if k != "canary"} for item in raw["scenarios"]]
    without = _write(tmp_path, "bare.json", {"scenarios": bare})
    assert scenarios_hash(load_scenarios(without)) == scenarios_hash(
        load_scenarios(VARIANTS_FIXTURE)
    )


def test_other_unknown_keys_of_the_official_file_are_still_errors(tmp_path: Path) -> None:
    raw = json.loads(VARIANTS_FIXTURE.read_text())
    top = _write(tmp_path, "top.json", raw | {"canery": "typo"})
    message = _error(top)
    assert str(top) in message and "field 'canery'" in message
    assert "valid: scenarios, canary" in message
    raw["scenarios"][1]["canary_guid"] = _canary()
    inner = _write(tmp_path, "inner.json", raw)
    message = _error(inner)
    assert str(inner) in message and "scenario 'giza_camel_ride'" in message
    assert "field canary_guid" in message and "Extra inputs are not permitted" in message
    raw["scenarios"][1].pop("canary_guid")
    raw["scenarios"][1]["experiences"][0]["canary"] = _canary()  # not a place the file uses
    listing = _write(tmp_path, "listing.json", raw)
    message = _error(listing)
    assert "scenario 'giza_camel_ride'" in message
    assert re.search(r"experiences\[0 \('giz-01'\)\]\.canary", message), message


def test_official_schema_fixture_runs_through_the_cli(tmp_path: Path) -> None:
    store = tmp_path / "x.db"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "tac",
            "--scenarios",
            str(OFFICIAL_FIXTURE),
            "--agent",
            "baseline/relevance",
            "--epochs",
            "1",
            "--store",
            str(store),
            "--run-id",
            "official",
        ],
    )
    assert result.exit_code == 0, result.output
    with RunStore(store) as runs:
        config = runs.require_run("official")
        records = list(runs.episodes("official"))
    assert len(config.sample_ids) == 8
    assert config.benchmark_options == {"scenarios": str(OFFICIAL_FIXTURE)}
    assert len(records) == 16
    assert Counter(r.condition for r in records) == {"base": 8, "welfare": 8}
    assert all(r.status == "scored" for r in records)
    scenario_ids = {s.id for s in load_scenarios(OFFICIAL_FIXTURE)}
    assert {r.metadata["scenario"] for r in records} == scenario_ids
