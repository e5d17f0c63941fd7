"""deedbench runs as Inspect logs: `write_inspect_logs` writes a stored run as `.eval`
logs, one per condition (Inspect keeps one task per log, and a condition is a task:
``deedbench/tac``, ``deedbench/tac_welfare``), which Inspect's `read_eval_log` reads and
``inspect view`` serves. `deedbench.interop.read_log` reads them back.

A condition with more than `PART_EPISODES` stored episodes is written as several logs
of at most that many samples each (``<run>_<task>_part001.eval``, ...), which ``inspect
view`` lists side by side and `read_inspect_logs` joins back into the one condition.
Why: Inspect's public writer (`write_eval_log`) takes a whole `EvalLog` and buffers
every sample before writing, and each sample it buffers rescans all those before it
(`ZipLogFile.buffer_sample` drops an earlier record of the same id and epoch), so one
log of n samples costs time in n² and memory in n (one log per condition: 84 to 107 s
and 1.26 GB for 20,064 TAC episodes). Parts of a bounded size keep the time linear in
the run and the memory flat (177 MB at any size: BENCHMARKS.md, "Inspect export at
scale"). Each part is a whole Inspect log of its own
samples (its results, status and stats are those of its samples); the last part of a
condition also counts the planned episodes that were never stored, as a single log
does. Each part's metadata says which it is (``part``: its index from 1, whether it is
the last, and a token shared by the parts of one export), so a reader can tell a
complete set from a partial one. A run small enough for one log per condition is
written exactly as before.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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

from deedbench.benchmarks import benchmark_class, reading_class
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

__all__ = ["PART_EPISODES", "PART_KEY", "task_name", "write_inspect_logs"]

# Samples per log: small enough that Inspect's rescans within a log stay a few percent of
# the time and a log's samples a few tens of MB in memory, large enough that a 20,000-episode
# run is tens of logs, not hundreds (BENCHMARKS.md, "Inspect export at scale").
PART_EPISODES = 500
PART_KEY = "part"  # in a part's eval metadata: {"index": 1.., "last": bool, "export": token}


def task_name(benchmark: str, condition: str) -> str:
    """The Inspect task of a benchmark's condition; the benchmark's first condition is the
    bare name, as in ``deedbench/tac`` and ``deedbench/tac_welfare``."""
    return "deedbench/" + task_names(benchmark, benchmark_class(benchmark).conditions)[condition]


def _run_task(config: RunConfig, condition: str, allow_import: bool) -> str:
    """`task_name` of a run's condition, from the benchmark's conditions the run recorded
    (a run recorded before them: its class, imported only as `reading_class` allows)."""
    conditions = config.report.conditions
    if conditions is None:
        conditions = list(reading_class(config.benchmark, allow_import=allow_import).conditions)
    if condition not in conditions:
        conditions = [*conditions, condition]
    return "deedbench/" + task_names(config.benchmark, conditions)[condition]


def write_inspect_logs(
    config: RunConfig,
    records: Iterable[EpisodeRecord],
    log_dir: str | Path,
    *,
    part_episodes: int | None = None,
    allow_import: bool = False,
) -> list[Path]:
    """Write a run as Inspect `.eval` logs in `log_dir`, one per condition with records
    (several for a condition of more than `part_episodes`, default `PART_EPISODES`,
    records); returns their paths.
    Records are read once and at most `part_episodes` per condition are held. Error
    episodes are written as errored samples, registered secrets are redacted, and file
    names made from the run id stay inside `log_dir`. The logs appear together when all
    are written (a failure leaves none of them). `allow_import`: a run recorded before
    runs kept their benchmark's conditions may import its benchmark's code (`reading_class`)."""
    size = PART_EPISODES if part_episodes is None else part_episodes
    if size < 1:
        raise ValueError("a log part holds at least one episode")
    tasks = {c: _run_task(config, c, allow_import) for c in config.conditions}
    directory = Path(log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    with ExitStack() as renames:  # each log renamed into place as the stack closes
        writer = _Writer(config, directory, size, renames, tasks)
        for record in records:
            writer.add(record.redacted())
        return writer.finish()


@dataclass
class _Condition:
    """One condition's records not yet written, and how many were written before."""

    name: str
    pending: list[EpisodeRecord] = field(default_factory=list)
    stored: int = 0  # records of this condition seen so far
    paths: list[Path] = field(default_factory=list)  # its logs written so far


class _Writer:
    """Writes each condition's records as they arrive, a part whenever a part is full
    and one more record of its condition arrives (so the last part is known as such)."""

    def __init__(
        self,
        config: RunConfig,
        directory: Path,
        size: int,
        renames: ExitStack,
        tasks: dict[str, str],
    ) -> None:
        self.config = config
        self.tasks = tasks
        self.directory = directory
        self.size = size
        self.renames = renames
        self.conditions = {c: _Condition(c) for c in config.conditions}
        self.export = uuid.uuid4().hex[:12]
        planned = len(config.sample_ids) * config.epochs
        self.width = max(3, len(str(-(-planned // size))))

    def add(self, record: EpisodeRecord) -> None:
        state = self.conditions.setdefault(record.condition, _Condition(record.condition))
        if len(state.pending) == self.size:
            self._write(state, last=False)
        state.pending.append(record)
        state.stored += 1

    def finish(self) -> list[Path]:
        for state in self.conditions.values():
            if state.pending:
                self._write(state, last=True)
        return [path for state in self.conditions.values() for path in state.paths]

    def _write(self, state: _Condition, last: bool) -> None:
        records, state.pending = state.pending, []
        index = len(state.paths) + 1
        whole = last and index == 1  # the condition fits one log: written as ever
        planned = len(self.config.sample_ids) * self.config.epochs
        # the planned episodes never stored count against the condition's last log
        share = len(records) + (planned - state.stored if last else 0)
        part = None if whole else {"index": index, "last": last, "export": self.export}
        task = self.tasks.get(state.name) or _run_task(self.config, state.name, False)
        log = _eval_log(self.config, task, state.name, records, share, part)
        name = f"{self.config.run_id}_{log.eval.task}"
        if part is not None:
            name += f"_part{index:0{self.width}d}"
        path = self.directory / _file_name(name + ".eval")
        temporary = self.renames.enter_context(atomic_path(path))  # a kill leaves no half log
        write_eval_log(log, str(temporary), format="eval")
        state.paths.append(path)


def _file_name(text: str) -> str:
    """A plain file name from data: no folder separators, no leading dot, nothing odd."""
    return re.sub(r"[^A-Za-z0-9._-]", "-", text).lstrip(".") or "run.eval"


def _eval_log(
    config: RunConfig,
    task: str,
    condition: str,
    records: list[EpisodeRecord],
    planned: int,
    part: dict[str, Any] | None,
) -> EvalLog:
    """One log of a condition's `records` (Inspect's `task`), standing for `planned` of
    its episodes."""
    samples = [_eval_sample(config, r) for r in records]
    scored = [r for r in records if r.score is not None]
    total = sum((_usage(r, "assistant") for r in records), Usage())
    unfinished = planned - len(scored)
    metadata: dict[str, Any] = {
        "benchmark": config.benchmark,
        "condition": condition,
        "options": dict(config.benchmark_options),
        "deedbench_run": config.model_dump(mode="json"),
    }
    eval_id = f"{config.run_id}-{condition}"
    if part is not None:
        metadata[PART_KEY] = part
        eval_id += f"-part{part['index']}"
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
            eval_id=eval_id,
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
            metadata=metadata,
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
