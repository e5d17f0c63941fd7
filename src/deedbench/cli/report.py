"""Reading runs back: `report`, `compare`, `show` and `export`. They read only the store."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from functools import partial
from itertools import islice
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from deedbench.cli.app import (
    AllowImportOption,
    PricesOption,
    QuietOption,
    StoreOption,
    agent_purpose,
    app,
    console,
    existing_store,
    fail,
    load_prices,
    open_store,
    require_run,
    terminal_safe,
    warn,
)
from deedbench.cli.runs import WideOption

if TYPE_CHECKING:
    from deedbench.audit import AuditResult
    from deedbench.engine import RunStore
    from deedbench.interop.tau2_export import SubmissionDetails
    from deedbench.records import EpisodeKey, EpisodeRecord, RunConfig
    from deedbench.reports.summary import Covariate, RunSummary, RunTally

__all__ = [
    "HTML_TRANSCRIPTS",
    "Loaded",
    "RunsArgument",
    "compare",
    "export",
    "html_transcripts",
    "report",
    "show",
]

Loaded = tuple["RunConfig", "RunTally", list["AuditResult"]]
RunsArgument = Annotated[list[str], typer.Argument(help="Run ids (see deedbench runs).")]
# The HTML report embeds at most this many transcripts per run (the first epochs in full);
# `deedbench view` reads every one from the store.
HTML_TRANSCRIPTS = 1_000


def _load(store: Path | None, run_ids: list[str]) -> list[Loaded]:
    """Each run's configuration, figures (the kinds of its episodes and two integers per
    episode, as the store keeps them: no record read) and audits, or a clear error naming
    what is missing."""
    from deedbench.audit import load_audits
    from deedbench.reports.summary import RunTally

    loaded = []
    with open_store(existing_store(store), reading=True) as runs:
        for run_id in run_ids:
            config = require_run(runs, run_id)
            tally = RunTally.stored(config, runs)
            loaded.append((config, tally, load_audits(runs, run_id)))
    return loaded


def _check_covariate(path: Path | None, column: str | None) -> None:
    if path is None and column is not None:
        raise fail("--covariate-column needs --covariate FILE")
    if path is not None and column is None:
        raise fail("--covariate needs --covariate-column NAME (the numbers to correlate)")


def _covariate(path: Path | None, column: str | None, key: str) -> Covariate | None:
    """The covariate file read with `key` naming clusters (the run's report says which
    column, unless --covariate-key does)."""
    from deedbench.reports.summary import Covariate
    from deedbench.stats import read_covariate_csv

    if path is None or column is None:
        return None
    try:
        values = read_covariate_csv(path, key, column)
    except (OSError, ValueError) as exc:
        raise fail(str(exc)) from None
    except csv.Error as exc:  # a NUL byte, a field over the csv module's size limit
        raise fail(f"{path}: not a CSV file: {exc}") from None
    return Covariate(name=column, values=values)


@app.command()
def report(
    run_ids: Annotated[
        list[str] | None, typer.Argument(help="Run ids (list them with: deedbench runs).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    as_csv: Annotated[
        bool, typer.Option("--csv", help="Print every rate as CSV: one row per group and metric.")
    ] = False,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write a self-contained HTML report (charts, transcripts; at most "
            f"{HTML_TRANSCRIPTS:,} transcripts per run, the first epochs: deedbench view "
            "reads them all).",
        ),
    ] = None,
    covariate: Annotated[
        Path | None,
        typer.Option(
            "--covariate",
            help="CSV of a per-cluster covariate (e.g. salience per scenario) to correlate with "
            "the primary rate (Spearman).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    covariate_column: Annotated[
        str | None, typer.Option(help="The covariate file's column of numbers.")
    ] = None,
    covariate_key: Annotated[
        str | None,
        typer.Option(
            help="The covariate file's column naming clusters (default: the benchmark's, "
            "e.g. scenario)."
        ),
    ] = None,
    prices: PricesOption = None,
    quiet: QuietOption = False,
    wide: WideOption = False,
    store: StoreOption = None,
) -> None:
    """Show runs' rates: overall and by each grouping, with intervals, chance and contrasts."""
    from deedbench.engine.run_locks import executing
    from deedbench.reports import render_summary
    from deedbench.reports.export import summary_rows, write_csv

    if not run_ids:
        where = "" if store is None else f" --store {store}"
        raise fail(f"give one or more run ids; list the store's runs with: deedbench runs{where}")
    if as_json and as_csv:
        raise fail("choose one of --json and --csv")
    _check_covariate(covariate, covariate_column)
    table = load_prices(prices)
    loaded = _load(store, run_ids)
    summaries = [
        tally.summary(
            table,
            _covariate(
                covariate, covariate_column, covariate_key or config.report.covariate_column()
            ),
            audits,
        )
        for config, tally, audits in loaded
    ]
    if html is not None:
        _write_html(html, summaries, loaded, store)
    if as_json:
        body = summaries[0] if len(summaries) == 1 else summaries
        sys.stdout.write(_json(body) + "\n")
    elif as_csv:
        write_csv((row for s in summaries for row in summary_rows(s)), sys.stdout)
    elif html is None:
        with open_store(existing_store(store), reading=True) as runs:
            live = executing(runs)
        where = "" if store is None else f" --store {store}"
        for summary in summaries:
            run_id = summary.run.run_id
            render_summary(
                summary,
                console,
                quiet=quiet,
                purpose=agent_purpose(summary.run),
                wide=wide,
                executor=live.get(run_id),
                command=f"deedbench report {run_id}{where}",
            )


def _json(value: object) -> str:
    from pydantic import RootModel

    return RootModel[object](value).model_dump_json(indent=2)


def _write_html(
    path: Path, summaries: list[RunSummary], loaded: list[Loaded], store: Path | None
) -> None:
    from deedbench.reports.export import atomic_write
    from deedbench.reports.html import render_html

    with open_store(existing_store(store), reading=True) as runs:
        records = {config.run_id: html_transcripts(runs, config) for config, _, _ in loaded}
    page = render_html(
        summaries,
        records,
        audits={config.run_id: audited for config, _, audited in loaded},
        episodes={config.run_id: tally for config, tally, _ in loaded},
    )
    with atomic_write(path) as out:  # OutputError: exit 2, naming the file
        out.write(page)
    console.print(f"wrote {path}", highlight=False, markup=False)


def html_transcripts(runs: RunStore, config: RunConfig) -> list[EpisodeRecord]:
    """The episodes an HTML report embeds: at most `HTML_TRANSCRIPTS` of the run's stored
    ones, whole, in the order the run plans them (epoch, condition, sample), so complete
    first epochs, each record read alone; the keys stored are read an epoch at a time,
    until there are enough (never the keys of a whole run at once)."""
    from deedbench.records import EpisodeKey

    def stored() -> Iterator[EpisodeKey]:
        for epoch in range(1, config.epochs + 1):
            found = runs.stored_in_epoch(config.run_id, epoch)
            for condition in config.conditions:
                for sample_id in config.sample_ids:
                    if (sample_id, condition) in found:
                        yield EpisodeKey(sample_id, condition, epoch)

    return list(runs.records(config.run_id, islice(stored(), HTML_TRANSCRIPTS)))


@app.command()
def compare(
    run_ids: RunsArgument,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    prices: PricesOption = None,
    quiet: QuietOption = False,
    wide: WideOption = False,
    store: StoreOption = None,
) -> None:
    """Runs side by side (agent x condition), with paired tests between conditions and runs."""
    from deedbench.reports.compare import compare_runs
    from deedbench.reports.terminal import legend, render_comparison

    loaded = _load(store, run_ids)
    table = load_prices(prices)
    summaries = [tally.summary(table, audits=audits) for _, tally, audits in loaded]
    try:
        comparison = compare_runs(summaries, {c.run_id: t for c, t, _ in loaded})
    except ValueError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(comparison.model_dump_json(indent=2) + "\n")
    else:
        where = "" if store is None else f" --store {store}"
        command = f"deedbench compare {' '.join(run_ids)}{where}"
        lines = [] if quiet else legend(summaries[0])
        render_comparison(comparison, console, wide=wide, command=command, legend=lines)


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="The run.")],
    sample: Annotated[str, typer.Argument(help="The sample id (e.g. seville_bullfight_base).")],
    epoch: Annotated[int, typer.Option(min=1, help="Which epoch.")] = 1,
    condition: Annotated[
        str | None, typer.Option(help="Which condition (default: the run's first).")
    ] = None,
    full: Annotated[
        bool,
        typer.Option("--full", help="Do not shorten tool outputs or a long system prompt."),
    ] = False,
    store: StoreOption = None,
) -> None:
    """One transcript: messages, tool calls, and the evidence its score rests on."""
    from deedbench.reports.transcript import render_episode

    with open_store(existing_store(store), reading=True) as runs:  # one episode read, not the run
        config = require_run(runs, run_id)
        chosen = condition or config.conditions[0]
        record = runs.episode(run_id, sample, chosen, epoch)
    if record is not None:
        render_episode(record, console, full_tools=full, full_system=full)
        return
    if sample not in config.sample_ids:
        close = [s for s in config.sample_ids if sample in s][:10] or config.sample_ids[:10]
        raise fail(f"run {run_id!r} has no sample {sample!r}. Samples include: {', '.join(close)}")
    if chosen not in config.conditions:
        raise fail(f"unknown condition {chosen!r}. Valid: {', '.join(config.conditions)}")
    raise fail(
        f"no stored episode {sample} / {chosen} / epoch {epoch} in run {run_id!r} "
        f"(the run has {config.epochs} epochs; unfinished episodes are not stored)"
    )


@app.command()
def export(
    run_ids: Annotated[
        list[str] | None,
        typer.Argument(help="The run (tau2-submission: one run per τ² domain)."),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", help="jsonl, csv, inspect, tau2-submission")
    ] = "jsonl",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="File to write (default: stdout); for inspect, the log folder (default: "
            "logs); for tau2-submission, the submission folder (new or empty).",
        ),
    ] = None,
    model_name: Annotated[
        str | None,
        typer.Option(help="tau2-submission: the model's name (default: the agent's model)."),
    ] = None,
    model_org: Annotated[
        str | None,
        typer.Option(
            help="tau2-submission: who made the model (default for openai/ and anthropic/ "
            "agents: OpenAI, Anthropic; required otherwise)."
        ),
    ] = None,
    submitting_org: Annotated[
        str | None,
        typer.Option(help="tau2-submission: who ran it (default: --model-org)."),
    ] = None,
    contact_email: Annotated[
        str | None, typer.Option(help="tau2-submission: the contact's email.")
    ] = None,
    contact_name: Annotated[
        str | None, typer.Option(help="tau2-submission: the contact's name.")
    ] = None,
    own_wording: Annotated[
        bool,
        typer.Option(
            "--own-wording",
            help="tau2-submission: export runs whose models were shown deedbench's own "
            "wording of τ²'s tool descriptions and prompts (no τ² source was found), saying "
            "so in the methodology's notes; without it they are refused.",
        ),
    ] = False,
    prices: PricesOption = None,
    allow_import: AllowImportOption = False,
    store: StoreOption = None,
) -> None:
    """Write a run's episodes: JSONL (whole records), CSV (a row per episode), or Inspect
    `.eval` logs (one per condition) that `inspect view` serves; or runs of τ²'s domains
    as a submission to τ²-bench's leaderboard (tau2-submission)."""
    from deedbench.reports.export import (
        atomic_path,
        atomic_write,
        columns_of,
        episode_row,
        write_csv,
        write_jsonl,
        write_jsonl_texts,
    )

    formats = ("jsonl", "csv", "inspect", "tau2-submission")
    if format not in formats:
        raise fail(f"unknown format {format!r}. Valid formats: {', '.join(formats)}")
    if not run_ids:
        where = "" if store is None else f" --store {store}"
        raise fail(f"give a run id; list the store's runs with: deedbench runs{where}")
    flags = {
        "--model-name": model_name,
        "--model-org": model_org,
        "--submitting-org": submitting_org,
        "--contact-email": contact_email,
        "--contact-name": contact_name,
        "--prices": prices,
    }
    if format == "tau2-submission":
        from deedbench.interop.tau2_export import SubmissionDetails

        details = SubmissionDetails(
            model_name=model_name,
            model_org=model_org,
            submitting_org=submitting_org,
            contact_email=contact_email,
            contact_name=contact_name,
        )
        _export_tau2(run_ids, output, store, details, prices, own_wording)
        return
    given = [flag for flag, value in flags.items() if value is not None]
    given += ["--own-wording"] if own_wording else []
    if given:
        raise fail(f"{', '.join(given)}: only for --format tau2-submission")
    if len(run_ids) != 1:
        raise fail(
            f"--format {format} writes one run; {len(run_ids)} given (only tau2-submission "
            "takes several)"
        )
    run_id = run_ids[0]
    with open_store(existing_store(store), reading=True) as runs:  # records streamed, one at a time
        config = require_run(runs, run_id)
        if format == "inspect":
            _export_inspect(config, runs.episodes(run_id), output or Path("logs"), allow_import)
            return

        def write(out: IO[str]) -> int:
            if format == "jsonl":
                return write_jsonl(config, runs.episodes(run_id), out)
            # A row reads no transcript, so the summaries make the same rows: one pass for
            # the header's columns, one for the rows, neither held.
            columns = columns_of(episode_row(config, s) for s in runs.summaries(run_id))
            rows = (episode_row(config, s) for s in runs.summaries(run_id))
            return write_csv(rows, out, columns)

        if output is None:
            write(terminal_safe(sys.stdout))  # each record parsed, shown safe on a terminal
            return
        if format == "jsonl":  # written as stored: parsing a million records took minutes
            with atomic_path(output) as temporary, open(temporary, "wb", 1 << 20) as raw:
                count = write_jsonl_texts(config, runs.record_texts(run_id), raw)
        else:
            with atomic_write(output, buffering=1 << 20) as handle:  # OutputError: exit 2
                count = write(handle)
    console.print(f"wrote {count} episodes to {output}", highlight=False, markup=False)


def _export_tau2(
    run_ids: list[str],
    folder: Path | None,
    store: Path | None,
    details: SubmissionDetails,
    prices: Path | None,
    own_wording: bool = False,
) -> None:
    """The leaderboard's folder from one run per τ² domain; a broken rule is one line,
    exit 2 (the command group prints the UsageError)."""
    from deedbench.interop.tau2_export import export_submission

    if folder is None:
        raise fail("--format tau2-submission needs -o DIR, the submission folder to write")
    table = load_prices(prices)
    with open_store(existing_store(store), reading=True) as runs:
        for run_id in run_ids:
            require_run(runs, run_id)  # its keys registered as secrets before it is read
        done = export_submission(runs, run_ids, folder, details, table, own_wording=own_wording)
    for message in done.warnings:
        warn(message)
    say = partial(console.print, highlight=False, markup=False, soft_wrap=True)
    say(f"wrote {done.submission} and {len(done.domains)} trajectory file(s):")
    for domain in done.domains:
        figures = domain.figures
        passes = "  ".join(
            f"pass^{k} {_percent(getattr(figures, f'pass_{k}'))}" for k in range(1, 5)
        )
        cost = "unknown" if figures.cost is None else f"${figures.cost:.4f}"
        say(f"  {domain.domain}: {domain.path}  {passes}  cost/trajectory {cost}")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _export_inspect(
    config: RunConfig, records: Iterable[EpisodeRecord], folder: Path, allow_import: bool
) -> None:
    from deedbench.interop import require_inspect

    require_inspect()
    from deedbench.interop.write_log import write_inspect_logs

    try:
        paths = write_inspect_logs(config, records, folder, allow_import=allow_import)
    except OSError as exc:  # the folder cannot be made (a file by that name, no access)
        raise fail(f"cannot write Inspect logs into {folder}: {exc.strerror or exc}") from None
    for path in paths:
        console.print(f"wrote {path}", highlight=False, soft_wrap=True, markup=False)
    console.print(
        f"view them with: inspect view --log-dir {folder}",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
