"""What the CLI imports on its way: commands that compute no statistics never import
numpy (nor scipy); a run imports numpy for its summary on a thread once every episode
left has started, or, when its episodes run in worker processes, once the first is
recorded; and no summary imports scipy (a second of imports; stats/exact.py says why).

Each command runs in a fresh interpreter (this test process has imported everything),
through a probe that records the heavy packages in `sys.modules` when the run's launch
starts driving (the planning done, no episode yet), as each record arrives (before the
command sees it), when the driving returns (the last episode recorded) and when the
command exits.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from deedbench.testing import FakeModelServer, tac_player

HEAVY = ("scipy", "numpy", "openai", "anthropic")

PROBE = """
import json, sys
import deedbench.engine as engine
from deedbench.cli.main import app

seen = {}

def heavy():
    # a copy first: a thread may be importing (the run's preloads), and iterating the
    # live dict while it grows raises "dictionary changed size during iteration"
    names = sys.modules.copy()
    return sorted({name.partition(".")[0] for name in names} & set(HEAVY))

drive = engine.Launch.drive

async def probed(launch):
    seen["before_first_episode"] = heavy()
    seen["at_records"] = []
    on_record = launch.on_record

    def noted(record):
        seen["at_records"].append(heavy())
        on_record(record)

    launch.on_record = noted
    result = await drive(launch)
    seen["after_last_episode"] = heavy()
    return result

engine.Launch.drive = probed
try:
    app(sys.argv[2:], prog_name="deedbench")
except SystemExit as exc:
    seen["code"] = exc.code
seen["at_exit"] = heavy()
with open(sys.argv[1], "w") as out:
    json.dump(seen, out)
"""


def probe(tmp_path: Path, *args: str) -> dict[str, object]:
    """Run `deedbench ARGS` in a fresh interpreter; what it had imported, and its exit code."""
    seen = tmp_path / "seen.json"
    script = f"HEAVY = {HEAVY!r}\n{PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", script, str(seen), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "DEEDBENCH_STORE": str(tmp_path / "unused.db")},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(seen.read_text())
    assert result.get("code") in (None, 0), done.stdout + done.stderr
    return result


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one small run of a baseline agent (made in a fresh interpreter too)."""
    folder = tmp_path_factory.mktemp("startup")
    path = folder / "store.db"
    run = ("run", "tac", "--agent", "baseline/random", "--limit", "2", "--epochs", "1")
    probe(folder, *run, "--run-id", "small", "--store", str(path))
    return path


def test_help_imports_no_sdk_and_no_statistics(tmp_path: Path) -> None:
    assert probe(tmp_path, "--help")["at_exit"] == []
    assert probe(tmp_path, "run", "--help")["at_exit"] == []


def test_show_and_export_import_no_statistics(tmp_path: Path, store: Path) -> None:
    with closing(sqlite3.connect(store)) as db:
        (sample,) = db.execute("SELECT sample_id FROM episodes LIMIT 1").fetchone()
    assert probe(tmp_path, "show", "small", sample, "--store", str(store))["at_exit"] == []
    for format in ("jsonl", "csv"):
        out = tmp_path / f"episodes.{format}"
        export = ("export", "small", "--format", format, "--output", str(out))
        assert probe(tmp_path, *export, "--store", str(store))["at_exit"] == []
        assert len(out.read_text().splitlines()) >= 4  # it did export the episodes


def test_a_run_imports_statistics_once_its_last_episodes_have_started(tmp_path: Path) -> None:
    """Eight episodes, two at a time: the sixth record leaves two to run, both started."""
    run = ("run", "tac", "--agent", "baseline/random", "--limit", "2", "--epochs", "2")
    seen = probe(tmp_path, *run, "--concurrency", "2", "--store", str(tmp_path / "store.db"))
    assert seen["before_first_episode"] == []
    at_records = seen["at_records"]
    assert isinstance(at_records, list) and len(at_records) == 8
    assert at_records[:6] == [[]] * 6  # the import starts as the sixth is counted
    assert seen["at_exit"] == ["numpy"]  # the summary's intervals, and no scipy


def test_a_model_run_imports_no_statistics_before_its_episodes(tmp_path: Path) -> None:
    with FakeModelServer("openai", tac_player) as server:
        seen = probe(
            tmp_path,
            "run", "tac", "--agent", "openai-compatible/fake", "--base-url", server.base_url,
            "--limit", "2", "--epochs", "1", "--store", str(tmp_path / "store.db"),
        )  # fmt: skip
        assert server.hits > 0
    assert seen["before_first_episode"] == ["openai"]
    assert seen["at_exit"] == ["numpy", "openai"]  # the summary's intervals, and no scipy


def test_a_run_in_workers_imports_statistics_while_they_run(tmp_path: Path) -> None:
    """The driver imports numpy on a thread once the first episode is recorded (it may not
    be done by the last one), never before the run starts."""
    run = ("run", "tac", "--agent", "baseline/random", "--limit", "4", "--epochs", "1")
    seen = probe(tmp_path, *run, "--workers", "2", "--store", str(tmp_path / "store.db"))
    assert seen["before_first_episode"] == []
    assert seen["at_records"][0] == []  # type: ignore[index]
    assert seen["after_last_episode"] in ([], ["numpy"])
    assert seen["at_exit"] == ["numpy"]
