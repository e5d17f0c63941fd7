"""deedbench runs as Inspect logs: `write_inspect_logs` writes a stored run as `.eval`
logs, one per condition (Inspect keeps one task per log, and a condition is a task:
``deedbench/tac``, ``deedbench/tac_welfare``), which Inspect's `read_eval_log` reads and
``inspect view`` serves. `deedbench.interop.read_log` reads them back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalError,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput

from deedbench.benchmarks import benchmark_class
from deedbench.interop.convert import (
    to_inspect,
    usage_to_inspect,
)
from deedbench.interop.inspect_tasks import (
    SCORER_NAME,
    SEED_KEY,
    TERMINATION_KEY,
    inspect_score,
    task_names,
)
from deedbench.records import EpisodeRecord, RunConfig, Usage
from deedbench.reports.export import atomic_path

__all__ = ["task_name", "write_inspect_logs"]


def task_name(benchmark: str, condition: str) -> str:
    """The Inspect task of a benchmark's condition; the benchmark's first condition is the
    bare name, as in ``deedbench/tac`` and ``deedbench/tac_welfare``."""
    return "deedbench/" + task_names(benchmark, benchmark_class(benchmark).conditions)[condition]


def write_inspect_logs(
    config: RunConfig, records: Iterable[EpisodeRecord], log_dir: str | Path
) -> list[Path]:
    """Write a run as Inspect `.eval` logs in `log_dir`, one per condition with records;
    returns their paths. Error episodes are written as errored samples, registered
    secrets are redacted, and file names made from the run id stay inside `log_dir`."""
    directory = Path(log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    by_condition: dict[str, list[EpisodeRecord]] = {c: [] for c in config.conditions}
    for record in records:
        by_condition.setdefault(record.condition, []).append(record.redacted())
    paths = []
    for condition, mine in by_condition.items():
        if not mine:
            continue
        log = _eval_log(config, condition, mine)
        path = directory / _file_name(f"{config.run_id}_{log.eval.task}.eval")
        with atomic_path(path) as temporary:  # a kill never leaves half a log
            write_eval_log(log, str(temporary), format="eval")
        paths.append(path)
    return paths


def _file_name(text: str) -> str:
    """A plain file name from data: no folder separators, no leading dot, nothing odd."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", text).lstrip(".") or "run.eval"


def _eval_log(config: RunConfig, condition: str, records: list[EpisodeRecord]) -> EvalLog:
    task = task_name(config.benchmark, condition)
    samples = [_eval_sample(config, r) for r in records]
    planned = len(config.sample_ids) * config.epochs
    scored = [r for r in records if r.score is not None]
    total = sum((_usage(r, "assistant") for r in records), Usage())
    unfinished = planned - len(scored)
    return EvalLog(
        status="success" if not unfinished else "error",
        error=None
        if not unfinished
        else EvalError(
            message=f"{unfinished} of {planned} episodes did not finish (errors or not run)",
            traceback="",
            traceback_ansi="",
        ),
        eval=EvalSpec(
            eval_id=f"{config.run_id}-{condition}",
            run_id=config.run_id,
            created=config.created_at,
            task=task,
            task_version=config.data_hash,
            task_args=dict(config.benchmark_options),
            dataset=EvalDataset(
                name=f"deedbench/{config.benchmark}",
                samples=len(config.sample_ids),
                sample_ids=list(config.sample_ids),
            ),
            model=config.agent,
            config=EvalConfig(epochs=config.epochs),
            packages={"deedbench": config.deedbench_version},
            metadata={
                "benchmark": config.benchmark,
                "condition": condition,
                "options": dict(config.benchmark_options),
                "deedbench_run": config.model_dump(mode="json"),
            },
        ),
        results=EvalResults(
            total_samples=planned,
            completed_samples=len(scored),
            scores=_mean_scores([r.score.values for r in scored if r.score is not None]),
        ),
        stats=EvalStats(
            started_at=_iso(min(r.started_at for r in records)),
            completed_at=_iso(max(r.started_at + r.duration_s for r in records)),
            model_usage={config.agent: usage_to_inspect(total)} if total.calls else {},
        ),
        samples=samples,
    )


def _eval_sample(config: RunConfig, record: EpisodeRecord) -> EvalSample:
    messages = [to_inspect(m) for m in record.messages]
    last = next((m for m in reversed(messages) if isinstance(m, ChatMessageAssistant)), None)
    opening = next((m.content for m in record.messages if m.role == "user"), record.sample_id)
    usage = {
        spec: usage_to_inspect(_usage(record, role))
        for role, spec in (("assistant", config.agent), ("user", config.user and config.user.spec))
        if spec and role in record.usage
    }
    return EvalSample(
        id=record.sample_id,
        epoch=record.epoch,
        input=opening,
        target="",
        messages=messages,
        output=ModelOutput(
            model=config.agent,
            choices=[ChatCompletionChoice(message=last, stop_reason="stop")] if last else [],
        ),
        scores=None
        if record.score is None
        else {SCORER_NAME: inspect_score(record.score, record.termination)},
        metadata=record.metadata | {"chance": record.chance},
        store={SEED_KEY: record.seed, TERMINATION_KEY: record.termination},
        model_usage=usage,
        started_at=_iso(record.started_at),
        completed_at=_iso(record.started_at + record.duration_s),
        total_time=record.duration_s,
        working_time=record.duration_s,
        error=None
        if record.error is None
        else EvalError(message=record.error, traceback="", traceback_ansi=""),
    )


def _usage(record: EpisodeRecord, role: str) -> Usage:
    return record.usage.get(role, Usage())


def _mean_scores(values: list[dict[str, float]]) -> list[EvalScore]:
    keys = list(dict.fromkeys(k for v in values for k in v))
    scores = []
    for key in keys:
        present = [v[key] for v in values if key in v]
        mean = EvalMetric(name="mean", value=sum(present) / len(present))
        scores.append(
            EvalScore(
                name=key, scorer=SCORER_NAME, scored_samples=len(present), metrics={"mean": mean}
            )
        )
    return scores


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()
