"""Scoring a retail episode: outcome (canonical and τ-bench's rule), outputs, procedure,
the two rewards and the outcome label, each with evidence."""

from __future__ import annotations

import asyncio
import json

import pytest

from deedbench.benchmarks.retail import RETAIL_TOOLS, RetailBenchmark
from deedbench.benchmarks.servicedesk import (
    Action,
    DeskTask,
    DeskWorld,
    IdleAgent,
    OracleAgent,
    replay,
)
from deedbench.engine import Agent, AgentContext, EpisodeTranscript, run_episode
from deedbench.records import Message, Sample, Score, Termination, ToolCall


@pytest.fixture(scope="module")
def bench() -> RetailBenchmark:
    return RetailBenchmark()


def first(bench: RetailBenchmark, template: str) -> DeskTask:
    return next(t for t in bench.tasks.values() if t.template == template)


def play(bench: RetailBenchmark, task: DeskTask, agent: Agent) -> EpisodeTranscript:
    sample = Sample(id=task.id, input="", metadata={})
    context = AgentContext(task.id, "default", 1, 0)
    return asyncio.run(run_episode(agent, bench.setup(sample, "default", 0), context))


def score(bench: RetailBenchmark, task: DeskTask, transcript: EpisodeTranscript) -> Score:
    return bench.scorer.score_task(task, transcript)


def talk(
    bench: RetailBenchmark,
    task: DeskTask,
    *replies: str,
    world: DeskWorld | None = None,
    termination: Termination = Termination.USER_STOPPED,
) -> EpisodeTranscript:
    """A transcript of the opening request and plain agent replies, ending on `world`."""
    messages = [Message(role="system", content="policy")]
    messages.append(Message(role="user", content=task.instructions.wants[0].say))
    for text in replies:
        messages.append(Message(role="assistant", content=text))
        messages.append(Message(role="user", content="ok"))
    return EpisodeTranscript(
        messages=messages,
        termination=termination,
        steps=len(replies),
        state=world if world is not None else DeskWorld(bench.base),
    )


def rules(result: Score) -> list[str | None]:
    return [e.rule for e in result.evidence]


def assert_reward_algebra(result: Score, ended: bool = True) -> None:
    v = result.values
    assert v["reward_tau"] == float(ended) * v["outcome_tau"] * v["outputs_compat"]
    assert v["reward_verified"] == (
        v["outcome_canonical"] * v["outputs_strict"] * v["procedure_ok"]
    )
    assert v["procedure_ok"] == float(v["violations"] == 0)


def a_multi_item_order(bench: RetailBenchmark) -> str:
    return next(
        oid
        for oid, order in bench.base["orders"].items()
        if len({json.dumps(i, sort_keys=True) for i in order["items"]}) >= 2
    )


# --- outcome ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "termination",
    [Termination.MAX_STEPS, Termination.TOO_MANY_TOOL_ERRORS, Termination.INVALID_ACTION],
)
def test_reward_tau_is_zero_for_an_episode_tau_bench_never_ends(
    bench: RetailBenchmark, termination: Termination
) -> None:
    """τ-bench scores only an episode the customer or a transfer ended; the database
    may be exactly right."""
    task = first(bench, "cancel")
    gold = replay(bench.base, task.actions, RETAIL_TOOLS)[0]
    ended = score(bench, task, talk(bench, task, "Done.", world=gold))
    assert ended.values["reward_tau"] == ended.values["outcome_tau"] == 1.0
    never = score(bench, task, talk(bench, task, "Done.", world=gold, termination=termination))
    assert never.values["outcome_tau"] == never.values["outcome_canonical"] == 1.0
    assert never.values["reward_tau"] == 0.0
    assert [e.excerpt for e in never.evidence if e.rule == "reward_tau"] == [
        f"the episode ended by {termination}, which τ-bench scores 0: only the customer's "
        "stop or a transfer ends one"
    ]
    assert_reward_algebra(never, ended=False)


def test_outputs_count_only_what_the_customer_was_told(bench: RetailBenchmark) -> None:
    """Text that came with a tool call never reached the customer (τ-bench's rule too)."""
    task = next(t for t in bench.tasks.values() if t.outputs)
    said = " ".join(task.outputs)
    call = ToolCall(id="c1", name="think", arguments='{"thought": "x"}')
    transcript = talk(bench, task, "Let me check.")
    transcript.messages[2:2] = [
        Message(role="assistant", content=said, tool_calls=[call]),
        Message(role="tool", content="", tool_call_id="c1", tool_name="think"),
    ]
    hidden = score(bench, task, transcript)
    assert hidden.values["outputs_compat"] == hidden.values["outputs_strict"] == 0.0
    told = score(bench, task, talk(bench, task, said))
    assert told.values["outputs_compat"] == 1.0


def test_the_oracle_passes_everything(bench: RetailBenchmark) -> None:
    task = first(bench, "exchange")
    result = score(bench, task, play(bench, task, OracleAgent(bench.task, bench.domain)))
    assert result.outcome == "pass"
    assert result.evidence == []
    for name in ("outcome_tau", "outcome_canonical", "outputs_compat", "outputs_strict"):
        assert result.values[name] == 1.0, name
    assert result.values["procedure_ok"] == 1.0
    assert result.values["reward_tau"] == result.values["reward_verified"] == 1.0


def test_a_missing_change_fails_with_a_readable_diff(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    order = task.actions[0].kwargs["order_id"]
    reason = task.actions[0].kwargs["reason"]
    result = score(bench, task, talk(bench, task, "I see."))
    assert result.values["outcome_canonical"] == 0.0
    assert result.values["outcome_tau"] == 0.0
    assert result.values["reward_tau"] == result.values["reward_verified"] == 0.0
    assert result.outcome == "fail"
    diff = [e.excerpt for e in result.evidence if e.rule == "outcome"]
    # Gold on the left, the episode's world on the right.
    assert f"orders['{order}'].status: 'cancelled' -> 'pending'" in diff
    assert f"orders['{order}'].cancel_reason: {reason!r} -> (absent)" in diff
    assert_reward_algebra(result)


def test_a_wrong_change_fails_and_the_diff_shows_it(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    action = task.actions[0]
    reason = action.kwargs["reason"]
    wrong = "no longer needed" if reason != "no longer needed" else "ordered by mistake"
    wrong_action = Action(name=action.name, kwargs={**action.kwargs, "reason": wrong})
    world, errors = replay(bench.base, [wrong_action], RETAIL_TOOLS)
    assert errors == []
    result = score(bench, task, talk(bench, task, "Done.", world=world))
    assert result.values["outcome_canonical"] == result.values["outcome_tau"] == 0.0
    order = action.kwargs["order_id"]
    expected = f"orders['{order}'].cancel_reason: {reason!r} -> {wrong!r}"
    assert [e.excerpt for e in result.evidence if e.rule == "outcome"] == [expected]


def test_a_change_on_top_of_the_right_one_fails(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    transcript = play(bench, task, OracleAgent(bench.task, bench.domain))
    other = first(bench, "user_address").actions[0].kwargs["user_id"]
    address = transcript.state.for_update("users", other)["address"]
    old = address["address1"]
    address["address1"] = "1 Elsewhere Road"
    result = score(bench, task, transcript)
    assert result.values["outcome_canonical"] == result.values["outcome_tau"] == 0.0
    diff = [e.excerpt for e in result.evidence if e.rule == "outcome"]
    assert diff == [f"users.{other}.address.address1: {old!r} -> '1 Elsewhere Road'"]


def test_the_diff_is_capped(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    world = DeskWorld(bench.base)
    for oid, _ in list(world.items("orders"))[:15]:
        world.for_update("orders", oid)["status"] = "lost"
    result = score(bench, task, talk(bench, task, "I see.", world=world))
    diff = [e.excerpt for e in result.evidence if e.rule == "outcome"]
    assert len(diff) == 11
    assert diff[-1].startswith("... and ") and diff[-1].endswith("more differences")


def test_item_order_counts_for_tau_but_not_canonically(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    transcript = play(bench, task, OracleAgent(bench.task, bench.domain))
    order = a_multi_item_order(bench)
    transcript.state.for_update("orders", order)["items"].reverse()
    result = score(bench, task, transcript)
    assert result.values["outcome_canonical"] == 1.0
    assert result.values["outcome_tau"] == 0.0
    assert result.values["reward_tau"] == 0.0
    assert result.values["reward_verified"] == 1.0
    assert result.outcome == "pass"
    assert_reward_algebra(result)


def test_a_float_for_an_int_counts_for_tau_but_not_canonically(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    transcript = play(bench, task, OracleAgent(bench.task, bench.domain))
    uid, pid, balance = next(
        (uid, pid, method["balance"])
        for uid, user in bench.base["users"].items()
        for pid, method in user["payment_methods"].items()
        if isinstance(method.get("balance"), int)
    )
    transcript.state.for_update("users", uid)["payment_methods"][pid]["balance"] = float(balance)
    result = score(bench, task, transcript)
    assert result.values["outcome_canonical"] == 1.0
    assert result.values["outcome_tau"] == 0.0
    assert result.values["reward_tau"] == 0.0
    assert result.values["reward_verified"] == 1.0


def test_a_tau_only_failure_has_outcome_evidence(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    transcript = play(bench, task, OracleAgent(bench.task, bench.domain))
    transcript.state.for_update("orders", a_multi_item_order(bench))["items"].reverse()
    result = score(bench, task, transcript)
    assert result.values["outcome_tau"] == 0.0
    assert "outcome" in rules(result)


def test_a_task_needing_a_transfer_fails_without_one(bench: RetailBenchmark) -> None:
    task = first(bench, "transfer")
    assert task.must_transfer
    result = score(bench, task, talk(bench, task, "I can't help with that, sorry."))
    assert result.values["outcome_canonical"] == result.values["outcome_tau"] == 0.0
    assert result.values["reward_tau"] == result.values["reward_verified"] == 0.0
    assert result.outcome == "fail"
    assert [e.excerpt for e in result.evidence if e.rule == "outcome"] == [
        "the task needed a transfer to a human"
    ]


def test_a_task_needing_a_transfer_passes_with_one(bench: RetailBenchmark) -> None:
    task = first(bench, "transfer")
    transcript = play(bench, task, OracleAgent(bench.task, bench.domain))
    assert transcript.termination is Termination.TRANSFERRED
    result = score(bench, task, transcript)
    assert result.outcome == "pass"
    # The same conversation, had it not ended with the transfer, fails.
    cut = EpisodeTranscript(
        transcript.messages, Termination.USER_STOPPED, transcript.steps, state=transcript.state
    )
    assert score(bench, task, cut).values["outcome_tau"] == 0.0


def test_a_transfer_is_not_needed_elsewhere(bench: RetailBenchmark) -> None:
    task = first(bench, "forbidden")
    result = score(bench, task, talk(bench, task, "That order cannot be cancelled."))
    assert result.outcome == "pass"


# --- outputs ----------------------------------------------------------------------------------


def test_outputs_pass_both_rules_when_stated(bench: RetailBenchmark) -> None:
    task = first(bench, "info")
    status, total = task.outputs
    result = score(bench, task, talk(bench, task, f"Your order is {status}; you paid ${total}."))
    assert result.values["outputs_compat"] == result.values["outputs_strict"] == 1.0
    assert result.outcome == "pass"


def test_outputs_missing_fail_both_rules_with_evidence(bench: RetailBenchmark) -> None:
    task = first(bench, "info")
    status, total = task.outputs
    result = score(bench, task, talk(bench, task, f"Your order is {status}."))
    assert result.values["outputs_compat"] == result.values["outputs_strict"] == 0.0
    assert result.values["reward_tau"] == result.values["reward_verified"] == 0.0
    assert result.outcome == "fail"
    assert [(e.rule, e.excerpt) for e in result.evidence] == [
        ("outputs", f"never stated: {total!r}")
    ]


def test_a_substring_match_passes_tau_only(bench: RetailBenchmark) -> None:
    task = first(bench, "info")
    status, total = task.outputs
    result = score(bench, task, talk(bench, task, f"It is {status}; the total is 1{total}."))
    assert result.values["outputs_compat"] == 1.0
    assert result.values["outputs_strict"] == 0.0
    assert result.values["reward_tau"] == 1.0
    assert result.values["reward_verified"] == 0.0
    assert result.outcome == "pass_tau_only"
    assert ("outputs", f"never stated: {total!r}") in [(e.rule, e.excerpt) for e in result.evidence]
    assert_reward_algebra(result)


def test_a_number_within_tolerance_passes_strict_only(bench: RetailBenchmark) -> None:
    task = first(bench, "info")
    status, total = task.outputs
    close = f"{float(total) - 0.004:.3f}"
    result = score(bench, task, talk(bench, task, f"It is {status}; you paid {close}."))
    assert result.values["outputs_compat"] == 0.0
    assert result.values["outputs_strict"] == 1.0
    assert result.values["reward_tau"] == 0.0
    assert result.values["reward_verified"] == 1.0
    assert_reward_algebra(result)


# --- procedure --------------------------------------------------------------------------------


def test_a_change_without_consent_passes_tau_but_not_verified(bench: RetailBenchmark) -> None:
    task = first(bench, "order_payment")
    transcript = play(bench, task, OracleAgent(bench.task, bench.domain, ask_first=False))
    result = score(bench, task, transcript)
    assert result.values["outcome_tau"] == result.values["outcome_canonical"] == 1.0
    assert result.values["procedure_ok"] == 0.0
    assert result.values["violations"] == 1.0
    assert result.values["reward_tau"] == 1.0
    assert result.values["reward_verified"] == 0.0
    assert result.outcome == "pass_tau_broke_procedure"
    (consent,) = [e for e in result.evidence if e.rule == "consent"]
    write = next(
        (i, c)
        for i, m in enumerate(transcript.messages)
        for c in m.tool_calls
        if c.name == "modify_pending_order_payment"
    )
    assert consent.message_index == write[0]
    assert consent.tool_call_id == write[1].id
    assert f"modify_pending_order_payment({write[1].arguments})" in consent.excerpt
    assert_reward_algebra(result)


def test_text_beside_a_tool_call_is_a_procedure_violation(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    transcript = play(bench, task, OracleAgent(bench.task, bench.domain))
    auth = {"find_user_id_by_name_zip", "find_user_id_by_email"}
    index = next(
        i for i, m in enumerate(transcript.messages) if any(c.name in auth for c in m.tool_calls)
    )
    messages = list(transcript.messages)
    messages[index] = messages[index].model_copy(update={"content": "Let me look you up."})
    edited = EpisodeTranscript(
        messages, transcript.termination, transcript.steps, state=transcript.state
    )
    result = score(bench, task, edited)
    assert result.values["procedure_ok"] == 0.0
    assert result.values["reward_tau"] == 1.0
    assert result.values["reward_verified"] == 0.0
    assert result.outcome == "pass_tau_broke_procedure"
    assert "one_tool_call_per_turn" in rules(result)


def test_a_write_before_identification_is_cited(bench: RetailBenchmark) -> None:
    task = first(bench, "cancel")
    action = task.actions[0]
    world, _ = replay(bench.base, [action], RETAIL_TOOLS)
    call = ToolCall(id="w", name=action.name, arguments=json.dumps(action.kwargs))
    messages = [
        Message(role="system", content="policy"),
        Message(role="user", content=task.instructions.wants[0].say),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", content="{}", tool_call_id="w", tool_name=action.name),
    ]
    result = score(
        bench, task, EpisodeTranscript(messages, Termination.USER_STOPPED, 1, state=world)
    )
    assert result.values["outcome_canonical"] == 1.0
    assert {"authentication", "consent"} <= set(rules(result))
    assert result.values["violations"] >= 2
    assert result.outcome == "pass_tau_broke_procedure"


# --- labels and gold ----------------------------------------------------------------------------


def test_labels_follow_the_rewards(bench: RetailBenchmark) -> None:
    cases: dict[str, tuple[DeskTask, Agent]] = {
        "pass": (first(bench, "return"), OracleAgent(bench.task, bench.domain)),
        "pass_tau_broke_procedure": (
            first(bench, "return"),
            OracleAgent(bench.task, bench.domain, ask_first=False),
        ),
        "fail": (first(bench, "return"), IdleAgent()),
    }
    for label, (task, agent) in cases.items():
        result = score(bench, task, play(bench, task, agent))
        assert result.outcome == label
        assert_reward_algebra(result)


def test_the_gold_world_is_the_gold_actions_replayed_once(bench: RetailBenchmark) -> None:
    task = first(bench, "exchange+user_address")
    gold = bench.scorer.gold(task)
    assert bench.scorer.gold(task) is gold
    replayed, errors = replay(bench.base, task.actions, RETAIL_TOOLS)
    assert errors == []
    assert gold.touched() == replayed.touched()
    for table, keys in gold.touched().items():
        for key in keys:
            assert gold.get(table, key) == replayed.get(table, key)
