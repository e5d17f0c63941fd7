"""The `deedbench` command line: list, run (new and resumed) and report."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from itertools import pairwise
from pathlib import Path

import pytest
from tests.cli.summaries import PrintedSummaries, stored_summary
from typer.testing import CliRunner, Result

from deedbench.cli.main import app
from deedbench.engine import RunStore

ANSI = re.compile(r"\x1b\[[0-9;]*m")
OFFICIAL_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tac_official_schema.json"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    """Output without colour codes or any whitespace, so rich's line wrapping
    (of long paths too) cannot split what a test looks for."""
    return "".join(ANSI.sub("", text).split())


def contains(output: str, expected: str) -> bool:
    return flat(expected) in flat(output)


def stored(store: Path, run_id: str) -> dict[str, int]:
    with RunStore(store) as runs:
        return runs.count(run_id)


def delete_condition(store: Path, run_id: str, condition: str) -> None:
    """Forget a run's stored episodes of one condition, as if they never ran."""
    with closing(sqlite3.connect(store)) as db, db:
        for table in ("episodes", "episode_summaries"):  # the summaries' trigger keeps the kinds
            where = "WHERE run_id = ? AND condition = ?"
            db.execute(f"DELETE FROM {table} {where}", (run_id, condition))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def finished_run(store: Path) -> str:
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "2", "--epochs", "1",
        "--run-id", "small", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return "small"


def test_list_shows_tac_and_its_baselines() -> None:
    result = invoke("list")
    assert result.exit_code == 0, result.output
    assert re.search(r"\btac\b", result.output)
    for name in ("random", "relevance", "welfare", "refuse"):
        assert contains(result.output, f"baseline/{name}")
    assert contains(result.output, "base, welfare")


def test_list_shows_each_benchmarks_options_with_their_help() -> None:
    result = invoke("list")
    assert result.exit_code == 0, result.output
    assert "Benchmark options (-T KEY=VALUE)" in result.output
    for option in ("scenarios", "nudge", "variants"):
        assert re.search(rf"\btac\s+│\s+{option}\b", result.output), option
    assert "inspect_evals/tac's samples" in result.output
    assert re.search(r"\bretail\s+│\s+user\b", result.output)
    # each option's type and default, from its declaration
    assert re.search(r"\btac\s+│\s+nudge\s+│\s+int\s+│\s+0\s+│", result.output)
    assert re.search(r"\btac\s+│\s+variants\s+│\s+choice\s+│\s+deedbench\s+│", result.output)
    assert re.search(r"\btaubench-retail\s+│\s+split\s+│\s+str\s+│\s+test\s+│", result.output)


def test_split_and_tasks_are_no_flags_of_run_or_validate() -> None:
    for command in ("run", "validate"):
        result = invoke(command, "taubench-retail", "--split", "dev")
        assert result.exit_code == 2
        assert contains(result.output, "No such option: --split"), result.output


def test_run_prints_the_run_id_and_a_summary(store: Path) -> None:
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "2", "--epochs", "1",
        "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    match = re.search(r"run id: (\S+)", result.output)
    assert match is not None, result.output
    run_id = match.group(1)
    assert run_id.startswith("tac-")
    assert contains(result.output, f"starting run {run_id}: 4 of 4 episodes to run")
    assert contains(result.output, "episodes: 4 scored, 0 errors")
    assert "Overall" in result.output
    plain = ANSI.sub("", result.output)
    assert re.search(r"^\s*base\s+2\s+\d+\.\d%", plain, re.MULTILINE)
    assert re.search(r"^\s*welfare\s+2\s+\d+\.\d%", plain, re.MULTILINE)
    assert "by category" in result.output
    assert stored(store, run_id) == {"scored": 4}


def test_a_new_runs_summary_is_tallied_as_it_runs_and_equals_the_stored_runs(
    store: Path, printed_summaries: PrintedSummaries
) -> None:
    printed, read = printed_summaries
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--limit", "6", "--epochs", "2",
        "--run-id", "live", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert read == []  # its 24 records were counted as they came, not read back
    [summary] = printed
    assert summary.scored == 24
    assert summary.model_dump() == stored_summary(store, "live", closing=True).model_dump()
    # only the grouping its tables show is computed; `report` has them all
    assert [list(c.by) for c in summary.conditions] == [["category"], ["category"]]
    assert all(not c.flips for c in summary.conditions)
    full = stored_summary(store, "live")
    assert list(full.conditions[0].by) == ["category", "scenario", "variant"]
    assert full.conditions[0].by["category"] == summary.conditions[0].by["category"]
    assert full.conditions[1].versus_first == summary.conditions[1].versus_first


def test_a_resumed_runs_summary_counts_the_episodes_stored_before(
    store: Path, finished_run: str, printed_summaries: PrintedSummaries
) -> None:
    delete_condition(store, finished_run, "welfare")
    printed, read = printed_summaries
    result = invoke("run", "tac", "--run-id", finished_run, "--store", str(store))
    assert result.exit_code == 0, result.output
    assert read == [finished_run]
    [summary] = printed
    assert summary.scored == 4
    assert summary.model_dump() == stored_summary(store, finished_run, closing=True).model_dump()


def test_run_with_an_unknown_benchmark(store: Path) -> None:
    result = invoke("run", "nope", "--agent", "baseline/random", "--store", str(store))
    assert result.exit_code == 2
    assert contains(result.output, "unknown benchmark 'nope'")
    assert contains(result.output, "Valid benchmarks: retail, tac")


def test_run_with_an_unknown_agent(store: Path) -> None:
    result = invoke("run", "tac", "--agent", "baseline/psychic", "--store", str(store))
    assert result.exit_code == 2
    assert contains(result.output, "unknown agent 'baseline/psychic'")
    for name in ("random", "relevance", "welfare", "refuse"):
        assert contains(result.output, f"baseline/{name}")
    with RunStore(store) as runs:
        assert runs.run_ids() == []  # nothing recorded for a run that never started


def test_run_without_an_agent(store: Path) -> None:
    result = invoke("run", "tac", "--store", str(store))
    assert result.exit_code == 2
    assert contains(result.output, "--agent is required")


@pytest.mark.parametrize("condition", ["polite", "base,polite", ","])
def test_run_with_an_unknown_condition(store: Path, condition: str) -> None:
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--condition", condition, "--store", str(store)
    )
    assert result.exit_code == 2
    assert contains(result.output, "Valid conditions: base, welfare")


def test_run_one_condition_only(store: Path) -> None:
    result = invoke(
        "run", "tac", "--agent", "baseline/refuse", "--condition", "welfare", "--limit", "3",
        "--epochs", "2", "--run-id", "w", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with RunStore(store) as runs:
        records = list(runs.episodes("w"))
    assert len(records) == 6
    assert {r.condition for r in records} == {"welfare"}


def test_run_with_an_unknown_option(store: Path) -> None:
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "-T", "difficulty=hard", "--store", str(store)
    )
    assert result.exit_code == 2
    assert contains(result.output, "unknown tac option(s) ['difficulty']")
    assert contains(result.output, "Valid options: scenarios:")
    assert contains(result.output, "nudge:")


def test_run_with_a_malformed_option(store: Path) -> None:
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "-T", "nudge", "--store", str(store)
    )
    assert result.exit_code == 2
    assert contains(result.output, "-T expects KEY=VALUE")


def test_run_with_bad_scenarios_reports_the_file(store: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    result = invoke(
        "run", "tac", "--agent", "baseline/random", "--scenarios", str(bad), "--store", str(store)
    )
    assert result.exit_code == 2
    assert contains(result.output, f"{bad}: not valid JSON")


def bad_inputs(folder: Path) -> dict[str, tuple[list[str], str]]:
    """Each bad input outside the store: the flags that pass it and what the error says."""
    latin1 = folder / "latin1.json"
    latin1.write_bytes('{"id": "caf\u00e9"}'.encode("latin-1"))
    deep = folder / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    scenarios = folder / "scenarios"
    scenarios.mkdir()
    (scenarios / "only-a-folder.json").mkdir()
    named_json = folder / "folder.json"
    named_json.mkdir()
    nested = "[" * 30_000 + "]" * 30_000
    return {
        "non-utf8 scenarios": (["--scenarios", str(latin1)], f"{latin1}: not UTF-8"),
        "nested scenarios": (["--scenarios", str(deep)], f"{deep}: not a scenario file"),
        "folder of folders": (["--scenarios", str(scenarios)], f"{scenarios}: no *.json"),
        "folder named .json": (["--scenarios", str(named_json)], f"{named_json}: no *.json"),
        "nested prices": (["--prices", str(deep)], f"{deep}: not a price table"),
        "non-utf8 prices": (["--prices", str(latin1)], f"{latin1}: not a price table"),
        "nested -M": (
            ["--agent", "openai-compatible/m", "--base-url", "http://127.0.0.1:9/v1",
             "-M", f"x={nested}"],
            "-M x: the JSON value is nested too deeply",
        ),
    }  # fmt: skip


@pytest.mark.parametrize(
    "case",
    [
        "non-utf8 scenarios",
        "nested scenarios",
        "folder of folders",
        "folder named .json",
        "nested prices",
        "non-utf8 prices",
        "nested -M",
    ],
)
def test_bad_input_is_a_clear_error_with_exit_2_and_nothing_run(
    store: Path, tmp_path: Path, case: str
) -> None:
    flags, expected = bad_inputs(tmp_path)[case]
    agent = [] if "--agent" in flags else ["--agent", "baseline/random"]
    result = invoke("run", "tac", *agent, "--limit", "1", "--store", str(store), *flags)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert "Traceback" not in result.output
    assert contains(result.stderr, expected)
    if store.exists():  # nothing was planned, let alone run
        with closing(sqlite3.connect(store)) as db:
            assert db.execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)


def test_report_json(store: Path, finished_run: str) -> None:
    result = invoke("report", finished_run, "--json", "--store", str(store))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["planned"] == data["scored"] == 4
    assert data["errors"] == data["missing"] == 0
    assert data["run"]["run_id"] == finished_run
    assert [c["condition"] for c in data["conditions"]] == ["base", "welfare"]
    for condition in data["conditions"]:
        overall = condition["overall"]
        assert overall["episodes"] == 2
        welfare = overall["metrics"]["welfare"]
        assert welfare["n"] == 2
        assert 0 <= welfare["ci_low"] <= welfare["value"] <= welfare["ci_high"] <= 1
        chance = overall["chance"]
        assert 0 < chance["chance"] < 1
        assert 0 <= chance["p_below"] <= 1 and 0 <= chance["p_above"] <= 1
        assert set(condition["by"]) == {"category", "scenario", "variant"}
        for groups in condition["by"].values():
            assert sum(g["episodes"] for g in groups) == 2
            assert all("chance" in g and "metrics" in g for g in groups)
        variants = {g["group"] for g in condition["by"]["variant"]}
        assert variants == {"base", "price_swap"}  # the first two samples


def test_report_as_tables(store: Path, finished_run: str) -> None:
    result = invoke("report", finished_run, "--store", str(store))
    assert result.exit_code == 0, result.output
    for title in ("Overall", "base, by scenario", "welfare, by variant"):
        assert contains(result.output, title)


def test_report_on_an_unknown_run_lists_runs(store: Path, finished_run: str) -> None:
    result = invoke("report", "no-such-run", "--store", str(store))
    assert result.exit_code == 2
    assert contains(result.output, "no run 'no-such-run'")
    assert contains(result.output, f"latest runs: {finished_run}")


def test_report_without_a_store(tmp_path: Path) -> None:
    result = invoke("report", "x", "--store", str(tmp_path / "absent.db"))
    assert result.exit_code == 2
    assert contains(result.output, "no run store")


def test_resuming_a_finished_run_runs_nothing(store: Path, finished_run: str) -> None:
    with RunStore(store) as runs:
        before = [r.model_dump() for r in runs.episodes(finished_run)]
    result = invoke("run", "tac", "--run-id", finished_run, "--store", str(store))
    assert result.exit_code == 0, result.output
    assert contains(result.output, f"resuming run {finished_run}: 0 of 4 episodes to run")
    with RunStore(store) as runs:
        after = [r.model_dump() for r in runs.episodes(finished_run)]
        assert runs.run_ids() == [finished_run]
    assert after == before
    assert stored(store, finished_run) == {"scored": 4}


def test_resume_with_the_same_flags_is_accepted(store: Path, finished_run: str) -> None:
    result = invoke(
        "run", "tac", "--run-id", finished_run, "--agent", "baseline/random", "--epochs", "1",
        "--limit", "2", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert stored(store, finished_run) == {"scored": 4}


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (("--epochs", "3"), "epochs 1 (got 3)"),
        (("--agent", "baseline/welfare"), "agent 'baseline/random' (got 'baseline/welfare')"),
        (("--seed", "5"), "seed 0 (got 5)"),
        (("--limit", "5"), "2 samples (got limit 5)"),
        (("--condition", "base"), "conditions base,welfare (got base)"),
    ],
)
def test_resume_with_a_conflicting_flag(
    store: Path, finished_run: str, flags: tuple[str, str], field: str
) -> None:
    result = invoke("run", "tac", "--run-id", finished_run, *flags, "--store", str(store))
    assert result.exit_code == 2
    assert contains(result.output, f"run '{finished_run}' was created with {field}")
    assert stored(store, finished_run) == {"scored": 4}


def test_resume_with_different_data(store: Path, finished_run: str) -> None:
    result = invoke(
        "run", "tac", "--run-id", finished_run, "--scenarios", str(OFFICIAL_FIXTURE),
        "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 2
    assert contains(result.output, f"run '{finished_run}' was created with benchmark options")
    assert stored(store, finished_run) == {"scored": 4}


def test_resume_after_the_data_changed(store: Path, tmp_path: Path) -> None:
    """Same path, edited content: the data hash recorded with the run catches it."""
    data = tmp_path / "scenarios.json"
    data.write_text(OFFICIAL_FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    first = invoke(
        "run", "tac", "--agent", "baseline/refuse", "--scenarios", str(data), "--limit", "1",
        "--epochs", "1", "--run-id", "edited", "--store", str(store),
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    document = json.loads(data.read_text(encoding="utf-8"))
    document["scenarios"][0]["input"] += " asap"
    data.write_text(json.dumps(document), encoding="utf-8")
    result = invoke("run", "tac", "--run-id", "edited", "--store", str(store))
    assert result.exit_code == 2
    assert contains(result.output, "run 'edited' was created with data sha256:")


def test_resume_runs_only_what_is_missing(store: Path, finished_run: str) -> None:
    delete_condition(store, finished_run, "welfare")
    assert stored(store, finished_run) == {"scored": 2}
    result = invoke("run", "tac", "--run-id", finished_run, "--store", str(store))
    assert result.exit_code == 0, result.output
    assert contains(result.output, f"resuming run {finished_run}: 2 of 4 episodes to run")
    assert stored(store, finished_run) == {"scored": 4}


def test_resume_with_a_conflicting_benchmark_option(store: Path) -> None:
    first = invoke(
        "run", "tac", "--agent", "baseline/refuse", "--limit", "1", "--epochs", "1",
        "-T", "nudge=2", "--run-id", "nudged", "--store", str(store),
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    result = invoke("run", "tac", "--run-id", "nudged", "-T", "nudge=0", "--store", str(store))
    assert result.exit_code == 2
    assert contains(result.output, "nudge")


def test_resume_keeps_the_stored_benchmark_options(store: Path) -> None:
    first = invoke(
        "run", "tac", "--agent", "baseline/refuse", "--limit", "1", "--epochs", "1",
        "-T", "nudge=2", "--run-id", "nudged", "--store", str(store),
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    delete_condition(store, "nudged", "welfare")
    result = invoke("run", "tac", "--run-id", "nudged", "--store", str(store))
    assert result.exit_code == 0, result.output
    with RunStore(store) as runs:
        assert runs.require_run("nudged").benchmark_options == {"nudge": "2"}
        records = {r.condition: r for r in runs.episodes("nudged")}
    # The refusing agent is nudged twice in the re-run episode, as in the first one.
    for record in records.values():
        users = [m.content for m in record.messages if m.role == "user"]
        assert len(users) == 3, record.condition


def test_version_and_shell_completion() -> None:
    from deedbench.version import __version__

    result = invoke("--version")
    assert result.exit_code == 0 and result.output == f"deedbench {__version__}\n"
    shown = invoke("--help")
    assert "--install-completion" in shown.output and "--show-completion" in shown.output


@pytest.mark.parametrize("command", ["", "run", "report", "audit", "study", "import", "export"])
def test_help_shows_flags_bare_and_every_summary_whole(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output  # a flag takes no value
    assert "..." not in re.sub(r"(run_ids\]?|ARGS\])\.\.\.", "", result.output)  # but "many"
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for before, line in pairwise(lines):  # no break but where it must
        if line.strip().startswith("[default:"):
            assert len(before.rstrip()) + 2 + len(line.strip()) > 80, (before, line)


def test_a_price_file_without_as_of_is_one_readable_line(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"openai/x": {"input": 1, "output": "a"}}}')
    result = invoke("report", "nope", "--prices", str(prices), "--store", str(tmp_path / "s.db"))
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert f"{prices}: not a price table (as_of: Field required; models.openai/x.output:" in line
    assert 'it needs "as_of"' in line and "pydantic" not in line
