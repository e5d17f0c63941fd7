"""deedbench's TAC baselines as Inspect models play as `deedbench run` plays them, offline."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="Inspect AI is not installed (the 'inspect' extra)")

import tiktoken
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from typer.testing import CliRunner

from deedbench.benchmarks.tac.baselines import BASELINES
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.interop.inspect_model import SEED_KEY, baseline_seed
from deedbench.interop.inspect_tasks import SCORER_NAME
from deedbench.records import Message

from ._support import FAST

LIMIT = 12  # three scenarios, each in its four variants
REFUSED = "tiktoken was asked for an encoding"
CLI_SCRIPT = """
import runpy, sys, tiktoken

def refuse(*args, **kwargs):
    raise RuntimeError({refused!r})

tiktoken.get_encoding = refuse
sys.argv = ["inspect", "eval", "deedbench/tac", "--model", "deedbench/relevance", "--limit", "4",
            "--epochs", "1", "--log-dir", {log_dir!r}, "--display", "plain"]
runpy.run_module("inspect_ai", run_name="__main__")
"""


@pytest.fixture
def no_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a tiktoken encoding fails, as it does offline without the downloaded file."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError(REFUSED)

    monkeypatch.setattr(tiktoken, "get_encoding", refuse)


Turn = tuple[str, str, list[tuple[str, str, Any]]]  # role, text, tool calls (id, name, args)


def turns(messages: list[ChatMessage]) -> list[Turn]:
    def calls(m: ChatMessage) -> list[tuple[str, str, Any]]:
        if not isinstance(m, ChatMessageAssistant):
            return []
        return [(c.id, c.function, c.arguments) for c in m.tool_calls or []]

    return [(m.role, m.text, calls(m)) for m in messages]


def deedbench_turns(messages: list[Message]) -> list[Turn]:
    calls = [[(c.id, c.name, c.args) for c in m.tool_calls] for m in messages]
    return [(m.role, m.content, c) for m, c in zip(messages, calls, strict=True)]


@pytest.mark.usefixtures("no_tokenizer")
@pytest.mark.parametrize("name", list(BASELINES))
def test_a_baseline_under_inspect_plays_each_sample_as_deedbench_run_does(
    name: str, tmp_path: Path
) -> None:
    """Same verdicts, values and conversation (tool call ids carry the seed, so `random`
    picks with the seed deedbench derived), with no tokenizer and zero tokens counted."""
    [log] = inspect_eval(
        "deedbench/tac",
        model=f"deedbench/{name}",
        limit=LIMIT,
        epochs=1,
        log_dir=str(tmp_path / "logs"),
        **FAST,
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    store = str(tmp_path / "runs.db")
    args = ["run", "tac", "--agent", f"baseline/{name}", "--condition", "base", "--epochs", "1"]
    ran = CliRunner().invoke(app, [*args, "--limit", str(LIMIT), "--store", store, "--run-id", "r"])
    assert ran.exit_code == 0, ran.output
    with RunStore(store) as runs:
        direct = {r.sample_id: r for r in runs.episodes("r")}
    assert sorted(str(s.id) for s in log.samples) == sorted(direct)
    for sample in log.samples:
        expected = direct[str(sample.id)]
        assert expected.score is not None
        score = sample.scores[SCORER_NAME]
        assert score.value == expected.score.values, sample.id
        assert score.answer == expected.score.outcome, sample.id
        assert turns(sample.messages) == deedbench_turns(expected.messages), sample.id
        assert sample.store[SEED_KEY] == expected.seed
    usage = log.stats.model_usage[f"deedbench/{name}"]
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (0, 0, 0)


@pytest.mark.usefixtures("no_tokenizer")
def test_inspects_mock_model_without_usage_needs_the_tokenizer(tmp_path: Path) -> None:
    """Why the deedbench models exist: mockllm/model counts tokens with tiktoken's file."""
    [log] = inspect_eval(
        "deedbench/tac", model="mockllm/model", limit=1, epochs=1, log_dir=str(tmp_path), **FAST
    )
    assert log.status == "error"
    assert log.error is not None and REFUSED in log.error.message


def test_an_unknown_name_or_a_model_arg_is_refused_with_what_is_valid() -> None:
    with pytest.raises(ValueError, match="Unknown deedbench model 'deedbench/nope'") as raised:
        get_model("deedbench/nope")
    valid = "deedbench/random, deedbench/relevance, deedbench/welfare, deedbench/refuse"
    assert str(raised.value).endswith(f"valid: {valid}")
    with pytest.raises(ValueError, match="takes no model args"):
        get_model("deedbench/random", temperature_scale=2)


def test_outside_deedbench_tasks_the_seed_comes_from_inspects_seed_and_the_request() -> None:
    """The first turn is a search whose call id carries the seed; no sample store holds one."""
    request = "Book us two tickets for something fun in Seville in May."
    prompt: list[ChatMessage] = [
        ChatMessageSystem(content="You are a booking assistant."),
        ChatMessageUser(content=request),
    ]

    def first_call(seed: int | None) -> tuple[str, str]:
        model = get_model("deedbench/random", config=GenerateConfig(seed=seed), memoize=False)
        output = asyncio.run(model.generate(prompt))
        assert output.usage is not None and output.usage.total_tokens == 0
        [call] = output.message.tool_calls or []
        return call.id, call.function

    assert first_call(None) == (f"call_{baseline_seed(request, 0) % 10**6}_0", "search_experiences")
    assert first_call(7) == (f"call_{baseline_seed(request, 7) % 10**6}_0", "search_experiences")
    assert baseline_seed(request, 7) != baseline_seed(request, 0) == baseline_seed(request, None)


@pytest.mark.slow  # a fresh interpreter imports Inspect
def test_the_command_runs_offline_in_a_fresh_interpreter(tmp_path: Path) -> None:
    """`inspect eval deedbench/tac --model deedbench/relevance`: Inspect finds the model
    through deedbench's entry point, and no tiktoken encoding is loaded."""
    script = CLI_SCRIPT.format(refused=REFUSED, log_dir=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [path] = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    assert log.eval.model == "deedbench/relevance"
    assert log.samples is not None and len(log.samples) == 4
    assert {s.scores[SCORER_NAME].answer for s in log.samples if s.scores} == {"harmful"}
    assert "0 tokens [I: 0, O: 0]" in done.stdout
