"""The user audit: how often each simulated user made faults, per user model over runs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from deedbench.audit import UserJudgment, user_audit
from deedbench.benchmarks.retail import RetailBenchmark
from deedbench.cli.main import app
from deedbench.engine import plan_run
from deedbench.records import Attribution, EpisodeRecord, Fault, ModelUser, Score


def _record(sample: str, party: str | None, *kinds: str) -> EpisodeRecord:
    faults = [Fault(kind=k, excerpt="quote") for k in kinds]
    score = Score(outcome="x", values={}, attribution=Attribution(party=party, faults=faults))
    return EpisodeRecord(
        sample_id=sample, condition="default", epoch=1, seed=0, status="scored",
        termination="user_stopped", steps=1, messages=[], score=score, started_at=0.0,
        duration_s=0.0,
    )  # fmt: skip


def test_each_user_model_is_counted_apart_most_faithful_first() -> None:
    scripted = plan_run(RetailBenchmark(), "baseline/oracle", run_id="a")
    model = scripted.model_copy(update={"run_id": "b", "user": ModelUser(spec="openai/gpt-x")})
    runs = [
        (scripted, [_record("1", None), _record("2", "agent", "agent.database")]),
        (
            model,
            [
                _record("1", "user", "user.early_stop", "agent.database"),
                _record("2", "unclear", "user.invented_detail", "task.gold_raises"),
                _record("3", None, "user.invented_detail"),  # passed, made a detail up anyway
                _record("4", None),
            ],
        ),
    ]
    first, second = user_audit(runs)
    assert (first.user, first.episodes, first.faulty.k) == ("scripted", 2, 0)
    assert (second.user, second.runs, second.episodes, second.faulty.k) == (
        "openai/gpt-x",
        ["b"],
        4,
        3,
    )
    assert (second.failures, second.user_failures, second.unclear_failures) == (2, 1, 1)
    assert second.kinds == {"user.invented_detail": 2, "user.early_stop": 1}
    assert second.faulty.ci_low is not None and second.faulty.ci_low < 0.75 < second.faulty.ci_high


def test_the_command_audits_the_users_of_runs(tmp_path: Path) -> None:
    store = str(tmp_path / "runs.db")
    runner = CliRunner()
    for agent in ("oracle", "idle"):
        done = runner.invoke(
            app, ["run", "retail", "--agent", f"baseline/{agent}", "--run-id", agent,
                  "--store", store, "-q"],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
    done = runner.invoke(app, ["audit", "oracle", "idle", "--users", "--json", "--store", store])
    [scripted] = json.loads(done.output)["users"]
    assert scripted["user"] == "scripted" and scripted["runs"] == ["oracle", "idle"]
    assert scripted["episodes"] == 184 and scripted["faulty"]["k"] == 0  # the clean script
    text = " ".join(
        runner.invoke(app, ["audit", "oracle", "--users", "--store", store]).output.split()
    )
    assert "scripted 92 0.0% [0.0, 4.0] 0 of 0 (+0 unclear)" in text
    two = runner.invoke(app, ["audit", "oracle", "idle", "--store", store])
    assert two.exit_code == 2 and "several only with --users" in two.output


def _judgment(run_id: str, sample: str, *kinds: str, error: str | None = None) -> UserJudgment:
    return UserJudgment(
        run_id=run_id,
        sample_id=sample,
        condition="default",
        epoch=1,
        judge_spec="openai/judge",
        faults=[Fault(kind=k, excerpt="bye", message_index=5, source="judge") for k in kinds],
        error=error,
    )


def test_the_judges_findings_join_the_mechanical_faults_in_the_user_audit() -> None:
    config = plan_run(RetailBenchmark(), "baseline/oracle", run_id="r").model_copy(
        update={"user": ModelUser(spec="openai/gpt-x")}
    )
    records = [
        _record("1", "agent", "agent.database"),  # the judge finds the user ended early
        _record("2", "task", "task.gold_raises"),  # and here too: user and task, unclear
        _record("3", "agent", "agent.database"),  # the judge finds nothing
        _record("4", "agent", "agent.outputs"),  # the judge failed: as found mechanically
    ]
    judged = {
        (j.run_id, j.key): j
        for j in (
            _judgment("r", "1", "user.ended_early"),
            _judgment("r", "2", "user.ended_early"),
            _judgment("r", "3"),
            _judgment("r", "4", error="judge reply is not JSON"),
        )
    }
    [without] = user_audit([(config, records)])
    assert (without.user_failures, without.unclear_failures, without.faulty.k) == (0, 0, 0)
    [audit] = user_audit([(config, records)], judged)
    assert (audit.failures, audit.user_failures, audit.unclear_failures) == (4, 1, 1)
    assert audit.faulty.k == 2 and audit.kinds == {"user.ended_early": 2}
    assert (audit.judged, audit.judge_errors) == (3, 1)
