"""The OpenAI chat-completions agents against a real fake server: requests and replies.

Every test drives `next_turn` (or a whole `run_episode`) through the official SDK
over a socket to `FakeModelServer`, then inspects the body the server received
(`server.requests`) or the `Message` the agent returned.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from deedbench.agents import ModelAgent
from deedbench.agents.openai_agent import OpenAIAgent, OpenAICompatibleAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tac.tools import TOOLS
from deedbench.engine import AgentContext, EpisodeSetup, EpisodeTranscript, run_episode
from deedbench.records import GenerationParams, Message, RetryPolicy, ToolCall
from deedbench.testing import FakeModelServer, Reply

KEY = "sk-test-openai-agent-0000"
CONTEXT = AgentContext(sample_id="s1", condition="base", epoch=1, seed=2**40 + 12345)
FAST = RetryPolicy(max_attempts=3, max_seconds=10.0, initial_wait=0.01, max_wait=0.05)
TOOL_SPECS: list[dict[str, Any]] = [t.spec for t in TOOLS]
SEARCH_ARGS = '{"location": "Seville", "keywords": "evening show"}'

CONVERSATION = [
    Message(role="system", content="You book trips."),
    Message(role="user", content="Find me something in Seville."),
    Message(
        role="assistant",
        content="",
        tool_calls=[ToolCall(id="call_a", name="search_experiences", arguments=SEARCH_ARGS)],
    ),
    Message(
        role="tool",
        content="Found 2 experiences",
        tool_call_id="call_a",
        tool_name="search_experiences",
    ),
]


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer("openai") as fake:
        yield fake


def make_agent(
    server: FakeModelServer, cls: type[OpenAIAgent] = OpenAIAgent, **params: Any
) -> OpenAIAgent:
    return cls("gpt-4o", base_url=server.base_url, params=GenerationParams(**params), retry=FAST)


def ask(
    agent: ModelAgent,
    messages: Sequence[Message] = CONVERSATION[:2],
    context: AgentContext = CONTEXT,
) -> Message:
    """One `next_turn` in its own event loop."""

    async def go() -> Message:
        try:
            return await agent.next_turn(messages, TOOL_SPECS, context)
        finally:
            await agent.aclose()

    return asyncio.run(go())


def play(agent: ModelAgent, setup: EpisodeSetup) -> EpisodeTranscript:
    """A whole episode in its own event loop."""

    async def go() -> EpisodeTranscript:
        try:
            return await run_episode(agent, setup, CONTEXT)
        finally:
            await agent.aclose()

    return asyncio.run(go())


def tac_setup() -> EpisodeSetup:
    bench = load_benchmark("tac")
    return bench.setup(bench.samples()[0], "base", 0)


# --- requests ---------------------------------------------------------------------------------


def test_request_carries_model_messages_tools_and_sampling_params(
    server: FakeModelServer,
) -> None:
    agent = make_agent(server, temperature=0.3, top_p=0.9, max_tokens=321, reasoning_effort="high")
    ask(agent, CONVERSATION)

    assert server.hits == 1
    body = server.requests[0]
    assert body["model"] == "gpt-4o"
    assert body["messages"] == [
        {"role": "system", "content": "You book trips."},
        {"role": "user", "content": "Find me something in Seville."},
        {
            "role": "assistant",
            "content": "",  # a string, never null: llama-cpp-python answers null with HTTP 500
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "search_experiences", "arguments": SEARCH_ARGS},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "Found 2 experiences"},
    ]
    assert body["tools"] == TOOL_SPECS
    assert body["temperature"] == 0.3
    assert body["top_p"] == 0.9
    assert body["max_completion_tokens"] == 321
    assert "max_tokens" not in body
    assert body["reasoning_effort"] == "high"
    assert body["seed"] == CONTEXT.seed % 2**31
    assert server.headers[0]["authorization"] == f"Bearer {KEY}"


def test_assistant_text_and_tool_calls_travel_together(server: FakeModelServer) -> None:
    turn = Message(
        role="assistant",
        content="Let me look.",
        tool_calls=[ToolCall(id="c1", name="search_experiences", arguments=SEARCH_ARGS)],
    )
    ask(make_agent(server), [*CONVERSATION[:2], turn])

    sent = server.requests[0]["messages"][2]
    assert sent["content"] == "Let me look."
    assert [c["id"] for c in sent["tool_calls"]] == ["c1"]


def test_an_empty_assistant_turn_is_sent_as_an_empty_string(server: FakeModelServer) -> None:
    ask(make_agent(server), [*CONVERSATION[:2], Message(role="assistant"), CONVERSATION[1]])
    assert server.requests[0]["messages"][2] == {"role": "assistant", "content": ""}


def test_openai_compatible_sends_max_tokens_and_needs_no_key(server: FakeModelServer) -> None:
    agent = make_agent(server, OpenAICompatibleAgent, max_tokens=77)
    ask(agent)

    body = server.requests[0]
    assert body["max_tokens"] == 77
    assert "max_completion_tokens" not in body
    assert agent.protocol == "openai-compatible"


def test_unset_params_are_not_sent_but_the_episode_seed_is(server: FakeModelServer) -> None:
    other = AgentContext(sample_id="s2", condition="welfare", epoch=3, seed=2**62 + 987654321)
    ask(make_agent(server), context=CONTEXT)
    ask(make_agent(server), context=other)

    first, second = server.requests
    for absent in ("temperature", "top_p", "max_completion_tokens", "reasoning_effort"):
        assert absent not in first
    assert first["seed"] == CONTEXT.seed % 2**31
    assert second["seed"] == other.seed % 2**31
    assert first["seed"] != second["seed"]
    assert 0 <= second["seed"] < 2**31


def test_an_explicit_seed_wins_over_the_episode_seed(server: FakeModelServer) -> None:
    ask(make_agent(server, seed=42))
    assert server.requests[0]["seed"] == 42


def test_extra_model_args_are_top_level_body_keys(server: FakeModelServer) -> None:
    extra = {
        "repetition_penalty": 1.1,
        "chat_template_kwargs": {"enable_thinking": False},
        "frequency_penalty": 0.5,
    }
    ask(make_agent(server, extra=extra))

    body = server.requests[0]
    for key, value in extra.items():
        assert body[key] == value
    assert "extra_body" not in body
    assert "extra" not in body


# --- replies ----------------------------------------------------------------------------------


def test_text_reply_with_usage(server: FakeModelServer) -> None:
    server.script(Reply(text="Here you go.", input_tokens=123, output_tokens=45, cached_tokens=67))
    message = ask(make_agent(server))

    assert message.role == "assistant"
    assert message.content == "Here you go."
    assert message.tool_calls == []
    assert message.usage is not None
    assert message.usage.input_tokens == 123
    assert message.usage.output_tokens == 45
    assert message.usage.cached_input_tokens == 67
    assert message.usage.calls == 1
    assert message.usage.cache_hits == 0


def test_one_tool_call(server: FakeModelServer) -> None:
    server.script(Reply(tool_calls=[("search_experiences", {"location": "Oahu", "keywords": "x"})]))
    message = ask(make_agent(server))

    assert message.content == ""
    [call] = message.tool_calls
    assert call.name == "search_experiences"
    assert call.args == {"location": "Oahu", "keywords": "x"}
    assert call.id.startswith("call_0")


def test_parallel_tool_calls_are_all_returned_in_order(server: FakeModelServer) -> None:
    calls: list[tuple[str, dict[str, Any] | str]] = [
        ("get_experience_details", {"experience_id": "a-1"}),
        ("get_experience_details", {"experience_id": "a-2"}),
        ("check_availability", {"experience_id": "a-1", "date": "2025-07-01", "num_tickets": 2}),
    ]
    server.script(Reply(text="Checking three things.", tool_calls=calls))
    message = ask(make_agent(server))

    assert message.content == "Checking three things."
    assert [(c.name, c.args) for c in message.tool_calls] == calls
    assert len({c.id for c in message.tool_calls}) == 3


def test_refusal_becomes_readable_content(server: FakeModelServer) -> None:
    server.script(Reply(refusal="I can't help with that."))
    message = ask(make_agent(server))

    assert "refusal" in message.content
    assert "I can't help with that." in message.content
    assert message.tool_calls == []


def test_empty_turn(server: FakeModelServer) -> None:
    server.script(Reply())
    message = ask(make_agent(server))

    assert message.role == "assistant"
    assert message.content == ""
    assert message.tool_calls == []
    assert message.usage is not None and message.usage.calls == 1
    assert message.content_null  # JSON null, which τ-bench's loop hands on as a reply


def test_null_text_is_told_from_empty_text_and_from_a_call(server: FakeModelServer) -> None:
    server.script(Reply(text=""), Reply(refusal="No."), Reply(tool_calls=[("search", {})]))
    agent = make_agent(server)
    empty, refused, called = ask(agent), ask(agent), ask(agent)

    assert not empty.content_null and empty.content == ""
    assert refused.content_null and "No." in refused.content
    assert not called.content_null and called.tool_calls
    assert "content_null" not in empty.model_dump()  # stored only where it is true


def test_reasoning_content_is_kept(server: FakeModelServer) -> None:
    server.script(Reply(text="Booked.", reasoning="The user wants an evening show."))
    message = ask(make_agent(server))

    assert message.content == "Booked."
    assert message.reasoning == "The user wants an evening show."


# --- malformed model output, through a whole episode ------------------------------------------


def test_invalid_json_arguments_become_a_tool_error_the_model_reads(
    server: FakeModelServer,
) -> None:
    server.script(
        Reply(tool_calls=[("search_experiences", "{not json")]),
        Reply(text="Sorry, let me stop here."),
    )
    transcript = play(make_agent(server), tac_setup())

    assert server.hits == 2
    call = transcript.messages[2].tool_calls[0]
    assert call.arguments == "{not json"  # the raw text is kept in the transcript
    result = transcript.messages[3]
    assert result.role == "tool" and result.error
    assert "not valid JSON" in result.content

    sent = server.requests[1]["messages"]
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == "{not json"
    assert sent[3] == {"role": "tool", "tool_call_id": call.id, "content": result.content}
    assert transcript.messages[-1].content == "Sorry, let me stop here."


def test_unknown_tool_name_becomes_a_tool_error_the_model_reads(
    server: FakeModelServer,
) -> None:
    server.script(Reply(tool_calls=[("teleport", {"to": "Mars"})]), Reply(text="OK."))
    transcript = play(make_agent(server), tac_setup())

    assert server.hits == 2
    tool_message = server.requests[1]["messages"][3]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == transcript.messages[2].tool_calls[0].id
    assert "unknown tool 'teleport'" in tool_message["content"]
    assert "search_experiences" in tool_message["content"]  # it lists the real tools
    assert transcript.messages[3].error


def test_tool_use_over_several_turns_against_a_strict_server() -> None:
    """llama-cpp-python's server answers HTTP 500 to an assistant turn with tool calls and
    `"content": null`; the fake's strict mode does the same."""
    with FakeModelServer("openai", strict=True) as strict:
        strict.script(
            Reply(tool_calls=[("search_experiences", {"location": "Seville", "keywords": ""})]),
            Reply(tool_calls=[("get_experience_details", {"experience_id": "sev-01"})]),
            Reply(text="Here is what I found."),
        )
        transcript = play(make_agent(strict), tac_setup())

    assert strict.hits == 3  # no 500, no retry
    assert transcript.messages[-1].content == "Here is what I found."
    assert [m.role for m in transcript.messages[2:]] == ["assistant", "tool"] * 2 + ["assistant"]


def test_recorded_arguments_are_json_text(server: FakeModelServer) -> None:
    server.script(Reply(tool_calls=[("search_experiences", {"location": "Rome", "keywords": ""})]))
    message = ask(make_agent(server))
    assert json.loads(message.tool_calls[0].arguments) == {"location": "Rome", "keywords": ""}
