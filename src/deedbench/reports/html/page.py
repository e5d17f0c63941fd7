"""The page: the document around the figures, its Content-Security-Policy (which names the
inline script's hash) and the header table of the runs."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache
from html import escape
from importlib import resources

from pydantic import RootModel

from deedbench.audit import AuditResult
from deedbench.records import EpisodeRecord
from deedbench.reports.compare import compare_runs
from deedbench.reports.format import data_label
from deedbench.reports.html.browser import browser_data, browser_frame
from deedbench.reports.html.charts import benchmark_charts, by_benchmark
from deedbench.reports.html.markup import rows_table, section, tag, td
from deedbench.reports.html.tables import between_runs, group_tables, run_summary
from deedbench.reports.summary import EpisodeFigures, RunSummary, RunTally
from deedbench.secrets import redact
from deedbench.version import __version__

__all__ = ["render_figures", "render_html"]


def render_html(
    summaries: list[RunSummary],
    records: Mapping[str, Sequence[EpisodeRecord]],
    audits: Mapping[str, Sequence[AuditResult]] | None = None,
    episodes: Mapping[str, RunTally | Sequence[EpisodeFigures]] | None = None,
) -> str:
    """The page for one or more runs; `records` holds the episodes whose transcripts it
    embeds, by run id; `audits` their stored audits, so the audit rates link to the
    episodes they count; and `episodes` each run's tally (or its scored episodes' figures,
    made from `records` when not given), which pair runs. A run with
    more episodes stored than embedded says so on the page."""
    if episodes is None:
        episodes = {s.run.run_id: _figures(s, records.get(s.run.run_id, ())) for s in summaries}
    script = _asset("transcript.js") + _asset("report.js")  # one inline script, one hash
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'"
    )
    body = (
        _page_header(summaries)
        + render_figures(summaries, episodes)
        + _capped(summaries, records)
        + browser_frame()
    )
    title = "deedbench report: " + ", ".join(s.run.run_id for s in summaries)
    data = _script_json(browser_data(summaries, records, audits))
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_asset('report.css')}</style></head>\n"
        f"<body>{body}\n"
        f'<script type="application/json" id="deedbench-data">{data}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )
    return redact(page)  # a last guard: the records were redacted already


def _capped(summaries: list[RunSummary], records: Mapping[str, Sequence[EpisodeRecord]]) -> str:
    """A note for each run whose transcripts are not all embedded, saying where the rest are
    (the figures above count every episode)."""
    notes = []
    for s in summaries:
        shown, stored = len(records.get(s.run.run_id, ())), s.scored + s.errors
        if shown < stored:
            notes.append(
                f"Run {s.run.run_id}: {shown:,} of its {stored:,} transcripts are embedded "
                "below (the first epochs; the figures above count every episode). Read them "
                f"all with: deedbench view, or one with: deedbench show {s.run.run_id} SAMPLE"
            )
    return "".join(tag("p", escape(n), class_="note transcripts-capped") for n in notes)


def _figures(summary: RunSummary, records: Sequence[EpisodeRecord]) -> RunTally:
    return RunTally.of(summary.run, records)


def render_figures(
    summaries: list[RunSummary], episodes: Mapping[str, RunTally | Sequence[EpisodeFigures]]
) -> str:
    """The report's figures without its header and transcript browser: the summary, charts
    and group tables, each rate a link with its filter in `data-filter`. `deedbench view`
    serves these for a run's page; `episodes` are each run's scored episodes' figures
    (runs are paired on their scores)."""
    benchmarks = by_benchmark(summaries)
    comparisons = [compare_runs(runs, episodes) if len(runs) > 1 else None for runs in benchmarks]
    summary = "".join(run_summary(s) for s in summaries) + "".join(
        between_runs(c) for c in comparisons if c is not None
    )
    charts = "".join(
        benchmark_charts(runs, c) for runs, c in zip(benchmarks, comparisons, strict=True)
    )
    return redact(
        section("summary", "Summary", summary)
        + section("charts", "Charts", charts)
        + section("groups", "Rates by group", "".join(group_tables(s) for s in summaries))
    )


def _script_json(value: object) -> str:
    """JSON that cannot end its <script> element or break a JS line.

    Only JSON strings can hold these characters, so writing them as \\uXXXX escapes
    leaves the parsed value unchanged.
    """
    text = RootModel[object](value).model_dump_json()
    for char in ("<", ">", "&", "\u2028", "\u2029"):
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text


@cache
def _asset(name: str) -> str:
    text = resources.files("deedbench.reports.html").joinpath(name).read_text(encoding="utf-8")
    if "</" in text:  # would end the inline <style> or <script> early
        raise ValueError(f"{name} must not contain '</'")
    return text


def _page_header(summaries: list[RunSummary]) -> str:
    head = [
        ("run", ""),
        ("benchmark", ""),
        ("agent", "the agent spec; its parameters in the tooltip"),
        ("user", "the simulated user, where the benchmark has one"),
        ("conditions", ""),
        ("epochs", ""),
        ("seed", ""),
        ("samples", ""),
        ("data hash", "content hash of the benchmark data; the full value in the tooltip"),
        ("created", ""),
        ("deedbench", "the version that made the run"),
    ]
    rows = []
    for s in summaries:
        run = s.run
        dumped = run.model_dump(mode="json")["agent_params"]
        params = json.dumps(dumped, sort_keys=True) if dumped else None
        short = data_label(run.data_hash)
        cells = [
            tag("th", escape(run.run_id), scope="row"),
            td(run.benchmark),
            td(run.agent, title=params),
            td(run.user.spec if run.user else "—"),
            td(", ".join(run.conditions)),
            td(str(run.epochs), class_="num"),
            td(str(run.seed), class_="num"),
            td(str(len(run.sample_ids)), class_="num"),
            td(short, class_="hash", title=run.data_hash),
            td(run.created_at[:19]),
            td(run.deedbench_version),
        ]
        rows.append(tag("tr", "".join(cells), data_run=run.run_id))
    links = [("summary", "Summary"), ("charts", "Charts"), ("groups", "Rates by group")]
    nav = "".join(tag("a", t, href=f"#{a}") for a, t in [*links, ("episodes", "Episodes")])
    benchmarks = ", ".join(sorted({s.run.benchmark for s in summaries}))
    runs = f"{len(summaries)} run" + ("s" if len(summaries) != 1 else "")
    lede = (
        f"{benchmarks} · {runs} · written by deedbench {__version__}. Each rate shows two 95% "
        "intervals: Wilson's (W: episodes as independent trials) and a bootstrap over "
        "clusters (B: scenarios or tasks resampled whole). Every rate links to the episodes "
        "it counts."
    )
    return tag(
        "header",
        tag("h1", "deedbench report")
        + tag("p", escape(lede), class_="lede")
        + rows_table(head, rows, "runs")
        + tag("nav", nav),
    )
