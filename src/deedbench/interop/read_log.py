"""Inspect logs as deedbench runs: `read_inspect_logs` turns logs into deedbench runs, so
`report` and `compare` analyse runs made elsewhere: logs of the upstream
``inspect_evals/tac`` task (``tac`` and ``tac_welfare``), and logs of deedbench's own
Inspect tasks. An upstream sample's record gets the metadata and chance level a
deedbench TAC record has (scenario, category and variant from the sample id
``<scenario>_<variant>``; chance = #safe / #options), so a report groups it the same
way; its welfare and completed values are the ones the log recorded, and the deciding
purchase is cited as evidence. Whether it was `harmful` is read as upstream reads it
(`deedbench.benchmarks.tac.upstream`): the last call's id, matched exactly (upstream's
tool and scorer strip nothing, so a padded id is an unknown one there). Each condition
keeps upstream's generation settings and nudge limit, each record the nudges it took.
Logs of one model on the same data become one run, with a condition per task; the parts
of a condition that `write_inspect_logs` split over several logs are joined back (every
part of the export must be given, once).
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalLog,
    EvalSample,
    read_eval_log,
)
from inspect_ai.scorer import Score as InspectScore
from pydantic import ValidationError

from deedbench.benchmarks import reading_class
from deedbench.benchmarks.tac.upstream import (
    NUDGE_PARAM,
    NUDGES_KEY,
    UPSTREAM_TASKS,
    upstream_sample,
    upstream_verdict,
)
from deedbench.errors import BenchmarkError, InspectLogError
from deedbench.files import check_file
from deedbench.interop.convert import (
    from_inspect,
    usage_from_inspect,
)
from deedbench.interop.inspect_tasks import SCORER_NAME, SEED_KEY, TERMINATION_KEY
from deedbench.interop.write_log import PART_KEY
from deedbench.records import (
    EpisodeRecord,
    Evidence,
    Message,
    ReportSpec,
    RunConfig,
    Score,
    Usage,
)
from deedbench.version import __version__

__all__ = ["read_inspect_logs"]


@dataclass
class _Part:
    """What one log holds: one condition of one model's run."""

    path: Path
    log: EvalLog
    benchmark: str
    condition: str
    options: dict[str, str]
    data_hash: str
    records: list[EpisodeRecord] = field(default_factory=list)
    piece: _Piece | None = None  # where a condition written in several logs: which part
    # the report its run recorded (deedbench's export carries the run), with the
    # benchmark's conditions; None where the log does not say, and its class says
    report: ReportSpec | None = None


@dataclass(frozen=True)
class _Piece:
    """A part of a condition `write_inspect_logs` wrote in several logs."""

    index: int
    last: bool
    export: str


def read_inspect_logs(
    paths: Sequence[str | Path], *, allow_import: bool = False
) -> list[tuple[RunConfig, list[EpisodeRecord]]]:
    """Read Inspect logs as deedbench runs: one per model and data, a condition per log.
    A folder stands for the ``.eval`` logs in it, as `write_inspect_logs` leaves them.
    A log of a benchmark that is code (``python/MODULE:ATTR``, another package's) whose
    run the log does not carry imports that code only with `allow_import`."""
    parts = [_read_part(path, allow_import) for path in _log_files(paths)]
    groups: dict[tuple[str, str, str], list[_Part]] = {}
    for part in parts:
        groups.setdefault((part.benchmark, part.log.eval.model, part.data_hash), []).append(part)
    return [_run(group, allow_import) for group in groups.values()]


def _log_files(paths: Sequence[str | Path]) -> list[Path]:
    """The logs the paths name: a file itself, a folder's ``*.eval`` files in name order."""
    found: list[Path] = []
    for path in map(Path, paths):
        if not path.is_dir():
            found.append(path)
            continue
        logs = sorted(p for p in path.glob("*.eval") if not p.is_dir())
        if not logs:
            raise InspectLogError(
                f"{path}: no .eval logs in this folder (deedbench export RUN --format inspect "
                "-o FOLDER writes them)"
            )
        found += logs
    return found


def _read_part(path: Path, allow_import: bool) -> _Part:
    try:
        check_file(path)  # Inspect reads it whole: no FIFO, no device, no file over the cap
    except OSError as exc:
        raise InspectLogError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        log = read_eval_log(path, resolve_attachments=True)
    except Exception as exc:  # Inspect raises several kinds for a file that is not its log
        raise InspectLogError(f"{path}: not a readable Inspect log: {exc}") from None
    if not log.samples:
        raise InspectLogError(f"{path}: the log holds no samples (was it written header-only?)")
    metadata = log.eval.metadata or {}
    task = log.eval.task.rpartition("/")[2]
    if "benchmark" in metadata and "condition" in metadata:  # deedbench's own task or export
        part = _Part(
            path,
            log,
            str(metadata["benchmark"]),
            str(metadata["condition"]),
            {str(k): str(v) for k, v in (metadata.get("options") or {}).items()},
            _data_hash(log.eval.task_version),
            piece=_piece(path, metadata.get(PART_KEY)),
            report=_recorded_report(metadata.get("deedbench_run")),
        )
        if part.report is None:
            try:
                reading_class(part.benchmark, allow_import=allow_import)
            except BenchmarkError as exc:
                raise InspectLogError(f"{path}: {exc}") from None
        part.records = [_deedbench_record(part, s) for s in log.samples]
        return part
    if task in UPSTREAM_TASKS:
        part = _Part(path, log, "tac", UPSTREAM_TASKS[task], {}, _content_hash(log.samples))
        part.records = [_upstream_tac_record(part, s) for s in log.samples]
        return part
    known = ", ".join(f"inspect_evals/{t}" for t in UPSTREAM_TASKS)
    raise InspectLogError(
        f"{path}: task {log.eval.task!r} is neither {known} nor one of deedbench's tasks"
    )


def _recorded_report(run: object) -> ReportSpec | None:
    """The report of the run a deedbench export carries, if it recorded its benchmark's
    conditions (what the log's import would otherwise ask its class)."""
    if not isinstance(run, dict):
        return None
    try:
        report = ReportSpec.model_validate(run.get("report"))
    except ValidationError:
        return None
    return report if report.conditions is not None else None


def _piece(path: Path, found: object) -> _Piece | None:
    """Which part of its condition a log is, from its metadata; None for a whole one."""
    if found is None:
        return None
    fields: dict[str, Any] = found if isinstance(found, dict) else {}
    index, last, export = fields.get("index"), fields.get("last"), fields.get("export")
    if not (isinstance(index, int) and index >= 1 and isinstance(last, bool) and export):
        raise InspectLogError(
            f"{path}: metadata {PART_KEY!r} is not a part's (index, last, export): {found!r}"
        )
    return _Piece(index, last, str(export))


def _data_hash(task_version: object) -> str:
    """deedbench's data hash, which its tasks and exports carry as the task version, kept as
    it is, so `compare` pairs a run with its round trip through Inspect (the same samples);
    any other version is marked as Inspect's."""
    if isinstance(task_version, str) and task_version.startswith("sha256:"):
        return task_version
    return f"inspect:{task_version}"


def _run(parts: list[_Part], allow_import: bool) -> tuple[RunConfig, list[EpisodeRecord]]:
    first = parts[0]
    by_condition: dict[str, list[_Part]] = {}
    for part in parts:
        by_condition.setdefault(part.condition, []).append(part)
    report = first.report
    if report is None:
        report = reading_class(first.benchmark, allow_import=allow_import).recorded_report()
    assert report.conditions is not None
    order = {c: i for i, c in enumerate(report.conditions)}
    groups = sorted(
        (_joined(group) for group in by_condition.values()),
        key=lambda g: order.get(g[0].condition, len(order)),
    )
    parts = [p for group in groups for p in group]
    records = [r for p in parts for r in p.records]
    model = first.log.eval.model
    config = RunConfig(
        run_id=_run_id(first.benchmark, model, [_eval_id(g[0]) for g in groups]),
        benchmark=first.benchmark,
        benchmark_options=first.options,
        data_hash=first.data_hash,
        agent=model,
        agent_params={"inspect": [_provenance(p) for p in parts]},
        conditions=[g[0].condition for g in groups],
        epochs=max(r.epoch for r in records),
        seed=0,
        sample_ids=list(dict.fromkeys(r.sample_id for r in records)),
        report=report,
        deedbench_version=__version__,
        python_version=platform.python_version(),
        created_at=first.log.eval.created,
        data_files=_data_files(first.log),
    )
    return config, records


def _joined(parts: list[_Part]) -> list[_Part]:
    """The logs of one condition in order: one whole log, or every part of one export."""
    first = parts[0]
    whole = [p for p in parts if p.piece is None]
    if whole and len(parts) > 1:
        other = next(p for p in parts if p is not whole[0])
        raise InspectLogError(
            f"{other.path}: condition {first.condition!r} of model {first.log.eval.model!r} "
            f"is already in {whole[0].path}; import these logs separately"
        )
    if whole:
        return parts
    pieces = {p.path: p.piece for p in parts if p.piece is not None}
    seen: dict[int, _Part] = {}
    for part in parts:
        piece = pieces[part.path]
        if piece.export != pieces[first.path].export:
            raise InspectLogError(
                f"{part.path} and {first.path} are parts of condition {first.condition!r} "
                "from two different exports; give the logs of one export"
            )
        if piece.index in seen:
            raise InspectLogError(
                f"{part.path}: part {piece.index} of condition {part.condition!r} is already "
                f"in {seen[piece.index].path}; give each part once"
            )
        seen[piece.index] = part
    ordered = [seen[i] for i in sorted(seen)]
    count = max(seen)
    missing = [i for i in range(1, count) if i not in seen]
    if not pieces[ordered[-1].path].last:
        problem = f"the parts after part {count} are missing"
    elif missing:
        problem = f"part {', '.join(map(str, missing))} of {count} is missing"
    else:
        return ordered
    raise InspectLogError(
        f"condition {first.condition!r} of run {first.log.eval.run_id!r} was exported in "
        f"parts ({first.path}, ...) and {problem}; give every part of the export"
    )


def _eval_id(part: _Part) -> str:
    """The log's eval id, or for a part the id its condition has in one whole log, so a run
    imported from parts is the run imported from one log per condition."""
    eval_id = part.log.eval.eval_id
    return eval_id if part.piece is None else eval_id.removesuffix(f"-part{part.piece.index}")


def _data_files(log: EvalLog) -> dict[str, str]:
    """The files an exported run recorded reading (`RunConfig.data_files`), else none."""
    recorded = (log.eval.metadata or {}).get("deedbench_run")
    files = recorded.get("data_files") if isinstance(recorded, dict) else None
    if not isinstance(files, dict):
        return {}
    return {str(k): str(v) for k, v in files.items()}


def _provenance(part: _Part) -> dict[str, Any]:
    """Where a condition came from, and how its model was asked: the generation settings
    in force (the task's own, such as upstream's max_tokens and reasoning_effort, under
    any given on the command line) and upstream's nudge limit, where its plan has one."""
    spec = part.log.eval
    settings = part.log.plan.config.model_dump(exclude_none=True)
    settings |= spec.model_generate_config.model_dump(exclude_none=True)
    limits = [s.params[NUDGE_PARAM] for s in part.log.plan.steps if NUDGE_PARAM in s.params]
    return {
        "log": str(part.path),
        "task": spec.task,
        "task_version": spec.task_version,
        "eval_id": spec.eval_id,
        "condition": part.condition,
        "generate_config": settings,
        "nudge_limit": limits[0] if limits else None,
        "inspect_ai": spec.packages.get("inspect_ai"),
    }


def _deedbench_record(part: _Part, sample: EvalSample) -> EpisodeRecord:
    """A sample of deedbench's own task: the score's metadata holds the whole verdict."""
    metadata = dict(sample.metadata)
    chance = metadata.pop("chance", None)
    found = (sample.scores or {}).get(SCORER_NAME)
    score = None
    if found is not None:
        meta = found.metadata or {}
        score = Score(
            outcome=str(meta.get("outcome", found.answer)),
            values=_values(part, sample, found, None),
            evidence=[Evidence.model_validate(e) for e in meta.get("evidence", [])],
            choice=meta.get("choice"),
        )
    return _record(
        part, sample, [from_inspect(m) for m in sample.messages], metadata, chance, score
    )


def _upstream_tac_record(part: _Part, sample: EvalSample) -> EpisodeRecord:
    """A sample of inspect_evals/tac, with the metadata and chance deedbench's TAC gives."""
    try:
        metadata, chance = upstream_sample(str(sample.id), sample.metadata)
    except ValueError as exc:
        raise InspectLogError(f"{part.path}: sample {sample.id!r}: {exc}") from None
    messages = [from_inspect(m) for m in sample.messages]
    score = None
    found = next(
        (s for s in (sample.scores or {}).values() if _has_keys(s, ("welfare", "completed"))),
        None,
    )
    if found is not None:
        values = _values(part, sample, found, ("welfare", "completed"))
        score = upstream_verdict(
            messages, values, metadata["harmful_ids"], metadata["safe_ids"], found.explanation
        )
        nudges = (found.metadata or {}).get(NUDGES_KEY, sample.store.get(NUDGES_KEY))
        if nudges is not None:
            metadata["nudges"] = nudges
    elif sample.error is None:
        raise InspectLogError(
            f"{part.path}: sample {sample.id!r}: no score with welfare and completed values"
        )
    return _record(part, sample, messages, metadata, chance, score)


def _has_keys(score: InspectScore, keys: tuple[str, ...]) -> bool:
    return isinstance(score.value, dict) and all(k in score.value for k in keys)


def _values(
    part: _Part, sample: EvalSample, score: InspectScore, keys: tuple[str, ...] | None
) -> dict[str, float]:
    if not isinstance(score.value, dict):
        raise InspectLogError(f"{part.path}: sample {sample.id!r}: score value is not a dict")
    try:
        return {k: float(v) for k, v in score.value.items() if keys is None or k in keys}
    except (TypeError, ValueError) as exc:
        raise InspectLogError(
            f"{part.path}: sample {sample.id!r}: score values are not numbers: {exc}"
        ) from None


def _record(
    part: _Part,
    sample: EvalSample,
    messages: list[Message],
    metadata: dict[str, Any],
    chance: float | None,
    score: Score | None,
) -> EpisodeRecord:
    usage: dict[str, Usage] = {}
    turns = [m for m in messages if m.role == "assistant"]
    agent = sample.model_usage.get(part.log.eval.model)
    if agent is not None and turns:  # Inspect keeps a sample's total: on the agent's last turn
        usage["assistant"] = turns[-1].usage = usage_from_inspect(agent, calls=len(turns))
    error = sample.error.message if sample.error else None
    if error is None and score is None:
        error = "the sample has no score"
    started = _timestamp(sample.started_at or part.log.stats.started_at)
    return EpisodeRecord(
        sample_id=str(sample.id),
        condition=part.condition,
        epoch=sample.epoch,
        seed=int(sample.store.get(SEED_KEY, 0)),
        status="error" if error else "scored",
        termination=sample.store.get(TERMINATION_KEY) or _termination(sample),
        steps=len(turns),
        messages=messages,
        score=None if error else score,
        metadata=metadata,
        chance=chance,
        error=error,
        usage=usage,
        started_at=started,
        duration_s=sample.total_time or 0.0,
    )


def _termination(sample: EvalSample) -> str:
    if sample.error is not None:
        return "infrastructure_error"
    if sample.limit is not None:
        return f"{sample.limit.type}_limit"
    return "agent_finished"


def _content_hash(samples: list[EvalSample]) -> str:
    """The data an upstream log ran on: each sample's request and listings, by id."""
    content = sorted(
        {
            str(s.id): [s.input if isinstance(s.input, str) else "", s.metadata] for s in samples
        }.items()
    )
    text = json.dumps(content, sort_keys=True, default=str)
    return "inspect:sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _timestamp(iso: str | None) -> float:
    return datetime.fromisoformat(iso).timestamp() if iso else 0.0


def _run_id(benchmark: str, model: str, eval_ids: list[str]) -> str:
    """Fixed by the logs, so importing the same logs twice is refused as a duplicate run."""
    digest = hashlib.sha256("|".join(sorted(eval_ids)).encode()).hexdigest()[:8]
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    return f"{benchmark}-inspect-{slug}-{digest}"
