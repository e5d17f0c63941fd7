"""A user's own TAC scenarios from the command line: added to the built-in twelve or in
their place, recorded with the run, and docs/tac.md's example run as it is written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.benchmarks.tac.scenario import BUILTIN_DIR
from deedbench.cli.main import app
from deedbench.engine import RunStore

PAGE = Path(__file__).resolve().parents[2] / "docs" / "tac.md"
SCRIPT = Path(sys.executable).parent / "deedbench"  # the console script pip installed


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def page_block(heading: str) -> str:
    """The first bash block after a heading of docs/tac.md, exactly as a user copies it."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(f"\n{heading}\n") :]
    match = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert match is not None, heading
    return match.group(1)


def scenario(scenario_id: str, prefix: str) -> dict[str, Any]:
    """A valid scenario of the user's: seville's shape under new ids."""
    data: dict[str, Any] = json.loads((BUILTIN_DIR / "seville_bullfight.json").read_text())
    renamed = {e["id"]: f"{prefix}-{i}" for i, e in enumerate(data["experiences"])}
    data["id"] = scenario_id
    for experience in data["experiences"]:
        experience["id"] = renamed[experience["id"]]
    data["harmful_ids"] = [renamed[i] for i in data["harmful_ids"]]
    data["safe_ids"] = [renamed[i] for i in data["safe_ids"]]
    return data


@pytest.mark.skipif(not SCRIPT.exists(), reason="no deedbench console script beside python")
def test_the_pages_example_adds_and_replaces_after_the_quickstart(tmp_path: Path) -> None:
    """Run verbatim, in a folder laid out as the Quickstart leaves it (.venv/bin/deedbench),
    through the installed console script, not this checkout's source tree."""
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "deedbench").symlink_to(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("DEEDBENCH_STORE", "COLUMNS")}
    done = subprocess.run(
        ["bash", "-e", "-c", page_block("## Adding a scenario")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with RunStore(tmp_path / "deedbench.db") as runs:
        # created_at has whole seconds: the two runs are told apart by what they hold
        added, replaced = sorted(
            (runs.require_run(run_id) for run_id in runs.run_ids()),
            key=lambda c: len(c.sample_ids),
            reverse=True,
        )
    builtin_ids = [s.id for s in TacBenchmark().samples()]
    mine_ids = [f"lisbon_carriage_{v}" for v in ("base", "price_swap", "rating_swap", "reversed")]
    assert added.sample_ids == builtin_ids + mine_ids
    assert replaced.sample_ids == mine_ids
    builtin = TacBenchmark()
    assert added.data_hash not in (builtin.data_hash(), replaced.data_hash)
    mine = "my-scenarios/lisbon_carriage.json"
    assert added.data_files == builtin.data_files() | {mine: added.data_files[mine]}
    assert list(replaced.data_files) == [mine]
    assert "312 of 312 episodes" in done.stdout and "24 of 24 episodes" in done.stdout


def test_resume_refuses_an_added_folder_that_changed(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(scenario("lisbon_a", "la")), encoding="utf-8")
    store = str(tmp_path / "runs.db")
    common = ("--run-id", "mine", "--store", store)
    first = invoke(
        "run", "tac", "--agent", "baseline/refuse", "--epochs", "1", "--limit", "2",
        "-T", f"extra_scenarios={folder}", *common,
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    (folder / "b.json").write_text(json.dumps(scenario("lisbon_b", "lb")), encoding="utf-8")
    again = invoke("run", "tac", *common)
    assert again.exit_code == 2, again.output
    assert "run 'mine' was created with data sha256:" in " ".join(again.output.split())
    with RunStore(Path(store)) as runs:
        assert runs.count("mine") == {"scored": 4}


def test_an_added_scenario_with_a_builtin_id_is_exit_2_naming_both_files(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "seville.json"
    mine.write_text((BUILTIN_DIR / "seville_bullfight.json").read_text(), encoding="utf-8")
    result = invoke(
        "run", "tac", "--agent", "baseline/refuse", "-T", f"extra_scenarios={mine}",
        "--store", str(tmp_path / "runs.db"),
    )  # fmt: skip
    assert result.exit_code == 2
    flat = "".join(result.output.split())
    assert "".join(f"{mine}: scenario 'seville_bullfight': id already used in".split()) in flat
    assert "built-in/seville_bullfight.json" in flat
    assert "Traceback" not in result.output
