"""`deedbench export RUN... --format tau2-submission`: runs of τ²'s domains as what τ²'s
leaderboard asks for, checked by τ²'s own validator, and refused where a run breaks one
of the leaderboard's rules.

The runs are real and offline: the oracle through each domain's base split, four
epochs (a few seconds each); retail's and banking's NL-assertion episodes are then
scored by τ²'s evaluator as a judge that finds every assertion met would have them. A
model's run is made from airline's as a model would have left it (a model agent and
user, their token counts, and every third task failing some trials), since pass^2 of
four trials is where τ²'s order of summation shows. The refusals use short runs or
copies of the oracle's run with one thing changed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from datetime import date
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from benchmarks.tau2 import _reference  # tests/ is on the path, as pytest puts it
from deedbench.benchmarks import load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark
from deedbench.benchmarks.tau2.judge import DEFAULT_JUDGE
from deedbench.benchmarks.tau2.results import read_results
from deedbench.benchmarks.tau2.reward import NLAssertionCheck
from deedbench.benchmarks.tau2.scorer import TAU2_TERMINATIONS
from deedbench.cli.main import app
from deedbench.engine import RunStore
from deedbench.interop.tau2_export import SUBMISSION_FILE, SubmissionDetails, export_submission
from deedbench.interop.tau2_figures import tau2_figures
from deedbench.records import AgentSettings, EpisodeRecord, GenerationParams, ModelUser, Usage
from deedbench.reports.cost import PriceTable

CHECKOUT = _reference.TAU2
DRIVER = Path(__file__).resolve().parents[1] / "benchmarks" / "tau2" / "submission_driver.py"
needs_tau2 = pytest.mark.reference("tau2")
pytestmark = needs_tau2


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def one_line(output: str) -> str:
    return " ".join(output.split())


def oracle_run(store: Path, benchmark: str, run_id: str) -> str:
    """The oracle's run of `benchmark`'s base split, four epochs (made once)."""
    with RunStore(store) as runs:
        if runs.get_run(run_id) is not None:
            return run_id
    args = ["run", benchmark, "--data", str(CHECKOUT), "--agent", "baseline/oracle"]
    done = invoke(*args, "--epochs", "4", "--run-id", run_id, "--store", str(store), "-q")
    assert done.exit_code == 0, done.output
    return run_id


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the oracle's run of airline ("oracle")."""
    path = tmp_path_factory.mktemp("store") / "runs.db"
    oracle_run(path, "tau2-airline", "oracle")
    return path


def copy_run(
    store: Path,
    run_id: str,
    change: dict[str, Any] | None = None,
    record: Callable[[EpisodeRecord], EpisodeRecord | None] | None = None,
    source: str = "oracle",
) -> str:
    """A copy of the `source` run as `run_id`, its configuration changed by `change` and
    each record by `record` (None leaves it out)."""
    with RunStore(store) as runs:
        if runs.get_run(run_id) is not None:
            return run_id
        config = runs.require_run(source).model_copy(update={"run_id": run_id, **(change or {})})
        runs.create_run(config)
        for found in runs.episodes(source):
            changed = record(found) if record is not None else found
            if changed is not None:
                runs.add(run_id, changed)
        runs.flush()
    return run_id


def judged_run(store: Path, benchmark: str, run_id: str) -> str:
    """The oracle's run of `benchmark` as a run with a judge (-T judge=...) would have
    stored it: the episodes that needed one scored by τ²'s evaluator with a judge that
    found every NL assertion met."""
    source = oracle_run(store, benchmark, f"{run_id}-unjudged")
    with RunStore(store) as runs:
        options = {**runs.require_run(source).benchmark_options, "judge": DEFAULT_JUDGE}
    bench = load_benchmark(benchmark, options)
    assert isinstance(bench, Tau2Benchmark)

    def judge(record: EpisodeRecord) -> EpisodeRecord:
        if record.score is None or record.score.outcome != "needs_judge":
            return record
        task = bench.tasks[record.sample_id]
        assert task.evaluation_criteria is not None
        verdicts = [
            NLAssertionCheck(nl_assertion=a, met=True, justification="met")
            for a in task.evaluation_criteria.nl_assertions or []
        ]
        ending = TAU2_TERMINATIONS[record.termination]
        score = bench.scorer.score_task(task, record.messages, ending, verdicts)
        assert score.outcome in ("pass", "pass_broke_procedure"), score
        return record.model_copy(update={"score": score})

    return copy_run(store, run_id, {"benchmark_options": options}, judge, source)


def model_settings(temperature: float) -> AgentSettings:
    return AgentSettings(params=GenerationParams(temperature=temperature))


def as_model_run(record: EpisodeRecord) -> EpisodeRecord:
    """The oracle's episode as a model's: tokens on both sides, and every third task
    failing the trials its (task, epoch) draw says."""
    draw = random.Random(f"{record.sample_id}/{record.epoch}")
    usage = {
        "assistant": Usage(input_tokens=draw.randrange(1_000, 90_000), output_tokens=777),
        "user": Usage(input_tokens=draw.randrange(500, 9_000), output_tokens=333),
    }
    update: dict[str, Any] = {"usage": usage}
    if int(record.sample_id) % 3 == 0 and draw.random() < 0.5:
        assert record.score is not None and record.score.details is not None
        info = {**record.score.details["reward_info"], "reward": 0.0}
        score = record.score.model_copy(
            update={"outcome": "fail", "details": {**record.score.details, "reward_info": info}}
        )
        update["score"] = score
    return record.model_copy(update=update)


MODEL_RUN = {
    "agent": "openai/gpt-4o",
    "agent_params": model_settings(0.0),
    "user": ModelUser(spec="openai/gpt-4.1", settings=model_settings(0.0)),
}


def model_run(store: Path) -> str:
    with RunStore(store) as runs:
        options = {**runs.require_run("oracle").benchmark_options, "user": "llm:openai/gpt-4.1"}
    return copy_run(store, "model", {**MODEL_RUN, "benchmark_options": options}, as_model_run)


def tau2_validate(folders: list[Path]) -> list[dict[str, Any]]:
    """What τ²'s own leaderboard code makes of each submission folder (see the driver)."""
    found: list[dict[str, Any]] = _reference.run_script(
        DRIVER, [str(f) for f in folders], inputs=tuple(folders)
    )
    return found


# --- what is written, as τ²'s validator sees it ------------------------------------------


@needs_tau2
def test_taus_validator_passes_the_oracles_and_a_models_submission(
    store: Path, tmp_path: Path
) -> None:
    """Format, tasks, trials, the set, the metrics to the bit; the submission is τ²'s
    ``Submission`` (check_and_load_submission_data validates it with that model). The
    oracle's submission has all four domains; the model's, airline."""
    runs = [
        "oracle",
        oracle_run(store, "tau2-telecom", "telecom"),
        judged_run(store, "tau2-retail", "retail"),
        judged_run(store, "tau2-banking", "banking"),
    ]
    oracle, model = tmp_path / "oracle", tmp_path / "model"
    done = invoke(
        "export", *runs, "--format", "tau2-submission", "-o", str(oracle),
        "--model-org", "deedbench", "--contact-email", "me@example.org", "--store", str(store),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0].startswith("warning: the agent of run 'oracle' is baseline/oracle")
    assert lines[1] == f"wrote {oracle / 'submission.json'} and 4 trajectory file(s):"
    assert len(lines) == 6
    order = ["retail", "airline", "telecom", "banking_knowledge"]  # τ²'s
    for line, domain in zip(lines[2:], order, strict=True):
        assert line.split() == [
            f"{domain}:", str(oracle / "trajectories" / f"{domain}_results.json"),
            "pass^1", "100.0%", "pass^2", "100.0%", "pass^3", "100.0%", "pass^4", "100.0%",
            "cost/trajectory", "unknown",
        ]  # fmt: skip
    made = invoke(
        "export", model_run(store), "--format", "tau2-submission", "-o", str(model),
        "--store", str(store),
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "warning" not in made.output

    files = [{"airline"}, {"retail", "airline", "telecom", "banking_knowledge"}]
    for folder, found, domains in zip(
        [model, oracle], tau2_validate([model, oracle]), files, strict=True
    ):
        assert found["loaded"] == [True, ""]
        assert found["traj_set"] == [True, ""]
        assert found["files"] == {
            f"{domain}_results.json": {
                "format": [True, ""],
                "tasks": [True, ""],
                "trials": [True, ""],
            }
            for domain in domains
        }
        assert found["metrics"].strip() == "✅ Submission metrics validation successful!"
        written = json.loads((folder / "submission.json").read_text(encoding="utf-8"))
        assert written["results"] == {
            domain: {k: v for k, v in figures.items() if v is not None}
            for domain, figures in found["computed"].items()
        }
        assert found["submission"]["submission_type"] == "custom"
        assert found["submission"]["methodology"]["tau2_bench_version"] == "1.0.1"
    written = json.loads((oracle / "submission.json").read_text(encoding="utf-8"))
    assert written["results"]["banking_knowledge"]["retrieval_config"] == "bm25"
    assert f"NL assertions judged by {DEFAULT_JUDGE}" in written["methodology"]["notes"]

    submitted = json.loads((model / "submission.json").read_text(encoding="utf-8"))
    assert submitted["model_name"] == "gpt-4o"
    assert submitted["model_organization"] == submitted["submitting_organization"] == "OpenAI"
    assert submitted["methodology"]["user_simulator"] == "gpt-4.1"
    assert "deedbench 0.1.0" in submitted["methodology"]["notes"]
    assert "openai/gpt-4.1" in submitted["methodology"]["notes"]
    airline = submitted["results"]["airline"]
    assert 0 < airline["pass_4"] < airline["pass_3"] < airline["pass_2"] < airline["pass_1"] < 100
    assert airline["cost"] > 0

    # The data is such that summing in another order than τ²'s (tasks by id, not by
    # their gold actions' count) gives another pass^2 in the last bit.
    results = read_results(model / "trajectories" / "airline_results.json")
    outcomes: dict[str, list[bool]] = {}
    for sim in results.simulations:
        outcomes.setdefault(sim.task_id, []).append((sim.reward_info or {})["reward"] == 1.0)
    by_id = np.array([comb(sum(outcomes[t]), 2) / 6 for t in sorted(outcomes)]).sum() / 50
    assert by_id * 100 != airline["pass_2"] == tau2_figures(results).pass_2


def test_the_trajectory_file_says_who_did_what(store: Path, tmp_path: Path) -> None:
    with RunStore(store) as runs:
        done = export_submission(
            runs, [model_run(store)], tmp_path / "out", prices=PriceTable.load(),
            today=date(2026, 1, 2),
        )  # fmt: skip
        record = runs.episode("model", "7", "default", 3)
    assert done.warnings == []
    results = read_results(done.domains[0].path)
    info = results.info
    assert (info.num_trials, info.max_steps, info.max_errors) == (4, 200, 10)
    assert info.agent_info.model_dump() == {
        "implementation": "llm_agent", "llm": "gpt-4o", "llm_args": {"temperature": 0.0},
    }  # fmt: skip
    assert info.user_info.model_dump() == {
        "implementation": "user_simulator", "llm": "gpt-4.1", "llm_args": {"temperature": 0.0},
    }  # fmt: skip
    assert info.environment_info.domain_name == "airline"
    assert info.environment_info.policy.startswith("# Airline Agent Policy")
    assert [t["id"] for t in results.tasks] == [str(i) for i in range(50)]
    assert len(results.simulations) == 200
    sim = next(s for s in results.simulations if (s.task_id, s.trial) == ("7", 2))
    assert record is not None and record.score is not None and record.score.details is not None
    assert sim.reward_info == record.score.details["reward_info"]
    assert sim.termination_reason == "agent_stop" and sim.seed == record.seed
    assert sim.agent_cost == pytest.approx(
        (record.usage["assistant"].input_tokens * 2.5 + 777 * 10.0) / 1e6
    )
    assert sim.user_cost == pytest.approx(
        (record.usage["user"].input_tokens * 2.0 + 333 * 8.0) / 1e6
    )
    assert sim.messages is not None and sim.messages[0]["role"] == "assistant"  # no system
    assert sim.duration == record.duration_s
    ids = {s.id for s in results.simulations}
    assert len(ids) == 200
    with RunStore(store) as runs:  # the same ids again: deterministic
        again = export_submission(runs, ["model"], tmp_path / "again", prices=PriceTable.load())
    assert {s.id for s in read_results(again.domains[0].path).simulations} == ids
    submitted = json.loads(done.submission.read_text(encoding="utf-8"))
    assert submitted["submission_date"] == "2026-01-02"
    assert submitted["trajectory_files"] == {"airline": "airline_results.json"}


def test_endings_tau2_has_no_name_for_and_a_model_name_of_ones_own(
    store: Path, tmp_path: Path
) -> None:
    """A provider's limit ends the episode in deedbench, and τ² has a name only for the
    context window; the rest are τ²'s agent_error (reward 0 in both). A model name other
    than the trajectories' is written, with a warning that τ²'s validator will say so."""
    endings = {("3", 1): "context_exceeded", ("4", 2): "output_truncated"}

    def cut(record: EpisodeRecord) -> EpisodeRecord:
        ending = endings.get((record.sample_id, record.epoch))
        return record if ending is None else record.model_copy(update={"termination": ending})

    run = copy_run(store, "cut-short", {**MODEL_RUN}, cut, source=model_run(store))
    details = SubmissionDetails(model_name="GPT-4o (2024-08-06)", submitting_org="Us")
    with RunStore(store) as runs:
        done = export_submission(runs, [run], tmp_path / "out", details, PriceTable.load())
    assert done.warnings == [
        "the model name 'GPT-4o (2024-08-06)' is not the model the trajectories name "
        "('gpt-4o'): τ²'s validator will say so"
    ]
    found = {
        (s.task_id, s.trial): s.termination_reason
        for s in read_results(done.domains[0].path).simulations
    }
    assert found[("3", 0)] == "context_window_exceeded"
    assert found[("4", 1)] == "agent_error"
    assert sorted(set(found.values())) == ["agent_error", "agent_stop", "context_window_exceeded"]
    submitted = json.loads(done.submission.read_text(encoding="utf-8"))
    assert submitted["model_name"] == "GPT-4o (2024-08-06)"
    assert (submitted["model_organization"], submitted["submitting_organization"]) == (
        "OpenAI",
        "Us",
    )


def test_a_judge_other_than_taus_is_named(store: Path, tmp_path: Path) -> None:
    judged = judged_run(store, "tau2-retail", "retail")
    with RunStore(store) as runs:
        options = {**runs.require_run(judged).benchmark_options, "judge": "openai/gpt-4o-mini"}
    run = copy_run(store, "retail-mini", {"benchmark_options": options}, source=judged)
    with RunStore(store) as runs:
        details = SubmissionDetails(model_org="deedbench")
        done = export_submission(runs, [run], tmp_path / "out", details, PriceTable.load())
    assert done.warnings[1:] == [
        "retail's NL assertions were judged by openai/gpt-4o-mini, not by τ²'s judge "
        f"({DEFAULT_JUDGE}); the methodology's notes say so"
    ]
    notes = json.loads(done.submission.read_text(encoding="utf-8"))["methodology"]["notes"]
    assert f"NL assertions judged by openai/gpt-4o-mini (τ²'s own judge: {DEFAULT_JUDGE})" in (
        notes
    )


# --- the leaderboard's rules -----------------------------------------------------------


def refused(store: Path, *run_ids: str, extra: tuple[str, ...] = ()) -> str:
    """The one line `export --format tau2-submission` refuses with (exit 2), nothing
    written."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "sub"
        result = invoke(
            "export", *run_ids, "--format", "tau2-submission", "-o", str(out),
            "--store", str(store), *extra,
        )  # fmt: skip
        assert result.exit_code == 2, result.output
        assert not out.exists() and [p.name for p in Path(scratch).iterdir()] == []
    lines = [line for line in result.output.splitlines() if not line.startswith("warning")]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def short_run(store: Path, run_id: str, benchmark: str, *args: str) -> str:
    """A run of the first task (the oracle's, unless `args` name another agent)."""
    with RunStore(store) as runs:
        if runs.get_run(run_id) is not None:
            return run_id
    data = ["--limit", "1"]
    if "--agent" not in args:
        data += ["--data", str(CHECKOUT), "--agent", "baseline/oracle"]
    done = invoke("run", benchmark, *data, *args, "--run-id", run_id, "--store", str(store), "-q")
    assert done.exit_code == 0, done.output
    return run_id


def test_a_benchmark_that_is_no_leaderboard_domain(store: Path) -> None:
    run = short_run(store, "tac", "tac", "--agent", "baseline/random", "--epochs", "4")
    assert one_line(refused(store, run)) == (
        "error: run 'tac' is a run of tac; τ²'s leaderboard takes runs of tau2-airline, "
        "tau2-retail, tau2-telecom, tau2-banking"
    )


def test_telecoms_workflow_policy_and_solo_mode(store: Path) -> None:
    workflow = short_run(store, "workflow", "tau2-telecom", "-T", "policy=workflow")
    assert "run 'workflow' used telecom's workflow policy" in refused(store, workflow)
    solo = short_run(store, "solo", "tau2-telecom", "-T", "mode=solo")
    assert "run 'solo' ran in solo mode (-T mode=solo)" in refused(store, solo)


def test_a_split_other_than_base(store: Path) -> None:
    run = short_run(store, "test-split", "tau2-airline", "-T", "split=test", "--epochs", "4")
    assert "run 'test-split' ran the 'test' split; τ²'s leaderboard takes the base split" in (
        refused(store, run)
    )


def test_fewer_than_four_trials(store: Path) -> None:
    run = short_run(store, "once", "tau2-airline")
    assert one_line(refused(store, run)) == (
        "error: run 'once' ran each task 1 time(s) (--epochs 1); τ²'s leaderboard needs 4 "
        "trials per task (--epochs 4)"
    )


def test_two_runs_of_one_domain(store: Path) -> None:
    twin = copy_run(store, "twin")
    assert "runs 'oracle' and 'twin' are both of τ²'s airline; a submission takes one run " in (
        refused(store, "oracle", twin)
    )


def test_another_agent_or_user_or_settings_in_another_domain(store: Path) -> None:
    idle = copy_run(store, "idle-telecom", {"benchmark": "tau2-telecom", "agent": "baseline/idle"})
    line = refused(store, "oracle", idle)
    assert "runs 'oracle' and 'idle-telecom' differ in their agent (baseline/oracle" in line
    assert "baseline/idle" in line
    user = ModelUser(spec="openai/gpt-4.1")
    voiced = copy_run(store, "voiced-retail", {"benchmark": "tau2-retail", "user": user})
    line = refused(store, "oracle", voiced, extra=("--model-org", "x"))
    assert "differ in their user (deedbench's scripted user and openai/gpt-4.1" in line
    model = model_run(store)
    warmer = {**MODEL_RUN, "benchmark": "tau2-retail", "agent_params": model_settings(0.5)}
    warm = copy_run(store, "warm-retail", warmer)
    line = refused(store, model, warm)
    assert "differ in their agent" in line
    assert '{"temperature": 0.0}' in line and '{"temperature": 0.5}' in line


def test_data_that_changed_since_the_run(store: Path) -> None:
    stale = copy_run(store, "stale", {"data_hash": "0" * 64})
    assert "run 'stale' was made on other τ² data than" in refused(
        store, stale, extra=("--model-org", "x")
    )


def test_tasks_left_out_or_episodes_missing(store: Path) -> None:
    two = short_run(store, "two-tasks", "tau2-airline", "--epochs", "4", "--limit", "2")
    assert "run 'two-tasks' covers 2 of the 50 tasks of tau2-airline's base split" in refused(
        store, two, extra=("--model-org", "x")
    )
    gone = copy_run(store, "cut", record=lambda r: None if r.key[::2] == ("5", 3) else r)
    line = refused(store, gone, extra=("--model-org", "x"))
    assert "run 'cut' is not finished: 1 of its 200 episodes are not stored (task 5 epoch 3)" in (
        line
    )
    assert f"finish it first: deedbench run tau2-airline --run-id cut --store {store}" in line


def _spoilt(outcome: str) -> Callable[[EpisodeRecord], EpisodeRecord]:
    def spoil(record: EpisodeRecord) -> EpisodeRecord:
        if record.key[::2] not in (("9", 2), ("31", 4)):
            return record
        if outcome == "error":
            return record.model_copy(update={"status": "error", "score": None})
        assert record.score is not None
        return record.model_copy(
            update={"score": record.score.model_copy(update={"outcome": outcome})}
        )

    return spoil


@pytest.mark.parametrize(
    ("outcome", "says"),
    [
        (
            "error",
            "run 'broken-error' has 2 episode(s) that ended in an infrastructure error "
            "(task 9 epoch 2, task 31 epoch 4); run them again first: deedbench run "
            "tau2-airline --run-id broken-error",
        ),
        (
            "needs_judge",
            "run 'broken-needs_judge' has 2 episode(s) scored 'needs_judge' (task 9 epoch 2, "
            "task 31 epoch 4): τ²'s NL-assertion tasks (retail's, banking's task_102) are "
            "scored by a judge: run the domain again with -T judge=SPEC",
        ),
        (
            "evaluator_error",
            "run 'broken-evaluator_error' has 2 episode(s) scored 'evaluator_error' (task 9 "
            "epoch 2, task 31 epoch 4): τ²'s evaluator cannot score these trajectories "
            "either, and the leaderboard has no place for an unscored trial (why: deedbench "
            "show broken-evaluator_error 9 --epoch 2)",
        ),
    ],
)
def test_episodes_not_scored(store: Path, outcome: str, says: str) -> None:
    run = copy_run(store, f"broken-{outcome}", record=_spoilt(outcome))
    assert says in one_line(refused(store, run, extra=("--model-org", "x")))


def test_a_model_org_is_needed_where_the_provider_does_not_say(store: Path) -> None:
    assert one_line(refused(store, "oracle")) == (
        "error: who made baseline/oracle? give --model-org (deedbench knows openai's and "
        "anthropic's models only)"
    )


def test_the_folder_must_be_new_or_empty(store: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "old.json").write_text("{}")
    result = invoke(
        "export", "oracle", "--format", "tau2-submission", "-o", str(taken),
        "--model-org", "x", "--store", str(store),
    )  # fmt: skip
    assert result.exit_code == 2
    assert "it exists and is not an empty folder" in one_line(result.output)
    assert [p.name for p in taken.iterdir()] == ["old.json"]
    nowhere = invoke(
        "export", "oracle", "--format", "tau2-submission", "--model-org", "x",
        "--store", str(store),
    )  # fmt: skip
    assert nowhere.exit_code == 2
    assert "--format tau2-submission needs -o DIR" in one_line(nowhere.output)


def _read_only(path: Path) -> Callable[[], None]:
    """`path` made read-only for this process, root too (the immutable attribute); what
    undoes it."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        return lambda: path.chmod(0o755)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
        pytest.fail("root here cannot make a folder read-only (no immutable attribute)")
    return lambda: subprocess.run([chattr, "-i", str(path)], check=True)


def test_an_empty_folder_is_written_into_or_refused_when_it_cannot_be(
    store: Path, tmp_path: Path
) -> None:
    """-o names an empty folder: the submission goes into it (the folder stays the one the
    user made); a read-only one is refused, untouched, never replaced by a new folder."""
    args = ["export", "oracle", "--format", "tau2-submission", "--model-org", "x"]
    empty = tmp_path / "empty"
    empty.mkdir()
    made = empty.stat().st_ino
    done = invoke(*args, "-o", str(empty), "--store", str(store))
    assert done.exit_code == 0, done.output
    assert empty.stat().st_ino == made
    assert sorted(p.name for p in empty.iterdir()) == [SUBMISSION_FILE, "trajectories"]
    locked = tmp_path / "locked"
    locked.mkdir()
    made = locked.stat().st_ino
    undo = _read_only(locked)
    try:
        refused = invoke(*args, "-o", str(locked), "--store", str(store))
        assert refused.exit_code == 2
        assert f"cannot write the submission into {locked}: it cannot be written to" in one_line(
            refused.output
        )
        assert locked.stat().st_ino == made and list(locked.iterdir()) == []
    finally:
        undo()


def test_other_formats_take_one_run_and_none_of_the_submissions_options(store: Path) -> None:
    twin = copy_run(store, "twin")
    many = invoke("export", "oracle", twin, "--format", "jsonl", "--store", str(store))
    assert many.exit_code == 2
    assert one_line(many.output) == (
        "error: --format jsonl writes one run; 2 given (only tau2-submission takes several)"
    )
    named = invoke("export", "oracle", "--model-org", "x", "--store", str(store))
    assert named.exit_code == 2
    assert one_line(named.output) == "error: --model-org: only for --format tau2-submission"
    bad = invoke("export", "oracle", "--format", "xml", "--store", str(store))
    assert "Valid formats: jsonl, csv, inspect, tau2-submission" in one_line(bad.output)
