"""Progress off a terminal: plain lines (done of planned, rate, ETA, errors, retries,
tokens and cost so far) instead of a bar that a pipe would not show."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deedbench.cli.app import Tally
from deedbench.cli.main import app
from deedbench.testing import FakeModelServer, Reply, tac_player

KEY = "sk-progress-test"
LINE = re.compile(  # the rate and ETA once there is one (see Tally)
    r"(\d+) of (\d+) episodes, (?:[\d.]+/s, ETA \d+m\d\ds, )?(\d+) errors, (\d+) retries"
    r"(?:, ([\d,]+) tokens, (\$[\d.]+|cost unknown) so far)?"
)


def test_the_eta_waits_for_a_rate_measured_after_the_first_episode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first episode ends after the start-up (2.5 s here): a rate from it alone would
    put the remaining 191 at 8 minutes when they take 20 seconds."""
    now = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    tally = Tally(192, lines=False)
    assert tally.stats() == "0 errors, 0 retries"
    now[0] = 2.5
    tally.advance()
    assert tally.stats() == "0 errors, 0 retries"  # was "0.4/s, ETA 7m58s, ..."
    for _ in range(8):
        now[0] += 0.0625
        tally.advance()
    assert "ETA" not in tally.stats()  # half a second: no rate to base it on yet
    for _ in range(8):
        now[0] += 0.0625
        tally.advance()
    assert tally.stats() == "16.0/s, ETA 0m11s, 0 errors, 0 retries"  # 16 in 1 s, 175 left


def test_a_piped_run_prints_plain_progress_lines(tmp_path: Path) -> None:
    deedbench = Path(sys.executable).with_name("deedbench")
    args = ["run", "tac", "--agent", "baseline/random", "--limit", "4", "--epochs", "1"]
    done = subprocess.run(
        [str(deedbench), *args, "--store", str(tmp_path / "runs.db")],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [m.groups() for m in LINE.finditer(done.stdout)]
    assert lines[0][:2] == ("1", "8")  # the first episode, then every few seconds
    assert lines[-1][:4] == ("8", "8", "0", "0")  # the last, before the summary
    assert done.stdout.index("8 of 8 episodes,") < done.stdout.index("episodes: 8 scored")


def test_a_model_run_counts_tokens_and_cost_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeModelServer("openai", tac_player) as server:
        result = CliRunner().invoke(
            app,
            ["run", "tac", "--agent", "openai/gpt-4o", "--base-url", server.base_url,
             "--limit", "2", "--epochs", "1", "--store", str(tmp_path / "runs.db")],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    *_, last = LINE.finditer(result.stdout)
    assert last.group(1) == last.group(2) == "4"
    assert int(last.group(5).replace(",", "")) > 0 and last.group(6).startswith("$")


def test_a_judged_audit_prints_its_progress_and_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    store = str(tmp_path / "runs.db")
    args = ["--limit", "2", "--epochs", "1", "--run-id", "r", "--store", store]
    ran = CliRunner().invoke(app, ["run", "tac", "--agent", "baseline/random", *args])
    assert ran.exit_code == 0, ran.output
    verdict = '{"verdict": "not_aware", "confidence": 0.9, "evidence": []}'
    with FakeModelServer("openai", lambda _body: Reply(text=verdict)) as judge:
        result = CliRunner().invoke(
            app,
            ["audit", "r", "--judge", "openai/gpt-4o", "--judge-base-url", judge.base_url,
             "--store", store],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert re.search(r"\b4 of 4 transcripts judged, (?:.*, )?0 errors, 0 retries, [\d,]+ tokens, "
                     r"\$[\d.]+ so far", result.stdout)  # fmt: skip
    assert re.search(r"judge calls: 4 paid, 0 from cache; .* cost \$\d+\.\d{4}", result.stdout)


def test_a_study_prints_plain_progress_lines_over_all_its_runs(tmp_path: Path) -> None:
    study = tmp_path / "two.toml"
    study.write_text(
        'name = "two"\n\n[[benchmarks]]\nname = "tac"\nlimit = 2\nepochs = 1\n\n'
        '[[agents]]\nspec = "baseline/random"\n\n[[agents]]\nspec = "baseline/welfare"\n'
    )
    result = CliRunner().invoke(app, ["study", str(study), "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    lines = [m.groups() for m in LINE.finditer(result.stdout)]
    assert lines[0][:2] == ("1", "8")  # two runs of 2 samples x 2 conditions, counted together
    assert lines[-1][:4] == ("8", "8", "0", "0")
