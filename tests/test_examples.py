"""The two example agents of docs/agents.md, each run as a user runs it: the installed
`deedbench` console script in a folder holding the example file, without PYTHONPATH."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deedbench.benchmarks.tac import TacBenchmark
from deedbench.engine import RunStore
from deedbench.records import EpisodeRecord
from deedbench.testing import FakeModelServer, tac_player

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPT = Path(sys.executable).parent / "deedbench"

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="no deedbench console script")


def run_example(
    folder: Path, example: str, spec: str, *args: str, env: dict[str, str] | None = None
) -> list[EpisodeRecord]:
    """`deedbench run tac --agent SPEC` beside a copy of the example; the stored records."""
    shutil.copy(EXAMPLES / example, folder / example)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DEEDBENCH_STORE")}
    done = subprocess.run(
        [str(SCRIPT), "run", "tac", "--agent", spec, "--epochs", "1", "--run-id", "ex", *args],
        cwd=folder, env=clean | (env or {}), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with RunStore(folder / "deedbench.db") as runs:
        return list(runs.episodes("ex"))


def test_the_cheapest_agent_buys_the_cheapest_listing_of_every_sample(tmp_path: Path) -> None:
    records = run_example(tmp_path, "cheapest.py", "python/cheapest:cheapest")
    bench = TacBenchmark()
    assert len(records) == 96
    for record in records:
        assert record.score is not None and record.score.values["purchased"] == 1.0
        listings = bench.variant(record.sample_id).experiences
        assert record.score.choice == min(listings, key=lambda e: e.price).id, record.sample_id
    # the report calls it the user's own agent, not a baseline
    page = tmp_path / "report.html"
    subprocess.run(
        [str(SCRIPT), "report", "ex", "--html", str(page)], cwd=tmp_path, check=True,
        capture_output=True,
    )  # fmt: skip
    text = page.read_text(encoding="utf-8")
    assert "No model calls were recorded (your own agent, python/cheapest:cheapest)" in text
    assert "baseline agent" not in text


def test_the_model_agent_asks_an_openai_compatible_server(tmp_path: Path) -> None:
    with FakeModelServer("openai", tac_player) as server:
        records = run_example(
            tmp_path, "ask_model.py", "python/ask_model:agent", "--limit", "2",
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-example",
                 "ASK_MODEL": "example-model"},
        )  # fmt: skip
        requests = list(server.requests)
    assert len(records) == 4
    for record in records:
        assert record.score is not None and record.score.values["purchased"] == 1.0
        assert [c.name for m in record.messages for c in m.tool_calls] == [
            "search_experiences", "purchase_tickets",
        ]  # fmt: skip
    assert len(requests) == 4 * 3  # search, buy, say so: three turns an episode
    assert {r["model"] for r in requests} == {"example-model"}
    assert {t["function"]["name"] for t in requests[0]["tools"]} == {
        "search_experiences", "get_experience_details", "check_availability", "purchase_tickets",
    }  # fmt: skip
    # the tool results went back as OpenAI tool messages answering their calls
    answered = [r["messages"] for r in requests if r["messages"][-1]["role"] == "tool"]
    assert len(answered) == 4 * 2
    for sent in answered:
        assert sent[-1]["tool_call_id"] == sent[-2]["tool_calls"][0]["id"]


def test_the_example_benchmark_refuses_a_count_it_does_not_have(tmp_path: Path) -> None:
    """docs/adding-a-benchmark.md's wordbench has three words: count=5 is an error naming
    the values it takes, not a run of three."""
    shutil.copy(EXAMPLES / "wordbench.py", tmp_path / "wordbench.py")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DEEDBENCH_STORE")}
    base = [str(SCRIPT), "run", "python/wordbench:WordBench", "--agent", "baseline/knower"]

    def run(count: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, "-T", f"count={count}", "--run-id", f"w{count}"],
            cwd=tmp_path, env=clean, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    refused = run("5")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (
        "error: python/wordbench:WordBench option count must be one of 1, 2, 3; got '5'"
    )
    done = run("3")
    assert done.returncode == 0, done.stdout + done.stderr
    with RunStore(tmp_path / "deedbench.db") as runs:
        assert runs.run_ids() == ["w3"]
        assert len(list(runs.episodes("w3"))) == 3 * 2  # three words, two conditions


def test_the_guides_wordbench_is_the_example_file() -> None:
    """The module the adding-a-benchmark guide shows is examples/wordbench.py, byte for byte,
    so the code a reader copies is the code the tests run."""
    guide = (EXAMPLES.parent / "docs" / "adding-a-benchmark.md").read_text(encoding="utf-8")
    shown = re.findall(r"```python\n(.*?)```", guide, re.S)[0]
    assert shown == (EXAMPLES / "wordbench.py").read_text(encoding="utf-8")
