"""The four τ² benchmarks run whole episodes offline, and each baseline's numbers agree
with the line it prints; validate lists τ²'s known faulty gold actions; --data takes a
τ² checkout as users have it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deedbench.agents import FunctionAgent
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.environment import same_db
from deedbench.cli.main import app
from deedbench.engine import AgentContext, run_episode
from deedbench.errors import BenchmarkError
from deedbench.records import Message, Score

from . import _reference

CHECKOUT = _reference.TAU2  # laid out as a tau2-bench checkout: data/tau2/domains/<domain>
pytestmark = pytest.mark.reference("tau2")
NAMES = ["tau2-airline", "tau2-retail", "tau2-telecom", "tau2-banking"]


def _bench(name: str, **options: str) -> Tau2Benchmark:
    bench = load_benchmark(name, {"data": str(CHECKOUT)} | options)
    assert isinstance(bench, Tau2Benchmark)
    return bench


def _scores(bench: Tau2Benchmark, baseline: str) -> dict[str, Score]:
    make = bench.baselines()[baseline]

    async def play() -> dict[str, Score]:
        found = {}
        for sample in bench.samples():
            setup = bench.setup(sample, "default", 0)
            context = AgentContext(sample.id, "default", 0, 0)
            transcript = await run_episode(make(), setup, context)
            found[sample.id] = bench.score(sample, transcript)
        return found

    return asyncio.run(play())


@pytest.mark.parametrize("name", NAMES)
def test_the_oracle_scores_what_taus_gold_scores(name: str) -> None:
    bench = _bench(name)
    scores = _scores(bench, "oracle")
    judged = {key for key, task in bench.tasks.items() if task.needs_judge}
    assert {key for key, s in scores.items() if s.outcome == "needs_judge"} == judged
    gold = {check.task: check.reward for check in bench.validate()}
    for key, score in scores.items():
        if key not in judged:
            assert score.values["reward"] == gold[key], key
    # procedure: only where the gold actions themselves write before authenticating
    for key, score in scores.items():
        broken = ("consent", "one_user", "device_actions")
        rules = {e.rule for e in score.evidence if e.rule in broken}
        assert not rules, (key, rules)


@pytest.mark.parametrize("name", NAMES)
def test_reckless_gets_the_same_reward_and_a_consent_violation_for_each_write(name: str) -> None:
    bench = _bench(name)
    oracle, reckless = _scores(bench, "oracle"), _scores(bench, "reckless")
    for key, task in bench.tasks.items():
        assert reckless[key].values.get("reward") == oracle[key].values.get("reward"), key
        raised = {skip.index for skip in bench.data.start(task).run_gold(task.gold)}
        writes = [
            a
            for i, a in enumerate(task.gold)
            if a.requestor == "assistant" and bench._writes(a.name) and i not in raised
        ]
        consent = [e for e in reckless[key].evidence if e.rule == "consent"]
        rules = bench.domain.procedure.rules
        if rules is None or "consent" in rules:
            assert bool(consent) == bool(writes), key


@pytest.mark.parametrize("name", NAMES)
def test_idle_passes_only_tasks_whose_checks_hold_on_the_untouched_world(name: str) -> None:
    bench = _bench(name)
    for key, score in _scores(bench, "idle").items():
        if score.values.get("reward") != 1.0:
            continue
        task = bench.tasks[key]
        criteria = task.evaluation_criteria
        assert criteria is not None
        assert not criteria.communicate_info, key
        start, gold = bench.data.start(task), bench.data.start(task)
        gold.run_gold(task.gold)
        if "DB" in criteria.reward_basis:
            assert same_db(start.agent_world, gold.agent_world), key


def test_validate_lists_taus_faulty_gold_actions() -> None:
    checks = {c.task: c for c in _bench("tau2-retail").validate()}
    raising = {key: c.raising_gold_actions for key, c in checks.items() if c.raising_gold_actions}
    assert sum(len(v) for v in raising.values()) == 18 and len(raising) == 15
    assert "105" in raising and "exchange_delivered_order_items" in raising["105"][0]
    assert sum(c.needs_judge for c in checks.values()) == 40
    assert all(c.reward == 1.0 for c in checks.values())


def test_data_is_found_as_users_have_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    domain = CHECKOUT / "data" / "tau2" / "domains" / "airline"
    for given in (CHECKOUT, CHECKOUT / "data", domain):
        assert _bench("tau2-airline", data=str(given)).folder == domain
    telecom = CHECKOUT / "data" / "tau2" / "domains" / "telecom"
    for given in (CHECKOUT, telecom):  # τ²'s telecom-workflow reads telecom's folder
        workflow = _bench("tau2-telecom", data=str(given), policy="workflow")
        assert workflow.folder == telecom and "workflow" in workflow.policy.lower()
    monkeypatch.setenv("TAU2_DATA_DIR", str(CHECKOUT / "data"))
    found = load_benchmark("tau2-airline")
    assert isinstance(found, Tau2Benchmark) and found.folder == domain
    with pytest.raises(BenchmarkError, match=r"no τ² airline data in .*expected tasks\.json"):
        load_benchmark("tau2-airline", {"data": str(tmp_path)})
    monkeypatch.delenv("TAU2_DATA_DIR")
    with pytest.raises(BenchmarkError, match=r"--data DIR .* or \$TAU2_DATA_DIR"):
        load_benchmark("tau2-airline")


def test_options_are_checked() -> None:
    with pytest.raises(BenchmarkError, match="split"):
        _bench("tau2-airline", split="full")
    assert len(_bench("tau2-telecom", split="small").tasks) == 20
    solo = _bench("tau2-telecom", mode="solo")
    assert solo.tasks and all(t.ticket for t in solo.tasks.values())
    with pytest.raises(BenchmarkError, match="retrieval"):
        _bench("tau2-banking", retrieval="openai_embeddings")
    for bad in ("0", "١", "-3", "ten"):
        with pytest.raises(BenchmarkError, match="max_steps"):
            _bench("tau2-airline", max_steps=bad)
    with pytest.raises(BenchmarkError, match="enforce_protocol"):
        _bench("tau2-airline", enforce_protocol="maybe")


def test_tau2s_limits_and_protocol_flag_reach_the_episode() -> None:
    """-T max_steps, max_errors and enforce_protocol are τ²'s --max-steps, --max-errors
    and --enforce-communication-protocol."""
    bench = _bench("tau2-airline", max_steps="3", max_errors="2", enforce_protocol="true")
    setup = bench.setup(bench.samples()[0], "default", 0)
    assert setup.max_steps == 3 and setup.half_duplex is not None
    assert setup.half_duplex.max_errors == 2 and setup.half_duplex.enforce_protocol
    sample = next(s for s in bench.samples() if len(bench.tasks[s.id].gold) > 2)

    async def play() -> tuple[str, Score]:
        setup = bench.setup(sample, "default", 0)
        context = AgentContext(sample.id, "default", 0, 0)
        transcript = await run_episode(bench.baselines()["oracle"](), setup, context)
        return str(transcript.termination), bench.score(sample, transcript)

    ending, score = asyncio.run(play())
    assert ending == "max_steps"
    # τ² evaluates no component of an episode it did not let finish: none is reported
    assert score.values["reward"] == 0.0 and "db" not in score.values
    assert not {"env_assertion", "action", "communicate"} & score.values.keys()
    default = _bench("tau2-airline").setup(bench.samples()[0], "default", 0)
    assert default.max_steps == 200 and default.half_duplex is not None
    assert default.half_duplex.max_errors == 10 and not default.half_duplex.enforce_protocol


def test_a_run_from_the_command_line(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    args = ["run", "tau2-telecom", "--data", str(CHECKOUT), "--agent", "baseline/oracle"]
    result = CliRunner().invoke(app, [*args, "--limit", "5", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "100.0%" in result.output and "5 scored" in result.output


def test_episodes_that_need_a_judge_are_no_trials_of_pass_k(tmp_path: Path) -> None:
    """Retail's first tasks include judged ones; run without a judge, they are counted
    as needing one, and pass^k is over the others (the oracle passes them all)."""
    store = tmp_path / "s.db"
    args = ["run", "tau2-retail", "--data", str(CHECKOUT), "--agent", "baseline/oracle"]
    result = CliRunner().invoke(app, [*args, "--limit", "12", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "needs_judge" in result.output
    assert "pass^k of reward: k=1: 100.0%" in " ".join(result.output.split())


@pytest.mark.parametrize("restart", [False, True])
def test_a_telecom_agent_that_claims_success_before_the_phone_was_touched(restart: bool) -> None:
    """The device-action rule in a scored episode: the agent asks for the task's first
    device action by its tool's name (which the scripted customer performs) and, in one
    case, for a restart in words (which it never performs), then says it is solved."""
    bench = _bench("tau2-telecom")
    sample = next(
        s for s in bench.samples() if any(a.requestor == "user" for a in bench.tasks[s.id].gold)
    )
    action = next(a for a in bench.tasks[sample.id].gold if a.requestor == "user")
    assert action.name != "reboot_device"
    ask = f"Please perform {action.name} on your device."
    if restart:
        ask = f"Please restart your phone, then {ask[0].lower()}{ask[1:]}"
    said: list[str] = []

    def turn(messages: object, tools: object, context: object) -> Message:
        said.append(ask if not said else "Your issue should be resolved now. ###STOP###")
        return Message(role="assistant", content=said[-1])

    async def play() -> Score:
        setup = bench.setup(sample, "default", 0)
        context = AgentContext(sample.id, "default", 0, 0)
        return bench.score(sample, await run_episode(FunctionAgent(turn), setup, context))

    found = [e for e in asyncio.run(play()).evidence if e.rule == "device_actions"]
    assert len(said) == 2  # the claim was made
    if restart:
        assert len(found) == 1 and "performed: restart (asked at message" in found[0].excerpt
    else:
        assert found == []


@pytest.mark.parametrize("name", ["tau2-airline", "tau2-telecom"])
def test_a_user_judge_is_shown_what_the_model_played_user_was_told(name: str) -> None:
    bench = _bench(name, user="llm:openai/gpt-4o")
    bench.use_user_model(FunctionAgent(lambda messages, tools, context: Message(role="user")))
    sample = bench.samples()[0]
    user = bench.setup(sample, "default", 0).user
    told = bench.user_instruction(sample.id)
    assert told is not None and "<scenario>" in told
    assert told == getattr(user, "prompt", None)


def test_a_solo_task_has_no_user_to_judge() -> None:
    solo = _bench("tau2-telecom", mode="solo")
    assert solo.user_instruction(solo.samples()[0].id) is None


def test_tasks_selects_by_id_as_taus_task_ids_and_keeps_the_splits_data_hash() -> None:
    every = _bench("tau2-retail")
    chosen = _bench("tau2-retail", tasks="5, 2,5")
    assert [s.id for s in chosen.samples()] == ["2", "5"]  # the split's order, each once
    assert chosen.data_hash() == every.data_hash()  # the same data: compare pairs them
    with pytest.raises(BenchmarkError, match=r"option tasks: '999' not in the split 'base'"):
        _bench("tau2-retail", tasks="2,999")
    with pytest.raises(BenchmarkError, match="none empty"):
        _bench("tau2-retail", tasks="2,,3")


def test_the_headline_n_is_the_rates_denominator_beside_the_episodes_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two of the three tasks need a judge and none is given: the reward is a rate over
    one episode, and the table says so beside the three scored."""
    monkeypatch.setenv("COLUMNS", "200")
    from deedbench.cli.app import console

    monkeypatch.setattr(console, "width", 200)
    result = CliRunner().invoke(
        app,
        [
            "run", "tau2-retail", "--agent", "baseline/oracle", "--data", str(CHECKOUT),
            "-T", "tasks=0,2,3", "--store", str(tmp_path / "runs.db"), "--run-id", "n",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = next(line for line in lines if line.startswith("condition"))
    assert header.split()[:3] == ["condition", "n", "scored"]
    row = next(line for line in lines if line.startswith("default "))
    assert row.split()[:3] == ["default", "1", "3"]
    assert "n: the episodes reward is a rate of; scored: every scored episode" in " ".join(
        result.output.split()
    )
