"""Flat forms of a run for other tools: episodes as JSONL or CSV, a summary as CSV rows.

JSONL keeps each record whole (transcript included); CSV has one row per episode with
the score values and metadata as columns, for spreadsheets and pandas. A summary's
CSV is long-form: one row per condition, grouping, group and metric.

Both redact registered secrets, and a CSV text cell that a spreadsheet would run as a
formula (starting with =, +, -, @, a tab or a carriage return) is written with a
leading apostrophe, which spreadsheets show as text; numbers are written as numbers.
Line breaks in a cell are written as newlines.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from deedbench.engine import EpisodeRecord, RunConfig, redact
from deedbench.reports.summary import RunSummary

__all__ = ["episode_row", "summary_rows", "write_csv", "write_jsonl"]

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def write_jsonl(config: RunConfig, records: Iterable[EpisodeRecord], out: IO[str]) -> int:
    """One JSON object per episode, each carrying its run id; returns the count."""
    count = 0
    for record in records:
        line = {"run_id": config.run_id, **record.redacted().model_dump(mode="json")}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
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
                }


def write_csv(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """Rows with a header of every column any row has (first-seen order); returns the count."""
    rows = list(rows)
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    writer = csv.DictWriter(
        out, fieldnames=[_cell(c) for c in columns], restval="", lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows({_cell(k): _cell(v) for k, v in row.items()} for row in rows)
    return len(rows)


def _cell(value: Any) -> Any:
    """A cell a spreadsheet shows as it is: text that would start a formula is quoted,
    and carriage returns become newlines (the csv module would leave them unquoted)."""
    if not isinstance(value, str):
        return value
    value = redact(value)
    if value.startswith(_FORMULA_STARTS):
        value = "'" + value
    return value.replace("\r\n", "\n").replace("\r", "\n")
