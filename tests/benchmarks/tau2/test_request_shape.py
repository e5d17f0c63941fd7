"""The request a τ² episode sends has τ²'s shape where a provider may read it otherwise:
τ²'s ``generate`` sends ``tool_choice: "auto"`` whenever it sends tools (the agent's and
the user simulator's requests), its solo agent ``"required"``, and its judge no tools and
no tool choice. Checked on the bodies deedbench's OpenAI-compatible and Anthropic clients
send to the fake servers on 127.0.0.1, over whole episodes of a domain whose customer has
tools there). Other benchmarks send no tool choice, as before (τ-bench sends none)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.agents.model import ModelAgent
from deedbench.agents.openai_agent import OpenAICompatibleAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tau2.judge import run_judge
from deedbench.engine import AgentContext, run_episode
from deedbench.records import Message, RetryPolicy
from deedbench.testing import FakeModelServer, Reply

from . import _reference
from .mock_benchmark import MockTau2Benchmark

FAST = RetryPolicy(max_attempts=1)


def _system(body: dict[str, Any]) -> str:
    if "system" in body:  # Anthropic's
        return str(body["system"])
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def _respond(body: dict[str, Any]) -> Reply:
    """The customer says what is wrong, calls a phone tool, then stops; the agent answers
    in words (the solo agent calls ``done``)."""
    system = _system(body)
    if "<scenario>" in system:
        said = [m for m in body["messages"] if m.get("role") == "assistant"]  # its own turns
        if not said:
            return Reply(text="My phone has no data.")
        if len(said) == 1:
            return Reply(tool_calls=[("check_notifications", {})])
        return Reply(text="Thanks, bye. ###STOP###")
    if "<ticket>" in system:
        return Reply(tool_calls=[("done", {})])
    return Reply(text="Please restart your phone.")


def _episode(protocol: str, options: dict[str, str]) -> list[dict[str, Any]]:
    """The request bodies of one telecom episode with a model agent and a model user."""
    bench = MockTau2Benchmark({"data": str(_reference.DATA), **options})
    with FakeModelServer(protocol, _respond) as server:  # type: ignore[arg-type]
        kind: Any = OpenAICompatibleAgent if protocol == "openai" else AnthropicAgent
        agent: ModelAgent = kind("agent", base_url=server.base_url, retry=FAST)
        user: ModelAgent = kind("user", base_url=server.base_url, retry=FAST)
        if bench.user.startswith("llm:"):
            bench.use_user_model(user)
        sample = next(s for s in bench.samples() if s.id == "create_task_1")

        async def go() -> None:
            try:
                setup = bench.setup(sample, "default", 0)
                await run_episode(agent, setup, AgentContext(sample.id, "default", 1, 0))
            finally:
                await agent.aclose()
                await user.aclose()

        asyncio.run(go())
        return list(server.requests)


def test_the_agent_and_the_user_ask_for_tool_choice_auto_as_tau2_does() -> None:
    bodies = _episode("openai", {"user": "llm:openai-compatible/user"})
    agents = [b for b in bodies if b["model"] == "agent"]
    users = [b for b in bodies if b["model"] == "user"]
    assert agents and users
    assert all(b["tools"] and b["tool_choice"] == "auto" for b in agents + users)
    user_tools = {t["function"]["name"] for t in users[0]["tools"]}
    assert "check_notifications" in user_tools and "check_notifications" not in {
        t["function"]["name"] for t in agents[0]["tools"]
    }
    # the customer's call went back to its model beside no text: "" (llama-cpp-python's
    # server answers JSON null there with HTTP 500; OpenAI and vLLM read both alike)
    called = [m for b in users for m in b["messages"] if m.get("tool_calls")]
    assert called and all(m["content"] == "" for m in called)


def test_the_solo_agent_asks_for_a_tool_call_as_tau2s_does() -> None:
    bodies = _episode("openai", {"mode": "solo"})
    assert bodies and all(b["tool_choice"] == "required" for b in bodies)
    assert bodies[0]["tools"][-1]["function"]["name"] == "done"


def test_anthropic_requests_say_the_same_in_anthropics_words(  # a few s: the SDK import
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    bodies = _episode("anthropic", {"user": "llm:anthropic/user"})
    assert bodies and all(b["tool_choice"] == {"type": "auto"} for b in bodies)


def test_the_judge_and_other_benchmarks_send_no_tool_choice() -> None:
    with FakeModelServer("openai") as server:
        model = OpenAICompatibleAgent("judge", base_url=server.base_url, retry=FAST)
        reply = '{"results": [{"expectedOutcome": "a", "reasoning": "r", "metExpectation": true}]}'
        server.script(Reply(text=reply), Reply(text="done"))
        messages = [Message(role="assistant", content="Hello.")]
        tac = load_benchmark("tac")
        setup = tac.setup(tac.samples()[0], "base", 0)

        async def go() -> None:
            try:
                context = AgentContext("judge", "default", 0, 0, tool_choice="auto")
                await run_judge(model, messages, ["a"], context)
                await model.next_turn(
                    setup.messages, setup.toolbox.specs(), AgentContext("t", "base", 1, 0)
                )
            finally:
                await model.aclose()

        asyncio.run(go())
        judge, other = server.requests
    assert "tools" not in judge and "tool_choice" not in judge
    assert other["tools"] and "tool_choice" not in other
