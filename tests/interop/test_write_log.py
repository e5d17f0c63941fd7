"""Runs as Inspect logs: read by Inspect, served by `inspect view`, named safely."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("inspect_ai", reason="Inspect AI is not installed (the 'inspect' extra)")

from inspect_ai.log import read_eval_log

from deedbench.engine import (
    EpisodeRecord,
    RunConfig,
)
from deedbench.interop.write_log import write_inspect_logs


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
