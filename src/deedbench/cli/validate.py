"""`deedbench validate` and `deedbench rescore`: check task data, replay τ-bench and τ² results."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deedbench.cli.app import (
    JudgeLenientOption,
    PricesOption,
    app,
    console,
    data_option,
    fail,
    load_prices,
    parse_pairs,
)
from deedbench.cli.roles import (
    JudgeApiKeyEnvOption,
    JudgeArgOption,
    JudgeBaseUrlOption,
    JudgeMaxTokensOption,
    JudgeTemperatureOption,
    OldApiKeyEnvOption,
    OldBaseUrlOption,
    judge_agent,
    judge_choice,
)
from deedbench.files import read_text
from deedbench.printable import safe

if TYPE_CHECKING:
    from deedbench.agents.roles import ModelChoice
    from deedbench.benchmarks.tau2.rescore import (
        Judged,
        Rescored,
        Tau2Rescorer,
        Tau2RescoreReport,
    )
    from deedbench.benchmarks.tau2.results import Tau2Results
    from deedbench.benchmarks.taubench.rescore import RescoreReport
    from deedbench.interop.tau2_import import ImportedRun
    from deedbench.records import AgentSettings

__all__ = ["RescoredFile", "rescore", "rescore_tau2", "validate"]


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
    exit_zero: Annotated[
        bool,
        typer.Option(
            "--exit-zero",
            help="Exit 0 even when tasks fail their checks (a script under `set -e` goes on); "
            "they are printed all the same.",
        ),
    ] = False,
) -> None:
    """Check a benchmark's tasks: gold actions, reachable goals, oracle and idle agents.
    Exits 1 when a task fails a check (some of τ-bench's and τ²'s own do), unless
    --exit-zero."""
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
    if failed and not exit_zero:
        raise typer.Exit(1)


_RESCORE_KINDS = ("taubench", "tau2")


@app.command()
def rescore(
    kind: Annotated[str, typer.Argument(help="The result format: taubench or tau2.")],
    file: Annotated[
        Path,
        typer.Argument(
            help="A τ-bench result file (JSON list of records), or a τ² result file (its "
            "JSON, or the folder of results.json and simulations/)."
        ),
    ],
    data: Annotated[
        list[Path] | None,
        typer.Option(
            "--data",
            help="τ-bench: a clone (root, tau_bench/envs/<domain>, its data/) or a converted "
            "folder, repeatable, each file from the first folder that has it (older users, "
            "current flights). τ²: a tau2-bench checkout, its data folder or the domain's "
            "(default $TAU2_DATA_DIR).",
        ),
    ] = None,
    fresh_tasks: Annotated[
        bool,
        typer.Option(
            "--fresh-tasks",
            help="τ²: score on the data's current tasks of the same ids, not the file's "
            "(as tau2 evaluate-trajs --fresh-tasks).",
        ),
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="τ²: a model judging the NL assertions the file records no verdicts for "
            "(any model spec, at temperature 0; τ²'s own is openai/gpt-4.1-2025-04-14).",
        ),
    ] = None,
    judge_base_url: JudgeBaseUrlOption = None,
    judge_api_key_env: JudgeApiKeyEnvOption = None,
    judge_temperature: JudgeTemperatureOption = None,
    judge_max_tokens: JudgeMaxTokensOption = None,
    judge_model_arg: JudgeArgOption = None,
    judge_lenient: JudgeLenientOption = False,
    base_url: OldBaseUrlOption = None,
    api_key_env: OldApiKeyEnvOption = None,
    prices: PricesOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full report as JSON.")] = False,
) -> None:
    """Replay τ-bench's or τ²'s own results: their reward recomputed and checked against
    the file's, procedure verdicts added."""
    if kind not in _RESCORE_KINDS:
        raise fail(f"unknown result format {kind!r}. Valid formats: {', '.join(_RESCORE_KINDS)}")
    if kind == "tau2":
        if data is not None and len(data) > 1:
            raise fail("rescore tau2 takes one --data folder")
        report = rescore_tau2(
            file,
            data[0] if data else None,
            fresh_tasks=fresh_tasks,
            judge=judge,
            choice=judge_choice(
                judge_base_url,
                judge_api_key_env,
                judge_temperature,
                judge_max_tokens,
                judge_model_arg,
                old_base_url=base_url,
                old_api_key_env=api_key_env,
            ),
            prices=prices,
            progress=not as_json,
            judge_reading="lenient" if judge_lenient else "strict",
        )
        if as_json:
            sys.stdout.write(report.report.model_dump_json(indent=2) + "\n")
        return
    given = [
        name
        for name, on in (
            ("--fresh-tasks", fresh_tasks),
            ("--judge", judge),
            ("--judge-lenient", judge_lenient),
        )
        if on
    ]
    if given:
        raise fail(f"{' and '.join(given)}: τ² only (rescore tau2)")
    if not data:
        raise fail("rescore taubench needs --data: τ-bench's data (a clone or a converted folder)")
    from deedbench.benchmarks.taubench.layout import tables_folder
    from deedbench.benchmarks.taubench.rescore import domain_for, rescore_file

    hint = _text_of(file)
    folders = [tables_folder(folder, hint) for folder in data]  # BenchmarkError: exit 2
    found = rescore_file(file, folders, domain_for(folders))
    if as_json:
        sys.stdout.write(found.model_dump_json(indent=2) + "\n")
        return
    _print_rescore(found)


def rescore_tau2(
    file: Path,
    data: Path | None,
    *,
    fresh_tasks: bool,
    judge: str | None,
    choice: ModelChoice,
    prices: Path | None,
    progress: bool,
    run_id: str | None = None,
    same_data: bool = False,
    judge_reading: str = "strict",
) -> RescoredFile:
    """A τ² result file rescored and made the run it imports as (`import_results`: the
    one computation of its figures, for `rescore` and `import` alike), printed with
    `progress`; the judge, if one is given, asked first about what the file records no
    verdicts for, its replies read `judge_reading` (`judge.JUDGE_READINGS`)."""
    from deedbench.benchmarks.tau2.rescore import Tau2Rescorer, rescore_with
    from deedbench.benchmarks.tau2.results import read_results
    from deedbench.interop.tau2_import import import_results

    results = read_results(file)  # BenchmarkError: exit 2
    rescorer = Tau2Rescorer(results, data, fresh_tasks=fresh_tasks)
    judged = judge_settings = None
    if judge is not None:
        judged, judge_settings = asyncio.run(_judged(rescorer, judge, choice, judge_reading))
    elif not choice.is_empty():
        raise fail("--judge-* and -J set the judge's model, but no --judge is given")
    report, rescored = rescore_with(rescorer, judged)
    imported = import_results(
        results,
        rescorer,
        rescored,
        report,
        file,
        run_id,
        judge=judge,
        judge_settings=judge_settings,
        prices=load_prices(prices),
        same_data=same_data,
    )
    if progress:
        _print_tau2_rescore(imported.report)
        if judged is not None:
            _print_judge_cost(judge or "", judged, prices)
    return RescoredFile(results, rescorer, imported.report, rescored, imported)


@dataclass
class RescoredFile:
    """A τ² result file, what rescored it, what it found, and the run it imports as."""

    results: Tau2Results
    rescorer: Tau2Rescorer
    report: Tau2RescoreReport
    rescored: list[Rescored]
    imported: ImportedRun


async def _judged(
    rescorer: Tau2Rescorer, spec: str, choice: ModelChoice, reading: str
) -> tuple[Judged, AgentSettings]:
    from deedbench.agents import Providers
    from deedbench.benchmarks.tau2.rescore import judge_simulations

    providers = Providers()
    try:
        model, settings = judge_agent(spec, choice, providers)
        return await judge_simulations(rescorer, model, reading=reading), settings
    finally:
        await providers.aclose()


def _print_judge_cost(spec: str, judged: Judged, prices: Path | None) -> None:
    from deedbench.reports.cost import call_costs

    spent = call_costs([("judge", spec, usage) for usage in judged.usage], load_prices(prices))
    known = [c.cost_usd for c in spent if c.cost_usd is not None]
    cost = f"${sum(known):.4f}" if len(known) == len(spent) else "no price for this model"
    tokens = sum(u.input_tokens + u.output_tokens for u in judged.usage)
    console.print(
        f"judge {safe(spec)} ({judged.reading} reading): {len(judged.verdicts)} simulations "
        f"judged, {len(judged.failures)} failed (infrastructure errors, in no rate); "
        f"{tokens} tokens, {cost}",
        highlight=False,
    )


def _print_tau2_rescore(report: Tau2RescoreReport) -> None:
    """The counts, what differs and where, pass^k both ways, then the procedure."""

    def shown(text: str) -> None:
        console.print(text, highlight=False)

    tasks = "the file's tasks" if report.tasks_from == "file" else "the data's current tasks"
    shown(
        f"{report.simulations} simulations of τ² {safe(report.domain)} ({report.benchmark}), "
        f"scored on {tasks}: {report.rescored} rescored, {report.needs_judge} need a judge, "
        f"{report.infrastructure_errors} infrastructure errors (in no metric, as in τ²), "
        f"{report.not_rescored} not rescored"
    )
    if report.tasks_kept_from_file:
        shown(
            f"  tasks the data lacks, kept from the file: {', '.join(report.tasks_kept_from_file)}"
        )
    for note in report.notes:
        shown(f"note: {safe(note)}")
    shown(
        f"reproduced (the reward and every component equal the file's reward_info): "
        f"{report.reproduced} of {report.rescored}"
    )
    if report.nl_from_file or report.nl_from_judge:
        shown(
            f"NL assertions: verdicts from the file for {report.nl_from_file}, from the judge "
            f"for {report.nl_from_judge} (the file's own verdicts are taken as they are)"
        )
    if report.replayed_with_differences:
        shown(
            f"note: {report.replayed_with_differences} simulations recorded tool outputs the "
            "tools now give differently; replayed leniently, as τ² re-grades old files "
            "(strict_replay=False)"
        )
    for verdict in report.differing[:20]:
        shown(
            f"  [red]differs[/red]: {safe(verdict.id)} (task {safe(verdict.task_id)}, trial "
            f"{verdict.trial}): {', '.join(verdict.differs)}; recorded reward "
            f"{verdict.recorded_reward}, recomputed {verdict.reward}"
        )
    if len(report.differing) > 20:
        shown(f"  ... and {len(report.differing) - 20} more (--json lists every simulation)")
    for verdict in report.verdicts:
        if verdict.status in ("needs_judge", "not_rescored"):
            why = f": {safe(verdict.error)}" if verdict.error else ""
            shown(f"  {verdict.status}: {safe(verdict.id)} (task {safe(verdict.task_id)}){why}")
    shown(
        f"pass^k as τ²'s leaderboard computes it ({report.num_trials} trials per task): "
        f"recomputed {_ks(report.pass_hat_k)}; the file's rewards {_ks(report.recorded_pass_hat_k)}"
    )
    shown(
        f"{report.passing} passing (recorded reward 1), of which "
        f"{report.passing_with_violations} broke a procedure rule"
    )
    for rule, count in report.rules.items():
        shown(f"  {safe(rule)}: {count} passing simulations")
    from deedbench.reports.format import counts_text, curve_text

    shown("as `deedbench report` gives them once imported (the same computation):")
    shown(f"  pass^k of reward: {curve_text(report.run_pass_hat_k)}")
    failed = sum(report.failures.values())
    shown(f"  whose failure ({failed} not passing): {counts_text(report.failures)}")
    blamed = {k: v for k, v in report.fault_kinds.items() if not k.startswith("agent.")}
    if blamed:
        shown(f"  user and task faults (episodes): {counts_text(blamed)}")


def _print_attribution(
    shown: Callable[[str], None], failures: dict[str, int], kinds: dict[str, int], failed: str
) -> None:
    """Whose failure each failed episode was, and the faults found in them."""
    total = sum(failures.values())
    if not total:
        return
    split = ", ".join(f"{party} {count}" for party, count in failures.items())
    shown(f"{total} failed ({failed}), whose failure: {split}")
    for kind, count in kinds.items():
        shown(f"  {safe(kind)}: in {count} failed")


def _ks(values: dict[int, float]) -> str:
    if not values:
        return "none"
    return ", ".join(f"pass^{k} {100 * v:.1f}%" for k, v in values.items())


def _text_of(file: Path) -> str:
    """The first record's system prompt, where a clone's domain is told by its policy;
    unreadable, the rescore itself says why."""
    try:
        records = json.loads(read_text(file))
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
    _print_attribution(shown, report.failures, report.fault_kinds, "reward 0")
