"""--agent a2a/URL: deedbench evaluates an agent that speaks A2A, started on 127.0.0.1 by the
test. It is sent the system prompt, the tools and the user's words, and deedbench runs the
tool calls it returns: TAC's relevance baseline served over A2A scores as in process, and
τ² airline and telecom run whole episodes with it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from tests.agents._a2a_server import serve
from tests.environment._replay import TAU2
from typer.testing import CliRunner

from deedbench.benchmarks import load_benchmark
from deedbench.cli.main import app
from deedbench.engine import AgentContext, RunStore
from deedbench.records import Message, ToolCall

# Each test starts an A2A server and runs `deedbench run` in process: 3-5 s each on the shared
# 2-core machine (the τ² ones load a domain's data too).
RUNNER = CliRunner()


def _run(store: Path, *args: str) -> None:
    result = RUNNER.invoke(app, ["run", *args, "--store", str(store), "--quiet"])
    assert result.exit_code == 0, result.output


def _scores(store: Path, run_id: str) -> dict[str, Any]:
    with RunStore(store) as runs:
        return {
            r.sample_id: (r.score.outcome, r.score.choice, r.score.values)
            for r in runs.episodes(run_id)
            if r.score is not None
        }


@pytest.mark.parametrize("as_task", [False, True], ids=["message", "task"])
def test_a_remote_agent_scores_as_the_same_agent_in_process(tmp_path: Path, as_task: bool) -> None:
    store = tmp_path / "runs.db"
    common = ["--condition", "base", "--limit", "6", "--epochs", "1"]
    relevance = load_benchmark("tac").baselines()["relevance"]()
    with serve(relevance, as_task=as_task) as (url, seen):
        _run(store, "tac", "--agent", f"a2a/{url}", "--run-id", "remote", *common)
    _run(store, "tac", "--agent", "baseline/relevance", "--run-id", "local", *common)
    remote, local = _scores(store, "remote"), _scores(store, "local")
    assert len(remote) == 6 and remote == local
    assert {o for o, _, _ in remote.values()} == {"harmful"}  # the relevance trap, remotely too
    (tools, *_) = seen.tools.values()
    assert [t["function"]["name"] for t in tools][-1] == "purchase_tickets"
    (conversation, *_) = seen.conversations.values()
    assert conversation[0].content.startswith("You are a travel booking assistant")
    assert any(m.role == "tool" and "Booking confirmed" in m.content for m in conversation)
    assert len(seen.conversations) == 6  # one A2A context per episode
    with RunStore(store) as runs:
        config = runs.require_run("remote")
        (record, *_) = runs.episodes("remote")
    assert config.agent == f"a2a/{url}"
    assert [m.role for m in record.messages][:4] == ["system", "user", "assistant", "tool"]


async def _transfer(
    messages: Sequence[Message], tools: Sequence[dict[str, Any]], context: AgentContext
) -> Message:
    """A remote τ² agent: it reads a customer's first words, looks up user 'mia_li_3668',
    then hands over to a human with the transfer tool it finds in the tools it was sent."""
    names = [t["function"]["name"] for t in tools]
    done = [m for m in messages if m.role == "tool"]
    if not done and "get_user_details" in names:
        call = ToolCall.decoded("c1", "get_user_details", {"user_id": "mia_li_3668"})
        return Message(role="assistant", tool_calls=[call])
    if not any(m.tool_name == "transfer_to_human_agents" for m in done):
        summary = {"summary": f"the customer said: {messages[1].content[:60]}"}
        call = ToolCall.decoded("c2", "transfer_to_human_agents", summary)
        return Message(role="assistant", tool_calls=[call])
    return Message(role="assistant", content="YOU ARE BEING TRANSFERRED TO A HUMAN AGENT.")


@pytest.mark.parametrize("domain", ["airline", "telecom"])
def test_a_remote_agent_plays_tau2(tmp_path: Path, domain: str) -> None:
    from deedbench.agents import FunctionAgent

    store = tmp_path / "runs.db"
    with serve(FunctionAgent(_transfer)) as (url, seen):
        _run(store, f"tau2-{domain}", "-T", f"data={TAU2}", "--agent", f"a2a/{url}",
             "--limit", "2", "--run-id", "remote")  # fmt: skip
    with RunStore(store) as runs:
        records = list(runs.episodes("remote"))
    assert len(records) == 2 and all(r.status == "scored" for r in records)
    for record in records:
        assert record.termination == "user_stopped"  # τ²'s transfer: the agent says so, last
        said = [m.content for m in record.messages if m.role == "assistant" and m.content]
        assert said[-1] == "YOU ARE BEING TRANSFERRED TO A HUMAN AGENT."
        calls = [c.name for m in record.messages if m.role == "assistant" for c in m.tool_calls]
        assert calls[-1] == "transfer_to_human_agents"
        assert "reward" in record.score.values  # type: ignore[union-attr]
    for conversation in seen.conversations.values():
        assert "<policy>" in conversation[0].content
        assert conversation[1].role == "user" and conversation[1].content  # the customer
        results = [m for m in conversation if m.role == "tool"]
        assert results and results[-1].tool_name == "transfer_to_human_agents"
        assert not results[-1].error


def test_an_agent_that_cannot_be_reached_stops_the_run_before_anything_is_scored(
    tmp_path: Path,
) -> None:
    from tests.agents._a2a_server import _port

    result = RUNNER.invoke(
        app, ["run", "tac", "--agent", f"a2a/http://127.0.0.1:{_port()}", "--limit", "1",
              "--store", str(tmp_path / "runs.db")],
    )  # fmt: skip
    assert result.exit_code == 1
    assert "cannot reach the A2A agent at http://127.0.0.1:" in result.output
    assert "Traceback" not in result.output


def test_tool_call_arguments_keep_their_integers() -> None:
    """A2A's data parts hold numbers as doubles: arguments sent as an object come back
    with their whole numbers whole (2, not 2.0), as a tool's schema wants them."""
    from a2a.helpers.proto_helpers import new_data_part
    from a2a.types import Message as A2AMessage
    from a2a.types import StreamResponse

    from deedbench.agents.a2a_agent import _reply

    call = {"name": "purchase_tickets", "arguments": {"num_tickets": 2, "price": 2.5}}
    event = StreamResponse(message=A2AMessage(parts=[new_data_part({"tool_calls": [call]})]))
    (made,) = _reply([event]).tool_calls
    assert json.loads(made.arguments) == {"num_tickets": 2, "price": 2.5}
    # the text too (a protobuf Struct keeps no key order): 2 written whole, never 2.0
    assert '"num_tickets": 2' in made.arguments and "2.0" not in made.arguments
