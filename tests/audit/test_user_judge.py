"""The user judge: what it is shown and the checks on its reply (its findings in the user
audit: test_users.py)."""

from __future__ import annotations

import json

import pytest

from deedbench.audit import USER_RULES
from deedbench.audit.user_judge import parse_user_verdicts, user_judge_messages
from deedbench.errors import JudgeReplyError
from deedbench.records import Message, ToolCall

POLICY = "You are the desk of Acme. Authenticate the customer before any change."
INSTRUCTION = "You want to cancel order #W1. Give your email only when asked."
TRANSCRIPT = [
    Message(role="system", content=POLICY),
    Message(role="user", content="Hi, I want to cancel order #W1, my email is a@b.org."),
    Message(
        role="assistant",
        content="",
        tool_calls=[ToolCall.decoded("c1", "find_user", {"email": "a@b.org"})],
    ),
    Message(role="tool", content='{"user_id": "a1"}', tool_call_id="c1", tool_name="find_user"),
    Message(role="assistant", content="Shall I cancel #W1? Please confirm (yes/no)."),
    Message(role="user", content="Actually never mind, bye! ###STOP###"),
]


def reply(**broken: str | None) -> str:
    """The judge's JSON: every rule, those named broken with the quote given."""
    return json.dumps(
        {
            "rules": [
                {"rule": rule, "broken": rule in broken, "quote": broken.get(rule)}
                for rule in USER_RULES
            ]
        }
    )


def test_the_judge_sees_the_instruction_the_policy_and_the_numbered_transcript() -> None:
    system, user = user_judge_messages(INSTRUCTION, TRANSCRIPT)
    assert system.role == "system" and all(rule in system.content for rule in USER_RULES)
    text = user.content
    assert f"THE CUSTOMER'S INSTRUCTION:\n{INSTRUCTION}" in text
    assert f"THE AGENT'S POLICY:\n{POLICY}" in text
    assert "[1] USER:\nHi, I want to cancel order #W1" in text
    assert "[2] AGENT calls find_user:" in text and "[3] RESULT from a tool (find_user)" in text
    assert "[5] USER:\nActually never mind" in text
    assert text.count(POLICY) == 1  # the policy once, not again as message 0


def test_a_broken_rule_becomes_a_judged_fault_located_in_the_users_words() -> None:
    faults, kept = parse_user_verdicts(
        reply(ended_early="never mind, bye", revealed="my email is a@b.org"), TRANSCRIPT
    )
    assert [(f.kind, f.message_index, f.source) for f in faults] == [
        ("user.ended_early", 5, "judge"),
        ("user.revealed", 1, "judge"),
    ]
    assert kept == ["contradicted"]
    fenced = f"Here you are:\n```json\n{reply()}\n```"
    assert parse_user_verdicts(fenced, TRANSCRIPT) == ([], list(USER_RULES))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no json here", "not JSON"),
        (json.dumps({"rules": "all fine"}), "wrong shape"),
        (reply(ended_early="Shall I cancel #W1?"), "not in the customer's words"),  # the agent's
        (reply(ended_early=None), "quoted nothing"),
        (json.dumps({"rules": [{"rule": "ended_early", "broken": False}]}), "each rule once"),
        (
            json.dumps({"rules": [{"rule": "rude", "broken": True, "quote": "bye"}]}),
            "rules the rubric has not: rude",
        ),
    ],
)
def test_a_reply_that_fails_a_check_is_an_error_never_a_verdict(text: str, message: str) -> None:
    with pytest.raises(JudgeReplyError, match=message):
        parse_user_verdicts(text, TRANSCRIPT)
