"""τ² telecom episodes whose customer is a real model behind llama-cpp-python's server
(opt-in: ``pytest --realmodel``, see docs/testing.md "The real-model tests"), run
from the command line as a user would.

The customer is SmolLM2-135M with τ²'s user-simulator guidelines (the tools variant)
and its phone's tools; the desk is the oracle (the agent's telecom prompt, about 7,000
tokens, does not fit the server's 4,096-token context; the customer's does).

What llama-cpp-python 0.3.36 does with ``chatml-function-calling`` decides the set-up
(seen on 2026-12-03 with this model): with ``tool_choice=auto`` a text reply always
comes back empty (after choosing "message:", its grammar allows only a function name
or the end), and choosing a phone tool comes back as the text
``functions.check_status_bar:`` with no tool call. Neither is a usable customer turn:
τ² would raise on the first and hand the agent the second as words. With a named
``tool_choice`` (``-U``) the arguments are grammar-constrained and the call is clean,
so the customer here toggles airplane mode at every turn, and τ²'s step limit
(``-T max_steps``) ends the episode. What is proved: deedbench's user tools reach a real
server in its format, its calls come back, run on the phone (whose state they change),
and their results go back to the server as the customer's own tool messages, which it
accepts turn after turn; the agent never sees any of it; the episode is scored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.test_realmodel import base_url, records, report, run  # noqa: F401

from . import _reference

pytestmark = pytest.mark.realmodel

FORCED = json.dumps({"type": "function", "function": {"name": "toggle_airplane_mode"}})


def test_a_telecom_customer_on_a_real_model_works_its_phone(
    base_url: str,  # noqa: F811  (the server fixture)
    tmp_path: Path,
) -> None:
    store = tmp_path / "runs.db"
    result, seconds = run(
        store, "tau2-telecom", "--data", str(_reference.TAU2), "--agent", "baseline/oracle",
        "-T", "user=llm:openai-compatible/smollm2", "--user-base-url", base_url,
        "-U", f"tool_choice={FORCED}", "--user-max-tokens", "64",
        "-T", "max_steps=8", "--limit", "2", "--concurrency", "1", "--timeout", "900",
        "--max-attempts", "2", "--run-id", "telecom-real",
    )  # fmt: skip
    found = records(store, "telecom-real")
    report("tau2-telecom", seconds, found)
    assert result.exit_code == 0, result.output
    assert len(found) == 2 and {r.status for r in found} == {"scored"}, [r.error for r in found]
    for record in found:
        assert str(record.termination) == "max_steps"  # τ²'s limit, as -T max_steps set it
        messages = record.messages
        calls = [(i, m) for i, m in enumerate(messages) if m.role == "user" and m.tool_calls]
        assert len(calls) >= 3
        for index, message in calls:
            assert message.content == "" and not message.visible_to_agent
            answer = messages[index + 1]  # each call answered at once, to the customer alone
            assert answer.role == "tool" and answer.requestor == "user"
            assert answer.tool_call_id == message.tool_calls[0].id and not answer.error
            assert not answer.visible_to_agent
        states = [messages[i + 1].content.split("\n")[0] for i, _ in calls]
        assert len(set(states)) == 2  # "... is now OFF." and "... is now ON.": the phone changed
        assert record.usage["user"].calls == len(calls)  # one server reply per call
        assert record.score is not None and record.score.values["reward"] == 0.0


def test_a_customer_that_answers_nothing_is_an_infrastructure_error(
    base_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """With tool_choice=auto the server's first customer turn is empty: τ² raises on an
    empty message, retries and records infrastructure_error; so does deedbench, and the
    episode is kept out of every rate (and run again on resume)."""
    store = tmp_path / "runs.db"
    result, seconds = run(
        store, "tau2-telecom", "--data", str(_reference.TAU2), "--agent", "baseline/oracle",
        "-T", "user=llm:openai-compatible/smollm2", "--user-base-url", base_url,
        "-U", "tool_choice=auto", "--user-max-tokens", "64", "--limit", "1",
        "--concurrency", "1", "--timeout", "900", "--max-attempts", "2", "--run-id", "auto",
    )  # fmt: skip
    found = records(store, "auto")
    report("tau2-telecom, tool_choice=auto", seconds, found)
    assert len(found) == 1 and str(found[0].termination) == "infrastructure_error"
    assert found[0].error == "the user sent an empty message"
    assert "infrastructure" in result.output
