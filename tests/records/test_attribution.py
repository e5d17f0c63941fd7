"""Whose failure: the party of its causes (several: unclear; none: the agent); records made
before causes were marked keep their old reading. Passing episodes are the agent's scope."""

from __future__ import annotations

from deedbench.records import Attribution, Fault, Score, party_of


def _fault(kind: str, cause: bool = False) -> Fault:
    return Fault(kind=kind, excerpt="quote", cause=cause)


def test_the_party_is_that_of_the_causes_and_faults_that_caused_nothing_do_not_count() -> None:
    agent, user, task = (
        _fault("agent.action_not_done", True),
        _fault("user.early_stop", True),
        _fault("task.gold_raises", True),
    )
    made_up = _fault("user.invented_detail")  # found, but no call used it
    assert party_of([agent, made_up]) == "agent"
    assert party_of([user, made_up]) == "user" and party_of([task]) == "task"
    assert party_of([agent, user]) == "unclear" and party_of([user, task]) == "unclear"


def test_records_made_before_causes_were_marked_read_as_they_were() -> None:
    agent, user, task = (
        _fault("agent.database"),
        _fault("user.early_stop"),
        _fault("task.gold_raises"),
    )
    assert party_of([agent]) == "agent" and party_of([]) == "agent"
    assert party_of([agent, user]) == "user"
    assert party_of([agent, task]) == "task"
    assert party_of([agent, user, task]) == "unclear"


def test_a_passing_episode_and_the_agents_failures_are_the_agents_scope() -> None:
    # issue 38: a passing episode is never set aside for a fault that failed nothing
    assert Attribution(faults=[_fault("user.invented_detail")]).agent_scope
    assert Attribution(faults=[_fault("task.gold_raises")]).agent_scope
    assert Attribution(party="agent", faults=[_fault("agent.outputs", True)]).agent_scope
    for party in ("user", "task", "unclear"):
        assert not Attribution(party=party).agent_scope


def test_a_score_keeps_its_attribution_and_leaves_none_out() -> None:
    plain = Score(outcome="pass", values={"reward": 1.0})
    assert "attribution" not in plain.model_dump()
    blamed = plain.model_copy(update={"attribution": Attribution(party="user")})
    again = Score.model_validate_json(blamed.model_dump_json())
    assert again.attribution is not None and again.attribution.party == "user"
