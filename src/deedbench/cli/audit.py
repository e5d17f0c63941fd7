"""`deedbench audit`: did the agent say it knew it was being tested?

Scans every scored transcript of a run for evaluation awareness and, with
``--judge``, asks a model deedbench's rubric about each; stores the results with
the run and prints them per condition. With ``--users``, audits the simulated user
instead: the faults the scorers found and, with ``--judge``, a model's reading of each
failed episode (stored too).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from deedbench.cli.app import (
    AllowImportOption,
    NoCacheOption,
    PricesOption,
    StoreOption,
    Tally,
    app,
    console,
    existing_store,
    fail,
    load_prices,
    open_store,
    progress_bar,
    require_run,
)
from deedbench.cli.roles import (
    JudgeApiKeyEnvOption,
    JudgeArgOption,
    JudgeBaseUrlOption,
    JudgeMaxTokensOption,
    OldApiKeyEnvOption,
    OldBaseUrlOption,
    deprecated_flag,
    judge_agent,
    judge_choice,
)
from deedbench.errors import RunAborted
from deedbench.printable import safe

if TYPE_CHECKING:
    from deedbench.agents import Providers
    from deedbench.agents.roles import ModelChoice
    from deedbench.audit import (
        AuditResult,
        AuditSummary,
        Hit,
        Judge,
        UserAudit,
        UserJudge,
        UserJudgment,
    )
    from deedbench.engine import Benchmark, RunStore
    from deedbench.records import EpisodeRecord, RunConfig, Usage
    from deedbench.reports.cost import PriceTable

__all__ = ["audit"]

_SHOWN_HITS = 5


@app.command()
def audit(
    run_ids: Annotated[
        list[str] | None,
        typer.Argument(help="The run to audit (with --users, one or more runs)."),
    ] = None,
    users: Annotated[
        bool,
        typer.Option(
            "--users",
            help="Audit the simulated user instead: how often it made faults, per user model "
            "over the runs given (service desks).",
        ),
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge", help="A model that judges each transcript too, e.g. openai/gpt-4o."
        ),
    ] = None,
    judge_base_url: JudgeBaseUrlOption = None,
    judge_api_key_env: JudgeApiKeyEnvOption = None,
    judge_temperature: Annotated[
        float | None, typer.Option(help="The judge's temperature (default: the provider's).")
    ] = None,
    judge_max_tokens: JudgeMaxTokensOption = None,
    judge_model_arg: JudgeArgOption = None,
    base_url: OldBaseUrlOption = None,
    api_key_env: OldApiKeyEnvOption = None,
    temperature: Annotated[
        float | None, typer.Option(help="Deprecated: --judge-temperature.", hidden=True)
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Judge calls in flight.")] = 16,
    no_cache: NoCacheOption = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print summaries and results as JSON.")
    ] = False,
    prices: PricesOption = None,
    allow_import: AllowImportOption = False,
    store: StoreOption = None,
) -> None:
    """Audit a run for evaluation awareness: a lexical scan, and an LLM judge with --judge;
    or, with --users, how faithful its simulated user was."""
    from deedbench.agents import Providers
    from deedbench.audit import save_audits, summarize_audits
    from deedbench.engine import EpisodeCache

    if not run_ids:
        raise fail("give a run id; list the store's runs with: deedbench runs")
    if temperature is not None:
        deprecated_flag("--temperature", "--judge-temperature")
    if not users and len(run_ids) != 1:
        raise fail(f"audit takes one run ({len(run_ids)} given); several only with --users")
    path = existing_store(store)
    price_table = load_prices(prices)
    with open_store(path) as runs:
        configs = [require_run(runs, run_id) for run_id in run_ids]
        cache = None  # the judge's answers, read and committed through this store
        if not no_cache and judge is not None:
            cache = EpisodeCache(lambda entry: runs.add_responses([entry]), runs.response)
        providers = Providers(cache, concurrency)
        choice = judge_choice(
            judge_base_url,
            judge_api_key_env,
            judge_temperature if judge_temperature is not None else temperature,
            judge_max_tokens,
            judge_model_arg,
            old_base_url=base_url,
            old_api_key_env=api_key_env,
        )
        settings = (choice, providers)
        if users:
            user_judge = None if judge is None else _resolve_user_judge(judge, *settings)
            _audit_users(
                runs, configs, user_judge, providers, concurrency, price_table, as_json,
                allow_import=allow_import,
            )  # fmt: skip
            return
        [config] = configs
        run_id = config.run_id
        records = list(runs.episodes(run_id))
        judge_impl = None
        if judge is not None:
            judge_impl = _resolve_judge(judge, *settings)
        try:
            results = _audit_with_progress(
                config, records, judge_impl, providers, concurrency, price_table, lines=not as_json
            )
        except RunAborted as exc:
            raise fail(f"{exc}\naudit stopped: nothing stored", code=1) from None
        save_audits(runs, run_id, results)
    summaries = summarize_audits(results)
    if as_json:
        payload = {
            "summaries": [s.model_dump(mode="json") for s in summaries],
            "results": [r.model_dump(mode="json") for r in results],
        }
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    _render(config, summaries, results, price_table)
    console.print(f"{len(results)} audits stored in {path}", highlight=False, markup=False)


def _audit_users(
    runs: RunStore,
    configs: list[RunConfig],
    judge: UserJudge | None,
    providers: Providers,
    concurrency: int,
    prices: PriceTable,
    as_json: bool,
    *,
    allow_import: bool = False,
) -> None:
    """The user audit of the runs, per user model (`audit.user_audit`); with a judge,
    each failed episode judged first and the verdicts stored with its run."""
    from deedbench.audit import user_audit

    judgments = []
    if judge is not None:
        judgments = _judge_users_with_progress(
            runs, configs, judge, providers, concurrency, prices, as_json, allow_import
        )
    judged = {(j.run_id, j.key): j for j in judgments} if judge is not None else None
    audits = user_audit(((c, runs.summaries(c.run_id)) for c in configs), judged)
    if as_json:
        payload = {
            "users": [a.model_dump(mode="json") for a in audits],
            "judgments": [j.model_dump(mode="json") for j in judgments],
        }
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return
    if not any(a.episodes for a in audits):
        raise fail(
            "these runs hold no attributed episodes: the user audit reads the faults a service "
            "desk's scorer finds (runs of retail, taubench-* and tau2-* since this version)"
        )
    _render_users(audits, judgments, judge, prices)
    if judge is not None:
        console.print(
            f"{len(judgments)} user judgments stored in {runs.path}", highlight=False, markup=False
        )


def _render_users(
    audits: list[UserAudit],
    judgments: list[UserJudgment],
    judge: UserJudge | None,
    prices: PriceTable,
) -> None:
    from deedbench.audit import USER_RUBRIC_VERSION
    from deedbench.reports.format import interval
    from deedbench.reports.tables import TablePrinter, new_table, say

    title = "Simulated users, most faithful first"
    if judge is not None:
        title += f" (mechanical checks and judge {judge.spec}, user rubric v{USER_RUBRIC_VERSION})"
    table = new_table(title)
    columns = ["user", "episodes", "with a user fault [Wilson 95%]", "failures put on it"]
    if judge is not None:
        columns += ["failures judged", "judge errors"]
    for column in columns:
        table.add_column(column, no_wrap=True, justify="left" if column == "user" else "right")
    for a in audits:
        row = [
            safe(a.user),
            str(a.episodes),
            interval(a.faulty),
            f"{a.user_failures} of {a.failures} (+{a.unclear_failures} unclear)",
        ]
        if judge is not None:
            row += [str(a.judged), str(a.judge_errors)]
        table.add_row(*row)
    TablePrinter(console, wide=True).print(table)
    for a in audits:
        kinds = ", ".join(f"{k} {v}" for k, v in a.kinds.items()) or "none"
        say(console, f"{safe(a.user)} faults (episodes): {safe(kinds)}", indent=2)
    if judge is None:
        return
    found = [(j, f) for j in judgments for f in j.faults]
    for j, fault in found[:_SHOWN_HITS]:
        console.print(
            f"judge: {fault.kind} in {j.sample_id} / {j.condition} / epoch {j.epoch}, "
            f'message {fault.message_index}: "{fault.excerpt}"',
            highlight=False,
            markup=False,
        )
    errors = [j.error for j in judgments if j.error]
    usages = [j.usage["judge"] for j in judgments if "judge" in j.usage]
    _print_judge_end(judge.spec, errors, usages, prices)


def _judge_users_with_progress(
    runs: RunStore,
    configs: list[RunConfig],
    judge: UserJudge,
    providers: Providers,
    concurrency: int,
    prices: PriceTable,
    as_json: bool,
    allow_import: bool = False,
) -> list[UserJudgment]:
    """Judge the runs' failed episodes, run by run, with a progress bar and running cost;
    each run's verdicts are stored as soon as it is done."""
    from deedbench.audit import failed, judge_users, save_user_judgments

    benchmarks = [_rebuilt(config, allow_import) for config in configs]
    total = sum(sum(map(failed, runs.summaries(c.run_id))) for c in configs)
    tally = Tally(total, noun="failed episodes judged", lines=not as_json)
    with progress_bar() as progress:
        task = progress.add_task("judging users", total=total, stats="")

        def advance(judgment: UserJudgment) -> None:
            usage = judgment.usage.get("judge")
            cost = _call_cost(judge.spec, usage, prices)
            tally.advance([usage] if usage else [], error=bool(judgment.error), cost=cost)
            progress.update(task, advance=1, stats=tally.stats())

        async def judge_then_close() -> list[UserJudgment]:
            judged: list[UserJudgment] = []
            try:
                for config, benchmark in zip(configs, benchmarks, strict=True):
                    found = await judge_users(
                        config.run_id,
                        runs.episodes(config.run_id),
                        benchmark.user_instruction,
                        judge,
                        concurrency,
                        on_result=advance,
                    )
                    save_user_judgments(runs, config.run_id, found)
                    judged += found
            finally:
                await providers.aclose()  # the judge holds connections
            return judged

        try:
            judgments = asyncio.run(judge_then_close())
        except RunAborted as exc:
            raise fail(f"{exc}\naudit stopped: runs judged before it are stored", code=1) from None
    tally.finish()
    return judgments


def _rebuilt(config: RunConfig, allow_import: bool = False) -> Benchmark[Any]:
    """The run's benchmark built again from its recorded name and options, on the data it
    ran on (the user's instructions are read from it); one that is code (python/, another
    package's) only with --allow-import, as every reader of a store."""
    from deedbench.benchmarks import reading_class
    from deedbench.errors import BenchmarkError

    try:
        cls = reading_class(config.benchmark, allow_import=allow_import)
        benchmark = cls(config.benchmark_options)
    except BenchmarkError as exc:
        raise fail(f"run {config.run_id!r}: its benchmark cannot be built here: {exc}") from None
    if benchmark.data_hash() != config.data_hash:
        raise fail(
            f"run {config.run_id!r} was made on other data than {config.benchmark} reads "
            "here (its data hash differs): judge it where its data is as it was"
        )
    return benchmark


def _resolve_judge(spec: str, choice: ModelChoice, providers: Providers) -> Judge:
    """The judge (`judge_agent`) with the spec and settings the audit records."""
    from deedbench.agents import is_model_spec
    from deedbench.audit import Judge

    agent, settings = judge_agent(spec, choice, providers, role="audit judge")
    return Judge(agent, spec, settings.model_dump() if is_model_spec(spec) else {})


def _resolve_user_judge(spec: str, choice: ModelChoice, providers: Providers) -> UserJudge:
    from deedbench.audit import UserJudge

    judge = _resolve_judge(spec, choice, providers)
    return UserJudge(judge.agent, judge.spec, judge.settings)


def _audit_with_progress(
    config: RunConfig,
    records: list[EpisodeRecord],
    judge: Judge | None,
    providers: Providers,
    concurrency: int,
    prices: PriceTable,
    *,
    lines: bool,
) -> list[AuditResult]:
    from deedbench.audit import audit_run

    total = sum(r.status == "scored" for r in records)
    tally = Tally(total, noun="transcripts judged", lines=lines and judge is not None)
    with progress_bar(enabled=judge is not None) as progress:
        task = progress.add_task("judging", total=total, stats="")

        def advance(result: AuditResult) -> None:
            usage = result.usage.get("judge")
            cost = _call_cost(judge.spec if judge else None, usage, prices)
            tally.advance([usage] if usage else [], error=bool(result.judge_error), cost=cost)
            progress.update(task, advance=1, stats=tally.stats())

        async def audit_then_close() -> list[AuditResult]:
            try:
                return await audit_run(config, records, judge, concurrency, on_result=advance)
            finally:
                await providers.aclose()  # the judge holds connections

        results = asyncio.run(audit_then_close())
    tally.finish()
    return results


def _render(
    config: RunConfig,
    summaries: list[AuditSummary],
    results: list[AuditResult],
    prices: PriceTable,
) -> None:
    """The audit's table (a row per condition: its rates with Wilson's interval, as the
    reports show them), the categories flagged in lines of their own, so that the table
    fits 80 columns, and quotes; every piece of data is shown as it is (never markup)."""
    from deedbench.audit import RUBRIC_VERSION, SCANNER_VERSION
    from deedbench.reports.format import interval
    from deedbench.reports.tables import new_table, print_table, say

    judge = next((s.judge_spec for s in summaries if s.judge_spec), None)
    method = f"scanner v{SCANNER_VERSION}"
    if judge:
        method += f" and judge {judge} (rubric v{RUBRIC_VERSION})"
    table = new_table(f"Eval-awareness audit of {config.run_id} ({config.agent}): {method}")
    table.add_column("condition", no_wrap=True)
    table.add_column("episodes", no_wrap=True, justify="right")
    table.add_column("scanner flagged [Wilson 95%]", no_wrap=True, justify="right")
    if judge:
        table.add_column("judged aware [Wilson 95%]", no_wrap=True, justify="right")
        table.add_column("judge errors", no_wrap=True, justify="right")
    for s in summaries:
        row = [s.condition, str(s.episodes), interval(s.flagged)]
        if judge:
            row += [interval(s.judged_aware) if s.judged_aware else "n/a", str(s.judge_errors)]
        table.add_row(*map(safe, row))
    print_table(console, table)
    for s in summaries:
        categories = ", ".join(f"{name} {count}" for name, count in s.categories.items())
        say(console, f"{s.condition} categories flagged: {categories or 'none'}", indent=2)
    if not summaries:
        console.print("no scored episodes to audit")
    _print_hits(results)
    aware = [(r, r.verdict) for r in results if r.verdict and r.verdict.verdict == "aware"]
    for result, verdict in aware[:_SHOWN_HITS]:
        quote = verdict.evidence[0]
        console.print(
            f"judge: aware ({verdict.confidence:.2f}) in {result.sample_id} / "
            f"{result.condition} / epoch {result.epoch}, message {quote.message_index}: "
            f'"{quote.text}"',
            highlight=False,
            markup=False,
        )
    errors = [r.judge_error for r in results if r.judge_error]
    usages = [r.usage["judge"] for r in results if "judge" in r.usage]
    _print_judge_end(judge, errors, usages, prices)


def _call_cost(spec: str | None, usage: Usage | None, prices: PriceTable) -> float | None:
    """What one judge call cost at the price table (None: no price for the model)."""
    from deedbench.reports.cost import call_costs

    if spec is None or usage is None:
        return 0.0
    [spent] = call_costs([("judge", spec, usage)], prices)
    return spent.cost_usd


def _print_judge_end(
    spec: str | None, errors: list[str], usages: list[Usage], prices: PriceTable
) -> None:
    """The judge's errors (how many, and the first), then its calls (paid and from
    cache), tokens and cost at the price table; nothing of a judge when none judged."""
    from deedbench.records import Usage
    from deedbench.reports.cost import call_costs

    if errors:
        console.print(
            f"judge errors ({len(errors)}), e.g.: {errors[0]}", highlight=False, markup=False
        )
    if spec is None:
        return

    usage = sum(usages, start=Usage())
    spent = [c.cost_usd for c in call_costs([("judge", spec, u) for u in usages], prices)]
    money = "unknown (no price for this model)"
    if spent and None not in spent:
        money = f"${sum(c for c in spent if c is not None):.4f}"
    console.print(
        f"judge calls: {usage.calls - usage.cache_hits} paid, {usage.cache_hits} from cache; "
        f"{usage.input_tokens:,} input and {usage.output_tokens:,} output tokens; "
        f"cost {money}",
        highlight=False,
    )


def _print_hits(results: list[AuditResult]) -> None:
    """The scanner's hits, one line per message (not per match), its matched words marked
    «so»; an excerpt's cut context shows as "..."."""
    messages: dict[tuple[str, str, int, int, str], list[Hit]] = {}
    for r in results:
        for hit in r.hits:
            key = (r.sample_id, r.condition, r.epoch, hit.message_index, hit.part)
            messages.setdefault(key, []).append(hit)
    if not messages:
        return
    hits = sum(len(h) for h in messages.values())
    shown = min(len(messages), _SHOWN_HITS)
    console.print(
        f"Scanner hits: {hits} in {len(messages)} messages ({shown} shown; --json has all)",
        highlight=False,
    )
    for (sample, condition, epoch, index, part), found in list(messages.items())[:shown]:
        categories = ", ".join(dict.fromkeys(h.category for h in found))
        words = {h.match.lower() for h in found}
        excerpts: list[str] = []
        for hit in found:  # an excerpt that already shows this match is not repeated
            if not any(hit.match.lower() in e.lower() for e in excerpts):
                excerpts.append(hit.excerpt.replace("…", "..."))
        marked = " | ".join(_marked(e, words) for e in excerpts)
        console.print(
            f"  {safe(sample)} / {safe(condition)} / epoch {epoch}, message {index} "
            f"({safe(part)}): {safe(categories)}: {marked}",
            highlight=False,
        )


def _marked(text: str, words: set[str]) -> str:
    """`text` as markup, each stretch that `words` match (overlaps merged) bold in «»."""
    lowered = text.lower()
    spans = sorted(
        (m.start(), m.end()) for word in words for m in re.finditer(re.escape(word), lowered)
    )
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    parts, last = [], 0
    for start, end in merged:
        parts += [safe(text[last:start]), f"[bold]«{safe(text[start:end])}»[/bold]"]
        last = end
    return "".join([*parts, safe(text[last:])])
