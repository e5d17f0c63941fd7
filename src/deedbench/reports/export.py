"""Flat forms of a run for other tools: episodes as JSONL or CSV, a summary as CSV rows,
and the one way every report and export file is written.

JSONL keeps each record whole (transcript included); CSV has one row per episode with
the score values and metadata as columns, for spreadsheets and pandas. A summary's
CSV is long-form: one row per condition, grouping, group and metric.

Both redact registered secrets, and a CSV text cell that a spreadsheet would run as a
formula (starting with =, +, -, @, a tab or a carriage return) is written with a
leading apostrophe, which spreadsheets show as text; numbers are written as numbers.
Line breaks in a cell are written as newlines.

Files are written atomically (`atomic_path`, `atomic_write`): into a temporary file
beside the target, synced, then renamed over it, so a kill never leaves a truncated or
empty file.
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from deedbench.errors import OutputError
from deedbench.records import EpisodeRecord, RunConfig
from deedbench.reports.summary import RunSummary
from deedbench.secrets import redact, redact_bytes

__all__ = [
    "OutputError",
    "atomic_path",
    "atomic_write",
    "columns_of",
    "episode_row",
    "summary_rows",
    "write_csv",
    "write_jsonl",
    "write_jsonl_texts",
]


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path` for a writer to fill; when the block ends without
    error it is synced to disk and renamed to `path`, otherwise removed.

    OutputError, before anything is written, when `path`'s folder does not exist or
    `path` is a folder; OutputError also for a write that fails (disk full, no access).
    """
    folder = path.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {path}: the folder {folder} does not exist")
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder")
    try:
        handle, name = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    os.close(handle)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, 0o666 & ~_umask())  # as an ordinary new file, not mkstemp's 0600
        _sync(temporary)
        os.replace(temporary, path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        temporary.unlink(missing_ok=True)
    if os.name == "posix":
        _sync(folder)  # the rename itself survives a crash


@contextmanager
def atomic_write(path: Path, buffering: int = -1) -> Iterator[IO[str]]:
    """A text file (UTF-8, newlines as written) that appears at `path` whole or not at all;
    `buffering` as `open`'s (an export of gigabytes writes a megabyte at a time)."""
    with (
        atomic_path(path) as temporary,
        open(temporary, "w", encoding="utf-8", newline="", buffering=buffering) as out,
    ):
        yield out


def _sync(path: Path) -> None:
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def write_jsonl(config: RunConfig, records: Iterable[EpisodeRecord], out: IO[str]) -> int:
    """One JSON object per episode, each carrying its run id; returns the count."""
    count = 0
    for record in records:
        line = {"run_id": config.run_id, **record.redacted().model_dump(mode="json")}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_jsonl_texts(config: RunConfig, records: Iterable[bytes], out: IO[bytes]) -> int:
    """`write_jsonl` of records as the store keeps them (JSON objects as UTF-8 bytes,
    written as they are, compact, registered secrets redacted), one at a time: none is
    parsed or decoded, so a million records stream at the speed of the disk; returns the
    count."""
    head = ('{"run_id":' + json.dumps(config.run_id, ensure_ascii=False) + ",").encode()
    count = 0
    for text in records:
        body = text[1:].lstrip()
        out.write(redact_bytes(head + body if body != b"}" else head[:-1] + b"}") + b"\n")
        count += 1
    return count


def episode_row(config: RunConfig, record: EpisodeRecord) -> dict[str, Any]:
    """The flat row of one episode: keys, verdict, values, metadata, usage."""
    record = record.redacted()
    score = record.score
    row: dict[str, Any] = {
        "run_id": config.run_id,
        "benchmark": config.benchmark,
        "agent": config.agent,
        "sample_id": record.sample_id,
        "condition": record.condition,
        "epoch": record.epoch,
        "seed": record.seed,
        "status": record.status,
        "termination": record.termination,
        "outcome": score.outcome if score else "",
        "choice": (score.choice or "") if score else "",
        "chance": "" if record.chance is None else record.chance,
        "steps": record.steps,
        "duration_s": round(record.duration_s, 4),
        "error": record.error or "",
    }
    for name, value in sorted((score.values if score else {}).items()):
        row[f"value.{name}"] = value
    for name, value in sorted(record.metadata.items()):
        row[f"meta.{name}"] = value if isinstance(value, str | int | float) else json.dumps(value)
    for role, usage in sorted(record.usage.items()):
        row[f"{role}.input_tokens"] = usage.input_tokens
        row[f"{role}.output_tokens"] = usage.output_tokens
        row[f"{role}.calls"] = usage.calls
    return row


def summary_rows(summary: RunSummary) -> Iterator[dict[str, Any]]:
    """Every rate of the summary, one row per condition, grouping, group and metric."""
    for condition in summary.conditions:
        groups = [("overall", condition.overall)] + [
            (key, group) for key, items in condition.by.items() for group in items
        ]
        for grouping, group in groups:
            for metric, r in group.metrics.items():
                clustered = group.clustered.get(metric)
                primary = metric == summary.run.report.primary
                chance, by_cluster = group.chance, group.cluster_chance
                yield {
                    "run_id": summary.run.run_id,
                    "condition": condition.condition,
                    "grouping": grouping,
                    "group": group.group,
                    "metric": metric,
                    "k": r.k,
                    "n": r.n,
                    "value": r.value,
                    "wilson_low": r.ci_low,
                    "wilson_high": r.ci_high,
                    "cluster_low": clustered.ci_low if clustered else None,
                    "cluster_high": clustered.ci_high if clustered else None,
                    "clusters": clustered.clusters if clustered else None,
                    "chance": chance.chance if primary and chance else None,
                    "p_below_chance": chance.p_below if primary and chance else None,
                    "p_below_chance_clustered": (
                        by_cluster.p_below if primary and by_cluster else None
                    ),
                    "p_above_chance": chance.p_above if primary and chance else None,
                    "p_above_chance_clustered": (
                        by_cluster.p_above if primary and by_cluster else None
                    ),
                }


def write_csv(
    rows: Iterable[dict[str, Any]], out: IO[str], columns: Iterable[str] | None = None
) -> int:
    """Rows with a header of every column any row has (first-seen order); returns the count.

    Given `columns` (every key of the rows, e.g. from `columns_of` over a first pass), the
    rows stream through; without, they are held to find them."""
    if columns is None:
        rows = list(rows)
        columns = columns_of(rows)
    writer = csv.DictWriter(
        out, fieldnames=[_cell(c) for c in columns], restval="", lineterminator="\n"
    )
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow({_cell(k): _cell(v) for k, v in row.items()})
        count += 1
    return count


def columns_of(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Every key the rows have, in first-seen order."""
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)


def _cell(value: Any) -> Any:
    """A cell a spreadsheet shows as it is: text that would start a formula is quoted,
    and carriage returns become newlines (the csv module would leave them unquoted)."""
    if not isinstance(value, str):
        return value
    value = redact(value)
    if value.startswith(_FORMULA_STARTS):
        value = "'" + value
    return value.replace("\r\n", "\n").replace("\r", "\n")
