"""`deedbench validate` and `deedbench rescore`: check task data, replay τ-bench results."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deedbench.cli.app import app, console, data_option, fail, parse_pairs
from deedbench.printable import safe

if TYPE_CHECKING:
    from deedbench.benchmarks.taubench.rescore import RescoreReport

__all__ = ["rescore", "validate"]


@app.command()
def validate(
    benchmark: Annotated[str, typer.Argument(help="Benchmark name (see `deedbench list`).")],
    data: Annotated[
        Path | None, typer.Option("--data", help="Data to check instead of the built-in set.")
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("-T", help="Benchmark option KEY=VALUE (repeatable).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per task.")] = False,
) -> None:
    """Check a benchmark's tasks: gold actions, reachable goals, oracle and idle agents."""
    from deedbench.benchmarks import load_benchmark

    options = parse_pairs(option or [], "-T")
    if data is not None:
        options[data_option(benchmark)] = str(data)
    checks = load_benchmark(benchmark, options).validate()  # BenchmarkError: exit 2
    failed = [c for c in checks if c.problems]
    if as_json:
        for check in checks:
            sys.stdout.write(json.dumps(check.model_dump(mode="json")) + "\n")
    else:
        for check in failed:
            problems = safe("; ".join(check.problems))
            console.print(f"[red]{safe(check.task)}[/red]: {problems}", highlight=False)
        noted = [c for c in checks if c.notes and not c.problems]
        for check in noted:
            notes = safe("; ".join(check.notes))
            console.print(f"[yellow]{safe(check.task)}[/yellow]: {notes}", highlight=False)
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
            help="The τ-bench data: a clone (root, tau_bench/envs/<domain>, its data/) or a "
            "converted folder; repeat it to take each file from the first folder that has it "
            "(e.g. older users, current flights).",
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Replay τ-bench results: its reward recomputed and checked, procedure verdicts added."""
    from deedbench.benchmarks.taubench.layout import tables_folder
    from deedbench.benchmarks.taubench.rescore import domain_for, rescore_file

    if kind != "taubench":
        raise fail(f"unknown result format {kind!r}. Valid formats: taubench")
    hint = _text_of(file)
    data = [tables_folder(folder, hint) for folder in data]  # BenchmarkError: exit 2
    report = rescore_file(file, data, domain_for(data))
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
        return
    _print_rescore(report)


def _text_of(file: Path) -> str:
    """The first record's system prompt, where a clone's domain is told by its policy;
    unreadable, the rescore itself says why."""
    try:
        records = json.loads(file.read_text(encoding="utf-8"))
        first = records[0]["traj"][0]
        return str(first["content"]) if first.get("role") == "system" else ""
    except (OSError, ValueError, RecursionError, LookupError, TypeError, AttributeError):
        return ""


def _print_rescore(report: RescoreReport) -> None:
    """The counts, what differs and why, then the procedure verdicts on passing runs."""

    def shown(text: str) -> None:
        console.print(text, highlight=False)

    shown(
        f"{report.records} records: {report.rescored} rescored, {report.crashed} crashed "
        f"(τ-bench's run failed, no trajectory), {report.malformed} unreadable"
    )
    shown(
        f"reproduced (recomputed reward and every recorded component equal the record): "
        f"{report.reproduced} of {report.rescored}; {report.never_ended} never ended "
        "(no stop, no transfer: reward 0)"
    )
    shown(
        f"recorded tool outputs given again by the replay: "
        f"{report.observations - report.observations_differ} of {report.observations}"
    )
    regime = report.regime()
    if regime is not None:
        shown(f"note: {regime}")
    for verdict in report.differing[:20]:
        older = " (the older rule explains it)" if verdict.explained_by_older_rule else ""
        shown(
            f"  [red]differs[/red]: record {verdict.index} (task {verdict.task_id} trial "
            f"{verdict.trial}): {', '.join(verdict.differs)}: recorded reward "
            f"{verdict.recorded_reward}, r_actions {verdict.recorded_r_actions}, r_outputs "
            f"{verdict.recorded_r_outputs}; recomputed {verdict.reward_tau}, "
            f"{verdict.r_actions}, {verdict.r_outputs}{older}"
        )
    if len(report.differing) > 20:
        shown(f"  ... and {len(report.differing) - 20} more (--json lists every record)")
    for verdict in report.verdicts:
        if verdict.status != "rescored":
            shown(f"  {verdict.status}: record {verdict.index}: {safe(verdict.error or '')}")
    shown(
        f"{report.passing} passing (recorded reward 1), of which "
        f"{report.passing_with_violations} broke a procedure rule"
    )
    for rule, count in report.rules.items():
        shown(f"  {safe(rule)}: {count} passing trajectories")
        quote = next(
            v
            for r in report.verdicts
            if r.recorded_reward == 1.0
            for v in r.violations
            if v.startswith(rule + ":")
        )
        shown(f"    e.g. {safe(quote[:300])}")
