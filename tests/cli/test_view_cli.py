"""`deedbench view` from the command line: it serves the store on loopback, read-only,
refuses another host without --expose and warns with it, and says what is wrong in one
line (exit 2) when it cannot serve."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

import deedbench.view
from deedbench.cli.main import app
from deedbench.engine import RunStore
from view._server import serving


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("view") / "runs.db"
    args = ["--agent", "baseline/random", "--run-id", "rnd", "--epochs", "1", "--store", str(path)]
    result = invoke("run", "tac", *args)
    assert result.exit_code == 0, result.output
    return path


def test_view_serves_the_store_read_only_until_stopped(store: Path) -> None:
    before = store.read_bytes()
    with serving(store) as url:
        with urllib.request.urlopen(url + "api/runs", timeout=30) as response:
            runs = json.load(response)["runs"]
            policy = response.headers["content-security-policy"]
        with urllib.request.urlopen(url + "api/runs/rnd/summary", timeout=30) as response:
            summary = json.load(response)
    assert [r["id"] for r in runs] == ["rnd"] and runs[0]["state"] == "finished"
    assert "default-src 'none'" in policy
    reported = json.loads(invoke("report", "rnd", "--json", "--store", str(store)).output)
    assert summary == reported
    assert store.read_bytes() == before


def test_another_host_needs_expose_and_is_warned_about(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = invoke("view", "--host", "0.0.0.0", "--store", str(store))
    assert refused.exit_code == 2 and "--expose" in refused.output
    served: list[tuple[str, int]] = []
    monkeypatch.setattr(
        deedbench.view,
        "serve",
        lambda reader, prices, host, port, ready, **_: served.append((host, port)),
    )
    exposed = invoke("view", "--host", "0.0.0.0", "--expose", "--port", "0", "--store", str(store))
    assert exposed.exit_code == 0, exposed.output
    assert served == [("0.0.0.0", 0)]
    assert "warning" in exposed.output and "can read every run and transcript" in exposed.output
    local = invoke("view", "--host", "::1", "--port", "0", "--store", str(store))
    assert local.exit_code == 0 and "warning" not in local.output  # loopback needs no flag


def test_what_cannot_be_served_is_one_line_exit_2(store: Path, tmp_path: Path) -> None:
    missing = invoke("view", "--store", str(tmp_path / "none.db"))
    assert missing.exit_code == 2 and "no run store at" in missing.output
    text = tmp_path / "notes.db"
    text.write_text("not a store " * 100)
    other = invoke("view", "--store", str(text))
    assert other.exit_code == 2 and "is not a run store" in other.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        busy = invoke("view", "--port", port, "--store", str(store))
    assert busy.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.output
    for result in (missing, other, busy):
        assert "Traceback" not in result.output


def test_an_empty_store_is_served(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    RunStore(path).close()
    with serving(path) as url, urllib.request.urlopen(url + "api/runs", timeout=30) as response:
        assert json.load(response) == {"runs": []}
