"""Runs as Inspect logs: read by Inspect, served by `inspect view`, named safely."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("inspect_ai", reason="Inspect AI is not installed (the 'inspect' extra)")

from inspect_ai.log import list_eval_logs, read_eval_log
from typer.testing import CliRunner

from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.errors import InspectLogError
from deedbench.interop import write_log
from deedbench.interop.read_log import read_inspect_logs
from deedbench.interop.write_log import PART_KEY, write_inspect_logs
from deedbench.records import EpisodeRecord, RunConfig


def test_an_exported_run_is_a_log_inspect_reads(
    deedbench_run: tuple[RunConfig, list[EpisodeRecord]], exported: list[Path]
) -> None:
    config, records = deedbench_run
    assert [p.name for p in exported] == [
        "scripted_deedbench-tac.eval",
        "scripted_deedbench-tac_welfare.eval",
    ]
    for path, condition in zip(exported, ["base", "welfare"], strict=True):
        log = read_eval_log(path)
        mine = {(r.sample_id, r.epoch): r for r in records if r.condition == condition}
        assert log.samples is not None and len(log.samples) == len(mine) == 32
        assert {(s.id, s.epoch) for s in log.samples} == set(mine)
        for sample in log.samples:
            record = mine[(str(sample.id), sample.epoch)]
            if record.score is None:
                assert sample.error is not None and "503" in sample.error.message
                continue
            assert sample.scores is not None
            assert sample.scores["deedbench"].value == record.score.values
            assert sample.metadata["scenario"] == record.metadata["scenario"]
        assert log.results is not None
        welfare = next(s for s in log.results.scores if s.name == "welfare")
        scored = [r.score.values["welfare"] for r in mine.values() if r.score is not None]
        assert welfare.metrics["mean"].value == pytest.approx(sum(scored) / len(scored))
    tac, welfare_log = (read_eval_log(p, header_only=True) for p in exported)
    assert (tac.eval.task, tac.status) == ("deedbench/tac", "success")
    assert (welfare_log.eval.task, welfare_log.status) == ("deedbench/tac_welfare", "error")
    assert welfare_log.error is not None and "2 of 32 episodes" in welfare_log.error.message
    assert tac.eval.model == config.agent


def test_inspect_view_serves_an_exported_run(exported: list[Path]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "inspect_ai", "view", "--log-dir", str(exported[0].parent)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    viewer = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/api"
    try:
        listing = _get_json(f"{base}/log-files", wait=60)
        names = sorted(Path(entry["name"]).name for entry in listing["files"])
        assert names == sorted(p.name for p in exported)
        served = _get_json(f"{base}/logs/{quote(exported[0].resolve().as_uri(), safe='')}")
        assert served["eval"]["task"] == "deedbench/tac"
        assert len(served["samples"]) == 32
    finally:
        viewer.terminate()
        viewer.wait(timeout=30)


def _get_json(url: str, wait: float = 0.0) -> dict:  # type: ignore[type-arg]
    """GET a JSON document; retries until `wait` seconds pass while the server starts."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.load(response)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


@pytest.mark.parametrize("run_id", ["../x", "../../etc/x", "/abs/x", "a/b", ".hidden"])
def test_file_names_from_a_run_id_stay_inside_the_log_folder(
    deedbench_run: tuple[RunConfig, list[EpisodeRecord]], tmp_path: Path, run_id: str
) -> None:
    config, records = deedbench_run
    folder = tmp_path / "logs" / "inner"
    paths = write_inspect_logs(config.model_copy(update={"run_id": run_id}), records, folder)
    assert len(paths) == 2
    for path in paths:
        assert path.parent == folder and not path.name.startswith(".")
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == sorted(paths)


def test_a_run_larger_than_a_part_is_several_logs_that_read_back_as_the_same_run(
    deedbench_run: tuple[RunConfig, list[EpisodeRecord]], exported: list[Path], tmp_path: Path
) -> None:
    """Inspect writes a log's samples in time quadratic in their number, so a condition is
    split into logs of at most `part_episodes` samples; Inspect lists and reads each, and
    deedbench reads the parts back as the run the whole logs make."""
    config, records = deedbench_run
    folder = tmp_path / "parts"
    paths = write_inspect_logs(config, records, folder, part_episodes=10)
    tasks = ("deedbench-tac", "deedbench-tac_welfare")
    assert [p.name for p in paths] == [
        f"scripted_{task}_part{index:03d}.eval" for task in tasks for index in range(1, 5)
    ]
    listed = [Path(info.name).name for info in list_eval_logs(str(folder))]
    assert sorted(listed) == sorted(p.name for p in paths)  # what `inspect view` lists
    for condition, mine in (("base", paths[:4]), ("welfare", paths[4:])):
        logs = [read_eval_log(p) for p in mine]
        wanted = [(r.sample_id, r.epoch) for r in records if r.condition == condition]
        assert [len(log.samples or []) for log in logs] == [10, 10, 10, 2]
        assert [(str(s.id), s.epoch) for log in logs for s in log.samples or []] == wanted
        parts = [(log.eval.metadata or {})[PART_KEY] for log in logs]
        assert [(p["index"], p["last"]) for p in parts] == [
            (1, False),
            (2, False),
            (3, False),
            (4, True),
        ]
        assert len({p["export"] for p in parts}) == 1
        assert sum(log.results.total_samples for log in logs if log.results) == 32  # planned
        scored = sum(1 for r in records if r.condition == condition and r.score is not None)
        assert sum(log.results.completed_samples for log in logs if log.results) == scored
        errors = [any(s.error for s in log.samples or []) for log in logs]
        assert [log.status == "error" for log in logs] == errors  # the parts with the 503s
        assert any(errors) == (condition == "welfare")
    [(whole, whole_records)] = read_inspect_logs(exported)
    [(joined, joined_records)] = read_inspect_logs(list(reversed(paths)))  # any order
    assert joined.model_dump(exclude={"agent_params"}) == whole.model_dump(
        exclude={"agent_params"}
    )  # the run id too: importing both is refused as the same run
    assert [r.model_dump() for r in joined_records] == [r.model_dump() for r in whole_records]
    provenance = joined.agent_params
    assert isinstance(provenance, dict)  # one entry per log read
    assert [p["log"] for p in provenance["inspect"]] == [str(p) for p in paths]


def test_an_incomplete_or_mixed_set_of_parts_is_refused_naming_what_is_wrong(
    deedbench_run: tuple[RunConfig, list[EpisodeRecord]], tmp_path: Path
) -> None:
    config, records = deedbench_run
    base = [r for r in records if r.condition == "base"]
    paths = write_inspect_logs(config, base, tmp_path / "a", part_episodes=10)
    again = write_inspect_logs(config, base, tmp_path / "b", part_episodes=10)
    cases = [
        ([paths[0], paths[2], paths[3]], "part 2 of 4 is missing"),
        (paths[:3], "the parts after part 3 are missing"),
        ([*paths, paths[1]], "part 2 of condition 'base' is already in"),
        ([*paths[:2], *again[2:]], "from two different exports"),
    ]
    for given, message in cases:
        with pytest.raises(InspectLogError, match=re.escape(message)):
            read_inspect_logs(given)


def test_export_and_import_of_a_run_in_parts_through_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(write_log, "PART_EPISODES", 10)
    store = ["--store", str(tmp_path / "runs.db")]

    def cli(*args: str) -> str:
        result = CliRunner().invoke(app, [*args, *store])
        assert result.exit_code == 0, result.output
        return result.output

    cli("run", "tac", "--agent", "baseline/random", "--limit", "8", "--epochs", "3",
        "--run-id", "orig")  # fmt: skip
    written = cli("export", "orig", "--format", "inspect", "-o", str(tmp_path / "logs"))
    logs = sorted(str(p) for p in (tmp_path / "logs").glob("*.eval"))
    assert len(logs) == written.count("wrote ") == 6  # 24 episodes per condition: 10, 10, 4
    (back,) = re.findall(r"imported run (\S+):", cli("import", "inspect", *logs))
    with RunStore(tmp_path / "runs.db") as runs:
        original, imported = (list(runs.episodes(run)) for run in ("orig", back))

    def facts(run: list[EpisodeRecord]) -> list[tuple[object, ...]]:
        return sorted(
            (r.sample_id, r.condition, r.epoch, r.seed, r.status, r.score and r.score.values)
            for r in run
        )

    assert len(original) == 48 and facts(imported) == facts(original)
