"""Whose failure: the task before the user, both together unclear, else the agent."""

from __future__ import annotations

from deedbench.records import Attribution, Fault, Score, party_of


def _fault(kind: str) -> Fault:
    return Fault(kind=kind, excerpt="quote")


def test_the_party_is_the_task_then_the_user_and_both_are_unclear() -> None:
    agent, user, task = (
        _fault("agent.database"),
        _fault("user.early_stop"),
        _fault("task.gold_raises"),
    )
    assert party_of([agent]) == "agent" and party_of([]) == "agent"
    assert party_of([agent, user]) == "user"
    assert party_of([agent, task]) == "task"
    assert party_of([agent, user, task]) == "unclear"


def test_an_episode_is_the_agents_alone_without_user_or_task_faults() -> None:
    assert Attribution(faults=[_fault("agent.outputs")]).agent_scope
    assert not Attribution(faults=[_fault("user.invented_detail")]).agent_scope
    assert not Attribution(faults=[_fault("task.output_unsupported")]).agent_scope


def test_a_score_keeps_its_attribution_and_leaves_none_out() -> None:
    plain = Score(outcome="pass", values={"reward": 1.0})
    assert "attribution" not in plain.model_dump()
    blamed = plain.model_copy(update={"attribution": Attribution(party="user")})
    again = Score.model_validate_json(blamed.model_dump_json())
    assert again.attribution is not None and again.attribution.party == "user"
