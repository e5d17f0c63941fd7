"""τ²'s result files as deedbench runs, so report, compare, HTML, the viewer and audit
read τ²'s own runs as they read deedbench's.

Every simulation is rescored first (`benchmarks.tau2.rescore`), and the record keeps
deedbench's verdict: τ²'s reward recomputed (which equals the file's wherever the
rescore says "reproduced"), its components, and the procedure rules. What the file
itself said stays beside it in the score's details (``tau2_file``: the recorded
reward, whether it was reproduced, what differs, the costs τ² recorded), so nothing
the file held is lost and a difference is never hidden.

A simulation becomes an episode of sample (τ² task) × epoch (τ²'s trial + 1, or the
next free epoch where the file numbers none or one twice; a trial beyond a run's
`MAX_EPOCHS` is refused); an infrastructure error
is an error record (in no rate, as in τ²); a simulation that cannot be read is an
error record saying why. Voice (full-duplex) files are refused: deedbench scores text.

The run is marked imported (`RunConfig.imported`): its episodes are the file's, so it has
none to run. Where every task of the file and its policy equal the data's, the run
records the data's hash, as a deedbench run of the domain does, so `compare` pairs the
two task by task and trial by epoch. `import_results` is the one computation behind
both `deedbench import tau2` and `deedbench rescore tau2`: the figures the rescore
prints (pass^k, whose failure) are `deedbench report`'s of the run it imports as.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from deedbench.benchmarks import benchmark_class, load_benchmark
from deedbench.benchmarks.tau2.benchmark import Tau2Benchmark, task_sample
from deedbench.benchmarks.tau2.rescore import Rescored, Tau2Rescorer, Tau2RescoreReport
from deedbench.benchmarks.tau2.results import TAU2_ENDINGS, Tau2Results, Tau2Simulation
from deedbench.engine.planning import JUDGE_DEFAULTS
from deedbench.engine.whole_runs import unencodable
from deedbench.errors import BenchmarkError
from deedbench.records import (
    MAX_EPOCHS,
    AgentSettings,
    EpisodeRecord,
    ModelRole,
    ModelUser,
    RunConfig,
    Usage,
)
from deedbench.reports.cost import PriceTable
from deedbench.reports.summary import RunSummary, RunTally
from deedbench.version import __version__

__all__ = ["ImportedRun", "import_results", "run_from_results"]


@dataclass
class ImportedRun:
    """A τ² result file as a run: its configuration and records, their summary as
    `deedbench report` computes it, and the rescore's report with that summary's figures."""

    config: RunConfig
    records: list[EpisodeRecord]
    summary: RunSummary
    report: Tau2RescoreReport


def import_results(
    results: Tau2Results,
    rescorer: Tau2Rescorer,
    rescored: list[Rescored],
    report: Tau2RescoreReport,
    source: Path,
    run_id: str | None = None,
    *,
    judge: str | None = None,
    judge_settings: AgentSettings | None = None,
    prices: PriceTable | None = None,
    same_data: bool = True,
) -> ImportedRun:
    """The run a rescored file makes (`run_from_results`) and its figures, computed once
    as `deedbench report` computes them from the stored run (`RunTally`): the report's
    `failures`, `fault_kinds` and `run_pass_hat_k` are that summary's, so `rescore tau2`
    and `import tau2` of one file say the same. `same_data` False skips reading the
    data's own tasks to pair the run with deedbench's (`rescore` stores no run)."""
    config, records = run_from_results(
        results,
        rescorer,
        rescored,
        report,
        source,
        run_id,
        judge=judge,
        judge_settings=judge_settings,
        same_data=same_data,
    )
    summary = RunTally.of(config, records).summary(prices, groupings=[])
    [condition] = summary.conditions
    metric = config.report.metric(config.report.primary).value
    figures = {
        "failures": condition.overall.failures,
        "fault_kinds": condition.overall.fault_kinds,
        "run_pass_hat_k": condition.pass_hat_k.get(metric, []),
    }
    return ImportedRun(config, records, summary, report.model_copy(update=figures))


def run_from_results(
    results: Tau2Results,
    rescorer: Tau2Rescorer,
    rescored: list[Rescored],
    report: Tau2RescoreReport,
    source: Path,
    run_id: str | None = None,
    *,
    judge: str | None = None,
    judge_settings: AgentSettings | None = None,
    same_data: bool = True,
) -> tuple[RunConfig, list[EpisodeRecord]]:
    """The run a rescored τ² result file makes (`run_id`: its name, else one fixed by the
    file, so importing it twice is refused as a duplicate); `judge` the model that judged
    what the file records no verdicts for, with its settings. The data hash is the data's
    where the file ran on it (`_data_hash`; `same_data` False: the file's own)."""
    if results.voice:
        raise BenchmarkError(
            f"{source}: a voice (full-duplex) result file; deedbench imports text runs only"
        )
    info = results.info
    epochs: dict[str, set[int]] = {}
    for sim in results.simulations:
        if sim.trial is not None and sim.trial >= MAX_EPOCHS:
            raise BenchmarkError(
                f"{source}: simulation {sim.id!r}: field trial: {sim.trial} is beyond the "
                f"{MAX_EPOCHS:,} trials (epochs) a run holds"
            )
    bad = unencodable(results.model_dump())
    if bad is not None:  # no store holds it: say where, before anything is written
        raise BenchmarkError(
            f"{source}: field {bad[0]} holds text that is not Unicode ({bad[1]!a}, a lone "
            "surrogate)"
        )
    records = [
        _record(rescorer, found, _epoch(found.verdict.task_id, sim.trial, epochs), sim)
        for found, sim in zip(rescored, results.simulations, strict=True)
    ]
    agent = info.agent_info.llm or info.agent_info.implementation
    user = info.user_info.llm
    options = {"data": str(rescorer.data.folder), **rescorer.options}
    data_hash, data_note = _content_hash(results), "the file's tasks and policy"
    if same_data:
        data_hash, data_note = _data_hash(results, rescorer, options)
    if judge is not None:
        options["judge"] = judge
    config = RunConfig(
        run_id=run_id or _run_id(rescorer.benchmark, agent, results),
        benchmark=rescorer.benchmark,
        benchmark_options=options,
        data_hash=data_hash,
        agent=agent,
        agent_params={
            "tau2": {
                "file": str(source),
                "git_commit": info.git_commit,
                "agent": info.agent_info.model_dump(mode="json"),
                "user": info.user_info.model_dump(mode="json"),
                "num_trials": info.num_trials,
                "max_steps": info.max_steps,
                "max_errors": info.max_errors,
                "retrieval_config": info.retrieval_config,
                "tasks_from": report.tasks_from,
                "reproduced": f"{report.reproduced} of {report.rescored}",
                "data_hash": data_note,
                "judge_reading": report.judge_reading,
            }
        },
        user=ModelUser(spec=user) if user else None,
        judge=_judge(judge, judge_settings),
        imported=f"τ² result file {source}",
        conditions=["default"],
        epochs=max((r.epoch for r in records), default=1),
        seed=info.seed or 0,
        sample_ids=list(dict.fromkeys(r.sample_id for r in records)),
        report=benchmark_class(rescorer.benchmark).recorded_report(),
        deedbench_version=__version__,
        python_version=platform.python_version(),
        created_at=_created_at(results.timestamp),
    )
    return config, records


def _epoch(task_id: str, trial: int | None, taken: dict[str, set[int]]) -> int:
    used = taken.setdefault(task_id, set())
    epoch = trial + 1 if trial is not None and trial >= 0 and trial + 1 not in used else None
    if epoch is None:
        epoch = next(e for e in range(1, len(used) + 2) if e not in used)
    used.add(epoch)
    return epoch


def _record(
    rescorer: Tau2Rescorer, found: Rescored, epoch: int, simulation: Tau2Simulation
) -> EpisodeRecord:
    verdict = found.verdict
    task = rescorer.tasks.get(verdict.task_id)
    sample = task_sample(task, rescorer.domain) if task is not None else None
    ending = TAU2_ENDINGS.get(simulation.termination_reason)
    termination = str(ending) if ending is not None else simulation.termination_reason
    failed = verdict.status in ("infrastructure_error", "not_rescored")
    score = found.score if not failed else None
    if score is not None:
        score.details = {
            **(score.details or {}),
            "tau2_file": {
                "simulation": simulation.id,
                "reward": verdict.recorded_reward,
                "reproduced": verdict.reproduced,
                "differs": verdict.differs,
                "nl_from": verdict.nl_from,
                "agent_cost": simulation.agent_cost,
                "user_cost": simulation.user_cost,
            },
        }
    error = None
    if failed:
        error = verdict.error or "τ² recorded an infrastructure error"
    return EpisodeRecord(
        sample_id=verdict.task_id,
        condition="default",
        epoch=epoch,
        seed=simulation.seed or 0,
        status="error" if failed else "scored",
        termination=termination,
        steps=sum(m.role == "assistant" for m in found.messages),
        messages=found.messages,
        score=score,
        metadata=dict(sample.metadata) if sample is not None else {"task": verdict.task_id},
        error=error,
        usage=_usage(found),
        started_at=_timestamp(simulation.start_time),
        duration_s=simulation.duration,
    )


def _usage(found: Rescored) -> dict[str, Usage]:
    """Tokens by role, from the usage τ² recorded on each model message."""
    totals: dict[str, Usage] = {}
    for message in found.messages:
        if message.usage is not None:
            totals[message.role] = totals.get(message.role, Usage()) + message.usage
    return totals


def _timestamp(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return 0.0


def _judge(spec: str | None, settings: AgentSettings | None) -> ModelRole | None:
    """The judge of what the file records no verdicts for, as the run records it."""
    if spec is None:
        return None
    return ModelRole(spec=spec, settings=settings if settings is not None else JUDGE_DEFAULTS)


def _data_hash(
    results: Tau2Results, rescorer: Tau2Rescorer, options: dict[str, str]
) -> tuple[str, str]:
    """The data hash a deedbench run of the file's domain on the same data records, with
    why, where every task the file holds equals the data's task of that id and the
    policy is the data's (the file ran on this data); else the file's own hash, with
    what differs (`compare` then pairs it with no deedbench run)."""
    own = _content_hash(results)
    try:
        bench = load_benchmark(rescorer.benchmark, options)
    except BenchmarkError as exc:
        return own, f"the file's own: the data cannot be read ({exc})"
    if not isinstance(bench, Tau2Benchmark):  # a third party's package took the name
        return own, f"the file's own: {rescorer.benchmark} is not deedbench's τ² benchmark"
    data = bench.split_tasks
    differ = [
        task_id
        for task_id, task in rescorer.tasks.items()
        if task_id not in data or data[task_id].model_dump() != task.model_dump()
    ]
    if differ:
        some = ", ".join(differ[:3]) + (" ..." if len(differ) > 3 else "")
        return own, f"the file's own: {len(differ)} tasks differ from the data's ({some})"
    if results.info.environment_info.policy != bench.policy:
        return own, "the file's own: its policy differs from the data's"
    return bench.data_hash(), f"the data's ({bench.folder}): every task and the policy equal"
def _created_at(timestamp: str | None) -> str:
    """When the file says its run was made (`read_results` checked it), as deedbench's runs
    write it, so that `runs` lists runs in the order they were made: to the second, in
    UTC where the file names its zone (τ² writes local time without one)."""
    if not timestamp:
        return datetime.now(UTC).isoformat(timespec="seconds")
    when = datetime.fromisoformat(timestamp)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.isoformat(timespec="seconds")


def _content_hash(results: Tau2Results) -> str:
    """What the run ran on, as the file records it: its tasks and its policy."""
    text = json.dumps([results.tasks, results.info.environment_info.policy], sort_keys=True)
    return "tau2-results:sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _run_id(benchmark: str, agent: str, results: Tau2Results) -> str:
    ids = "|".join(sorted(s.id for s in results.simulations))
    digest = hashlib.sha256(f"{results.timestamp}|{ids}".encode()).hexdigest()[:8]
    slug = re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-")[:60] or "agent"
    return f"{benchmark}-tau2-{slug}-{digest}"
