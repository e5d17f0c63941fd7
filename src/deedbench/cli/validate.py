"""`deedbench validate` and `deedbench rescore`: check task data, replay τ-bench results."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from deedbench.cli.app import app, console, data_option, fail, task_options
from deedbench.engine.benchmark import BenchmarkError
from deedbench.engine.printable import safe


@app.command()
def validate(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `deedbench list`).")],
    data: Annotated[
        Path | None, typer.Option("--data", help="Data to check instead of the built-in set.")
    ] = None,
    split: Annotated[str | None, typer.Option(help="τ-bench data: which tasks file.")] = None,
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="τ-bench data: task indexes.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per task.")] = False,
) -> None:
    """Check a benchmark's tasks: gold actions, reachable goals, oracle and idle agents."""
    from deedbench.benchmarks import load_benchmark

    try:
        options = task_options(split, tasks)
        if data is not None:
            options[data_option(benchmark)] = str(data)
        checks = load_benchmark(benchmark, options).validate()
    except BenchmarkError as exc:
        raise fail(str(exc)) from None
    failed = [c for c in checks if c.problems]
    if as_json:
        for check in checks:
            sys.stdout.write(json.dumps(check.model_dump(mode="json")) + "\n")
    else:
        for check in failed:
            problems = safe("; ".join(check.problems))
            console.print(f"[red]{safe(check.task)}[/red]: {problems}", highlight=False)
        console.print(f"{len(checks) - len(failed)} of {len(checks)} tasks pass", highlight=False)
    if failed:
        raise typer.Exit(1)


@app.command()
def rescore(
    kind: Annotated[str, typer.Argument(help="The result format: taubench.")],
    file: Annotated[Path, typer.Argument(help="A τ-bench result file (JSON list of records).")],
    data: Annotated[
        list[Path],
        typer.Option(
            "--data",
            help="The τ-bench data folder; repeat it to take each file from the first folder "
            "that has it (e.g. older users, current flights).",
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Replay τ-bench results: its reward recomputed and checked, procedure verdicts added."""
    from deedbench.benchmarks.taubench.domains import domain_for
    from deedbench.benchmarks.taubench.rescore import rescore_file

    if kind != "taubench":
        raise fail(f"unknown result format {kind!r}. Valid formats: taubench")
    try:
        report = rescore_file(file, data, domain_for(data))
    except BenchmarkError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        return
    console.print(
        f"{report.records} records; τ-bench's recorded reward components reproduced for "
        f"{report.reproduced}; {report.passing} passing (reward 1), of which "
        f"{report.passing_with_violations} broke a procedure rule",
        highlight=False,
    )
    for rule, count in report.rules.items():
        console.print(f"  {safe(rule)}: {count} passing trajectories", highlight=False)
        quote = next(
            v
            for r in report.verdicts
            if r.recorded_reward == 1.0
            for v in r.violations
            if v.startswith(rule + ":")
        )
        console.print(f"    e.g. {safe(quote[:300])}", highlight=False)
    mismatched = [v for v in report.verdicts if not v.reproduced]
    for verdict in mismatched[:10]:
        console.print(
            f"  [red]not reproduced[/red]: task {safe(verdict.task_id)} trial {verdict.trial}: "
            f"recorded r_actions={verdict.recorded_r_actions} "
            f"r_outputs={verdict.recorded_r_outputs}, recomputed {verdict.r_actions} / "
            f"{verdict.r_outputs}",
            highlight=False,
        )
