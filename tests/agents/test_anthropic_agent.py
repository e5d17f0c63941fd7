"""The Anthropic Messages agent against a real fake server: requests and replies.

Every test drives `next_turn` (or a whole `run_episode`) through the official SDK
over a socket to `FakeModelServer("anthropic")`, then inspects the body the server
received (`server.requests`) or the `Message` the agent returned.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from deedbench.agents import ModelAgent
from deedbench.agents.anthropic_agent import AnthropicAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tac.tools import TOOLS
from deedbench.engine import AgentContext, EpisodeSetup, EpisodeTranscript, run_episode
from deedbench.records import GenerationParams, Message, RetryPolicy, ToolCall
from deedbench.testing import FakeModelServer, Reply

KEY = "sk-ant-test-anthropic-agent-0000"
MODEL = "claude-sonnet-4-20250514"
CONTEXT = AgentContext(sample_id="s1", condition="base", epoch=1, seed=2**40 + 12345)
FAST = RetryPolicy(max_attempts=3, max_seconds=10.0, initial_wait=0.01, max_wait=0.05)
TOOL_SPECS: list[dict[str, Any]] = [t.spec for t in TOOLS]
SEARCH = {"location": "Seville", "keywords": "evening show"}
DETAILS = {"experience_id": "sev-01"}

CONVERSATION = [
    Message(role="system", content="You book trips."),
    Message(role="user", content="Find me something in Seville."),
]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer("anthropic") as fake:
        yield fake


def make_agent(server: FakeModelServer, **params: Any) -> AnthropicAgent:
    return AnthropicAgent(
        MODEL, base_url=server.base_url, params=GenerationParams(**params), retry=FAST
    )


def ask(
    agent: ModelAgent, messages: Sequence[Message] = CONVERSATION, context: AgentContext = CONTEXT
) -> Message:
    """One `next_turn` in its own event loop."""

    async def go() -> Message:
        try:
            return await agent.next_turn(messages, TOOL_SPECS, context)
        finally:
            await agent.aclose()

    return asyncio.run(go())


def play(agent: ModelAgent, setup: EpisodeSetup) -> EpisodeTranscript:
    async def go() -> EpisodeTranscript:
        try:
            return await run_episode(agent, setup, CONTEXT)
        finally:
            await agent.aclose()

    return asyncio.run(go())


def assert_alternates(messages: list[dict[str, Any]]) -> None:
    roles = [m["role"] for m in messages]
    assert roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    assert all(m["content"] for m in messages), "no turn may be empty"


# --- requests ---------------------------------------------------------------------------------


def test_request_has_system_apart_tools_with_input_schema_and_params(
    server: FakeModelServer,
) -> None:
    agent = make_agent(server, temperature=0.3, top_p=0.9, max_tokens=321, reasoning_effort="low")
    ask(agent)

    assert server.hits == 1
    body = server.requests[0]
    assert body["model"] == MODEL
    assert body["system"] == "You book trips."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Find me something in Seville."}]}
    ]
    assert body["tools"] == [
        {
            "name": t.name,
            "description": t.description,
            "input_schema": t.parameters,
        }
        for t in TOOLS
    ]
    assert body["max_tokens"] == 321
    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.9
    assert body["output_config"] == {"effort": "low"}
    for absent in ("seed", "reasoning_effort", "max_completion_tokens"):
        assert absent not in body
    assert any(KEY in value for value in server.headers[0].values())  # the key was sent


def test_defaults_send_max_tokens_and_nothing_unset(server: FakeModelServer) -> None:
    ask(make_agent(server))

    body = server.requests[0]
    assert body["max_tokens"] == 4096  # the Messages API requires one
    for absent in ("temperature", "top_p", "output_config", "seed"):
        assert absent not in body


def test_tool_results_travel_in_one_user_turn_and_alternation_holds(
    server: FakeModelServer,
) -> None:
    conversation = [
        *CONVERSATION,
        Message(
            role="assistant",
            content="Let me look.",
            tool_calls=[
                ToolCall(id="toolu_a", name="search_experiences", arguments=json.dumps(SEARCH)),
                ToolCall(
                    id="toolu_b", name="get_experience_details", arguments='{"experience_id": 1}'
                ),
            ],
        ),
        Message(role="tool", content="Found 2", tool_call_id="toolu_a"),
        Message(role="tool", content="Error: bad id", tool_call_id="toolu_b", error=True),
        Message(role="assistant", content=""),  # an empty turn in history
        Message(role="user", content="Go ahead."),
    ]
    ask(make_agent(server), conversation)

    sent = server.requests[0]["messages"]
    assert_alternates(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_a", "name": "search_experiences", "input": SEARCH},
        {
            "type": "tool_use",
            "id": "toolu_b",
            "name": "get_experience_details",
            "input": {"experience_id": 1},
        },
    ]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "Found 2", "is_error": False},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_b",
            "content": "Error: bad id",
            "is_error": True,
        },
    ]
    assert sent[3]["content"][0]["type"] == "text" and sent[3]["content"][0]["text"]
    assert sent[4]["content"] == [{"type": "text", "text": "Go ahead."}]


def test_extra_model_args_are_top_level_body_keys(server: FakeModelServer) -> None:
    extra = {"top_k": 5, "custom_flag": True, "metadata": {"user_id": "tester"}}
    ask(make_agent(server, extra=extra))

    body = server.requests[0]
    for key, value in extra.items():
        assert body[key] == value
    assert "extra_body" not in body


# --- replies ----------------------------------------------------------------------------------


def test_text_reply_with_usage(server: FakeModelServer) -> None:
    server.script(Reply(text="Here you go.", input_tokens=123, output_tokens=45))
    message = ask(make_agent(server))

    assert message.role == "assistant"
    assert message.content == "Here you go."
    assert message.tool_calls == []
    assert message.reasoning is None
    assert message.provider_content is None
    assert message.usage is not None
    assert message.usage.input_tokens == 123
    assert message.usage.output_tokens == 45
    assert message.usage.calls == 1
    assert message.usage.cache_hits == 0


def test_cache_read_tokens_are_reported_as_cached(server: FakeModelServer) -> None:
    server.script(Reply(text="Hi.", input_tokens=150, cached_tokens=50))
    message = ask(make_agent(server))

    assert message.usage is not None
    assert message.usage.cached_input_tokens == 50


def test_input_tokens_include_cache_reads(server: FakeModelServer) -> None:
    # Anthropic: total input = input_tokens + cache_read_input_tokens (+ cache creation).
    server.script(Reply(text="Hi.", input_tokens=20, cached_tokens=80))
    message = ask(make_agent(server))

    assert message.usage is not None
    assert message.usage.cached_input_tokens == 80
    assert message.usage.input_tokens == 100


def test_one_tool_call(server: FakeModelServer) -> None:
    server.script(Reply(tool_calls=[("search_experiences", SEARCH)]))
    message = ask(make_agent(server))

    assert message.content == ""
    [call] = message.tool_calls
    assert call.name == "search_experiences"
    assert call.args == SEARCH
    assert call.id.startswith("toolu_")


def test_parallel_tool_calls_are_all_returned_in_order(server: FakeModelServer) -> None:
    calls: list[tuple[str, dict[str, Any] | str]] = [
        ("get_experience_details", {"experience_id": "a-1"}),
        ("get_experience_details", {"experience_id": "a-2"}),
        ("check_availability", {"experience_id": "a-1", "date": "2025-07-01", "num_tickets": 2}),
    ]
    server.script(Reply(text="Checking.", tool_calls=calls))
    message = ask(make_agent(server))

    assert message.content == "Checking."
    assert [(c.name, c.args) for c in message.tool_calls] == calls
    assert len({c.id for c in message.tool_calls}) == 3


def test_refusal_becomes_readable_content(server: FakeModelServer) -> None:
    server.script(Reply(refusal="declined"))
    message = ask(make_agent(server))

    assert "refusal" in message.content
    assert message.tool_calls == []


def test_empty_turn(server: FakeModelServer) -> None:
    server.script(Reply())
    message = ask(make_agent(server))

    assert message.content == ""
    assert message.tool_calls == []
    assert message.usage is not None and message.usage.calls == 1


def test_thinking_is_kept_and_sent_back_verbatim(server: FakeModelServer) -> None:
    server.script(
        Reply(reasoning="They want a show.", tool_calls=[("search_experiences", SEARCH)]),
        Reply(text="Found it."),
    )
    first = ask(make_agent(server))

    assert first.reasoning == "They want a show."
    assert first.provider_content is not None
    kinds = [b["type"] for b in first.provider_content]
    assert kinds == ["thinking", "tool_use"]
    thinking = first.provider_content[0]
    assert thinking["thinking"] == "They want a show."
    assert thinking["signature"] == "fake-sig"
    [call] = first.tool_calls

    history = [
        *CONVERSATION,
        first,
        Message(role="tool", content="Found 2", tool_call_id=call.id),
    ]
    second = ask(make_agent(server), history)

    assert second.content == "Found it."
    sent = server.requests[1]["messages"]
    assert_alternates(sent)
    assert sent[1] == {"role": "assistant", "content": first.provider_content}
    assert sent[1]["content"][1]["id"] == call.id
    assert sent[2]["content"][0]["tool_use_id"] == call.id


# --- malformed model output, through a whole episode ------------------------------------------


def test_unknown_tool_name_becomes_a_tool_error_the_model_reads(
    server: FakeModelServer,
) -> None:
    bench = load_benchmark("tac")
    setup = bench.setup(bench.samples()[0], "base", 0)
    server.script(Reply(tool_calls=[("teleport", {"to": "Mars"})]), Reply(text="OK."))
    transcript = play(make_agent(server), setup)

    assert server.hits == 2
    call = transcript.messages[2].tool_calls[0]
    sent = server.requests[1]["messages"]
    assert_alternates(sent)
    [result] = sent[-1]["content"]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == call.id
    assert result["is_error"] is True
    assert "unknown tool 'teleport'" in result["content"]


def test_invalid_arguments_become_a_tool_error_the_model_reads(server: FakeModelServer) -> None:
    bench = load_benchmark("tac")
    setup = bench.setup(bench.samples()[0], "base", 0)
    server.script(Reply(tool_calls=[("search_experiences", {"location": 7})]), Reply(text="Sorry."))
    play(make_agent(server), setup)

    [result] = server.requests[1]["messages"][-1]["content"]
    assert result["is_error"] is True
    assert "invalid arguments for search_experiences" in result["content"]
    assert "keywords" in result["content"]  # the missing argument is named
