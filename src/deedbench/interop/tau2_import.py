"""τ²'s result files as deedbench runs, so report, compare, HTML, the viewer and audit
read τ²'s own runs as they read deedbench's.

Every simulation is rescored first (`benchmarks.tau2.rescore`), and the record keeps
deedbench's verdict: τ²'s reward recomputed (which equals the file's wherever the
rescore says "reproduced"), its components, and the procedure rules. What the file
itself said stays beside it in the score's details (``tau2_file``: the recorded
reward, whether it was reproduced, what differs, the costs τ² recorded), so nothing
the file held is lost and a difference is never hidden.

A simulation becomes an episode of sample (τ² task) × epoch (τ²'s trial + 1, or the
next free epoch where the file numbers none or one twice); an infrastructure error
is an error record (in no rate, as in τ²); a simulation that cannot be read is an
error record saying why. Voice (full-duplex) files are refused: deedbench scores text.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
from datetime import UTC, datetime
from pathlib import Path

from deedbench.benchmarks import benchmark_class
from deedbench.benchmarks.tau2.benchmark import task_sample
from deedbench.benchmarks.tau2.rescore import Rescored, Tau2Rescorer, Tau2RescoreReport
from deedbench.benchmarks.tau2.results import TAU2_ENDINGS, Tau2Results, Tau2Simulation
from deedbench.errors import BenchmarkError
from deedbench.records import EpisodeRecord, ModelUser, RunConfig, Usage
from deedbench.version import __version__

__all__ = ["run_from_results"]


def run_from_results(
    results: Tau2Results,
    rescorer: Tau2Rescorer,
    rescored: list[Rescored],
    report: Tau2RescoreReport,
    source: Path,
    run_id: str | None = None,
) -> tuple[RunConfig, list[EpisodeRecord]]:
    """The run a rescored τ² result file makes (`run_id`: its name, else one fixed by the
    file, so importing it twice is refused as a duplicate)."""
    if results.voice:
        raise BenchmarkError(
            f"{source}: a voice (full-duplex) result file; deedbench imports text runs only"
        )
    info = results.info
    epochs: dict[str, set[int]] = {}
    records = [
        _record(rescorer, found, _epoch(found.verdict.task_id, sim.trial, epochs), sim)
        for found, sim in zip(rescored, results.simulations, strict=True)
    ]
    agent = info.agent_info.llm or info.agent_info.implementation
    user = info.user_info.llm
    options = {"data": str(rescorer.data.folder), **rescorer.options}
    config = RunConfig(
        run_id=run_id or _run_id(rescorer.benchmark, agent, results),
        benchmark=rescorer.benchmark,
        benchmark_options=options,
        data_hash=_content_hash(results),
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
                "judge_reading": report.judge_reading,
            }
        },
        user=ModelUser(spec=user) if user else None,
        conditions=["default"],
        epochs=max((r.epoch for r in records), default=1),
        seed=info.seed or 0,
        sample_ids=list(dict.fromkeys(r.sample_id for r in records)),
        report=benchmark_class(rescorer.benchmark).report,
        deedbench_version=__version__,
        python_version=platform.python_version(),
        created_at=results.timestamp or datetime.now(UTC).isoformat(),
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


def _content_hash(results: Tau2Results) -> str:
    """What the run ran on, as the file records it: its tasks and its policy."""
    text = json.dumps([results.tasks, results.info.environment_info.policy], sort_keys=True)
    return "tau2-results:sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _run_id(benchmark: str, agent: str, results: Tau2Results) -> str:
    ids = "|".join(sorted(s.id for s in results.simulations))
    digest = hashlib.sha256(f"{results.timestamp}|{ids}".encode()).hexdigest()[:8]
    slug = re.sub(r"[^a-z0-9]+", "-", agent.lower()).strip("-")[:60] or "agent"
    return f"{benchmark}-tau2-{slug}-{digest}"
