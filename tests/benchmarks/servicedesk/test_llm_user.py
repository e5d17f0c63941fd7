"""The model-played customer: its prompt's wording and identity come from the domain, it sees
the conversation from the customer's side, and it ends only with the stop token."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from deedbench.agents import FunctionAgent
from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.retail import RETAIL, RetailBenchmark
from deedbench.benchmarks.servicedesk import STOP, LLMUser, UserInstructions, user_prompt
from deedbench.benchmarks.taubench import TaubenchAirlineBenchmark
from deedbench.engine import AgentContext
from deedbench.records import Message, ToolCall

AIRLINE_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "taubench" / "airline"
CONTEXT = AgentContext("s1:user", "default", 0, 7)

BEHAVE = (
    "How to behave: write one short message at a time, the way people type to a help desk. Say "
    "only what you know from the lines above; if asked for something you do not know, say you "
    "don't know. Agree to a proposed change only if it is exactly what you want; otherwise say "
    "no and explain. Do not make up ids, addresses or numbers. When everything you want is "
    "done, or cannot be done, write ###STOP### on its own to end the conversation."
)
# The retail prompt as it was before the wording came from the domain (prompt retail-user-1):
# it must stay byte for byte what runs recorded under that version were given.
RETAIL_EMAIL_PROMPT = (
    "You are a customer writing to an online shop's help desk. Play this person; you are not "
    "an assistant.\n\nWho you are: Ada Lee. When asked to identify yourself, give your email, "
    "ada.lee@example.com. Do not volunteer it before you are asked.\n\nWhat you want, in this "
    "order:\n- cancel order #W1000001 please\n- and what is its total?\n\nWhat you refuse:\n- "
    "any change you did not ask for\n\n" + BEHAVE
)
RETAIL_NAME_ZIP_PROMPT = (
    "You are a customer writing to an online shop's help desk. Play this person; you are not "
    "an assistant.\n\nWho you are: Ada Lee. When asked to identify yourself, give your name, "
    "Ada Lee, and zip code 10001. Do not volunteer it before you are asked.\n\nWhat you want, "
    "in this order:\nYou are Ada Lee. You want to cancel order #W1000001.\n\nWhat you refuse:\n"
    "- whatever the instructions above rule out\n\n" + BEHAVE
)


def instructions(identify_by: str, **changes: Any) -> UserInstructions:
    fields: dict[str, Any] = {
        "user_id": "ada_lee_1",
        "first_name": "Ada",
        "last_name": "Lee",
        "zip": "10001",
        "email": "ada.lee@example.com",
        "identify_by": identify_by,
        "wants": [
            {"kind": "cancel", "say": "cancel order #W1000001 please"},
            {"kind": "info", "say": "and what is its total?"},
        ],
        "refuses": ["any change you did not ask for"],
    }
    return UserInstructions.model_validate({**fields, **changes})


def test_the_retail_prompt_is_unchanged_byte_for_byte() -> None:
    assert user_prompt(instructions("email"), RETAIL) == RETAIL_EMAIL_PROMPT
    free = instructions(
        "name_zip", refuses=[], free_text="You are Ada Lee. You want to cancel order #W1000001."
    )
    assert user_prompt(free, RETAIL) == RETAIL_NAME_ZIP_PROMPT


def test_an_airline_customer_writes_to_an_airline_and_gives_its_user_id() -> None:
    prompt = user_prompt(instructions("user_id"), AIRLINE)
    assert prompt.startswith("You are a customer writing to an airline's help desk. ")
    assert "When asked to identify yourself, give your user id, ada_lee_1. " in prompt
    assert "online shop" not in prompt and "zip code" not in prompt
    assert prompt.endswith(BEHAVE)


def test_each_domain_versions_its_prompt() -> None:
    assert RETAIL.customer.prompt_version == "retail-user-1"
    assert AIRLINE.customer.prompt_version == "airline-user-1"
    assert RetailBenchmark().user_prompt_version == "retail-user-1"


def recording(seen: list[list[Message]], answer: str) -> FunctionAgent:
    def turn(messages: Sequence[Message], tools: Sequence[dict[str, Any]], _: Any) -> str:
        seen.append(list(messages))
        assert not tools  # the customer is offered no tools
        return answer

    return FunctionAgent(turn)


def test_the_customer_sees_the_conversation_from_its_side() -> None:
    seen: list[list[Message]] = []
    user = LLMUser(
        recording(seen, "  my email is ada.lee@example.com "),
        instructions("email"),
        RETAIL,
        CONTEXT,
    )
    call = ToolCall(id="c1", name="find_user_id_by_email", arguments="{}")
    conversation = [
        Message(role="system", content="the desk's policy"),
        Message(role="user", content="cancel order #W1000001 please"),
        Message(role="assistant", content="What is your email?"),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content="ada_lee_1", tool_call_id="c1"),
    ]
    reply = asyncio.run(user.reply(conversation))
    assert reply is not None and reply.role == "user"
    assert reply.content == "my email is ada.lee@example.com" and not user.finished
    system, *rest = seen[0]
    assert system == Message(role="system", content=RETAIL_EMAIL_PROMPT)
    assert [(m.role, m.content) for m in rest] == [
        ("assistant", "cancel order #W1000001 please"),
        ("user", "What is your email?"),
    ]


def test_the_customer_opens_after_a_greeting_and_ends_with_the_stop_token() -> None:
    seen: list[list[Message]] = []
    user = LLMUser(
        recording(seen, f"Thanks, bye. {STOP}"), instructions("user_id"), AIRLINE, CONTEXT
    )
    reply = asyncio.run(user.reply([Message(role="system", content="policy")]))
    assert seen[0][1] == Message(role="user", content="Hello, how can I help you today?")
    assert seen[0][0].content == user_prompt(instructions("user_id"), AIRLINE)
    assert reply is not None and STOP in reply.content and user.finished


def test_the_retail_desk_hands_its_model_customer_the_retail_prompt() -> None:
    bench = RetailBenchmark({"user": "llm:openai/some-model"})
    assert bench.user_model_spec() == "openai/some-model"
    seen: list[list[Message]] = []
    bench.use_user_model(recording(seen, "hello"))
    sample = bench.samples()[0]
    setup = bench.setup(sample, "default", 3)
    asyncio.run(setup.user.reply(setup.messages))
    assert seen[0][0].content == user_prompt(bench.tasks[sample.id].instructions, RETAIL)
    assert seen[0][0].content.startswith("You are a customer writing to an online shop's")
    assert bench.user_instruction(sample.id) == seen[0][0].content  # what a user judge reads


@pytest.mark.skipif(
    not (AIRLINE_DATA / "tasks_test.json").is_file(),
    reason=f"τ-bench data not found at {AIRLINE_DATA} (it sits beside the checkout, ../shared)",
)
def test_the_airline_desk_hands_its_model_customer_the_airline_prompt() -> None:
    bench = TaubenchAirlineBenchmark(
        {"data": str(AIRLINE_DATA), "tasks": "0", "user": "llm:openai/some-model"}
    )
    assert bench.user_prompt_version == "airline-user-1"
    seen: list[list[Message]] = []
    bench.use_user_model(recording(seen, "hello"))
    sample = bench.samples()[0]
    setup = bench.setup(sample, "default", 3)
    asyncio.run(setup.user.reply(setup.messages))
    prompt = seen[0][0].content
    assert bench.user_instruction(sample.id) == prompt  # what a user judge reads
    ins = bench.tasks[sample.id].instructions
    assert ins.identify_by == "user_id"
    assert f"give your user id, {ins.identity['user_id']}. " in prompt
    assert prompt.startswith("You are a customer writing to an airline's help desk. ")
