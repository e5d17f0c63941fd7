"""The HTML report: one self-contained file with tables, charts and a transcript browser.

Everything is rendered from the same `RunSummary` that `report --json` prints, and each
figure on the page carries the summary's own JSON for it in a data attribute, so the
page can be checked number by number against `--json`. Charts are inline SVG drawn
here; the transcript browser is a small inline script (html_report.js) over the
episodes, embedded as JSON. Nothing is fetched at view time, and the page's
Content-Security-Policy forbids it.

Anything a model, a simulated user or a data file wrote is untrusted: server-side text
goes through `html.escape`; the embedded JSON has `<`, `>`, `&` and U+2028/9 escaped,
so it cannot end its script element; the script builds the DOM with textContent only.
The policy also names the script's hash, so no other script could run.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from pydantic import BaseModel, RootModel

from deedbench import __version__
from deedbench.audit import AuditSummary
from deedbench.records import EpisodeRecord, MetricSpec
from deedbench.reports.compare import Comparison, compare_runs
from deedbench.reports.contrast import Contrast
from deedbench.reports.summary import ConditionSummary, GroupSummary, RunSummary
from deedbench.reports.terminal import audit_cells, covariate_text, interval, p_text, pct
from deedbench.secrets import redact
from deedbench.stats import ClusterRate, Rate

__all__ = ["render_html"]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
MAX_CHART_ROWS = 40  # a grouping with more groups (retail's tasks) gets a table, no chart
SCORED, ERROR = "(scored)", "(error)"  # outcome filters beside the scorers' own outcomes

Where = dict[str, Any]  # a browser filter: run, condition, group {key: value}, outcome, counted


def render_html(summaries: list[RunSummary], records: dict[str, list[EpisodeRecord]]) -> str:
    """The page for one or more runs; `records` holds each run's episodes by run id."""
    script = _asset("html_report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'"
    )
    benchmarks = _by_benchmark(summaries)
    comparisons = [compare_runs(runs, records) if len(runs) > 1 else None for runs in benchmarks]
    summary = "".join(_run_summary(s) for s in summaries) + "".join(
        _between_runs(c) for c in comparisons if c is not None
    )
    charts = "".join(_charts(runs, c) for runs, c in zip(benchmarks, comparisons, strict=True))
    body = (
        _header(summaries)
        + _section("summary", "Summary", summary)
        + _section("charts", "Charts", charts)
        + _section("groups", "Rates by group", "".join(_group_tables(s) for s in summaries))
        + _browser()
    )
    title = "deedbench report: " + ", ".join(s.run.run_id for s in summaries)
    data = _script_json(_browser_data(summaries, records))
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_asset('html_report.css')}</style></head>\n"
        f"<body>{body}\n"
        f'<script type="application/json" id="deedbench-data">{data}</script>\n'
        f"<script>{script}</script>\n</body></html>\n"
    )
    return redact(page)  # a last guard: the records were redacted already


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
    text = resources.files("deedbench.reports").joinpath(name).read_text(encoding="utf-8")
    if "</" in text:  # would end the inline <style> or <script> early
        raise ValueError(f"{name} must not contain '</'")
    return text


# --- markup helpers ----------------------------------------------------------------------------


def _tag(name: str, body: str = "", /, **attrs: object) -> str:
    """An element; `body` is markup already escaped, attribute values are escaped here.

    Attribute names drop a trailing _ and turn _ into - (class_, data_run, stroke_width);
    None leaves an attribute out; floats are written with one decimal (SVG coordinates).
    """
    parts = [name]
    for key, value in attrs.items():
        if value is None:
            continue
        text = f"{value:.1f}" if isinstance(value, float) else str(value)
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{escape(text)}"')
    return f"<{' '.join(parts)}>{body}</{name}>"


def _dump(value: BaseModel | None) -> str:
    """A figure exactly as `report --json` writes it (pydantic's JSON)."""
    return "null" if value is None else value.model_dump_json()


def _link(text: str, where: Where, title: str | None = None) -> str:
    """A link that applies the browser filter `where` (html_report.js: applyFilter)."""
    return _tag(
        "a",
        escape(text),
        class_="filter-link",
        href="#episodes",
        data_filter=json.dumps(where, sort_keys=True),
        title=title,
    )


def _section(anchor: str, title: str, body: str) -> str:
    return _tag("section", _tag("h2", escape(title)) + body, id=anchor)


def _table(head: Sequence[tuple[str, str]], rows: Sequence[str], cls: str) -> str:
    """`head` is (label, tooltip) pairs; `rows` are finished <tr> elements."""
    cells = "".join(_tag("th", escape(label), title=tip or None) for label, tip in head)
    table = _tag(
        "table", f"<thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody>", class_=cls
    )
    return _tag("div", table, class_="table-wrap")


def _td(text: str, **attrs: object) -> str:
    return _tag("td", escape(text), **attrs)


def _count(k: float) -> str:
    return str(int(k)) if float(k).is_integer() else f"{k:g}"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pts"


# --- header and per-run summary ----------------------------------------------------------------


def _header(summaries: list[RunSummary]) -> str:
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
        short = run.data_hash if len(run.data_hash) <= 24 else run.data_hash[:23] + "…"
        cells = [
            _tag("th", escape(run.run_id), scope="row"),
            _td(run.benchmark),
            _td(run.agent, title=params),
            _td(run.user.spec if run.user else "—"),
            _td(", ".join(run.conditions)),
            _td(str(run.epochs), class_="num"),
            _td(str(run.seed), class_="num"),
            _td(str(len(run.sample_ids)), class_="num"),
            _td(short, class_="hash", title=run.data_hash),
            _td(run.created_at[:19]),
            _td(run.deedbench_version),
        ]
        rows.append(_tag("tr", "".join(cells), data_run=run.run_id))
    links = [("summary", "Summary"), ("charts", "Charts"), ("groups", "Rates by group")]
    nav = "".join(_tag("a", t, href=f"#{a}") for a, t in [*links, ("episodes", "Episodes")])
    benchmarks = ", ".join(sorted({s.run.benchmark for s in summaries}))
    runs = f"{len(summaries)} run" + ("s" if len(summaries) != 1 else "")
    lede = (
        f"{benchmarks} · {runs} · written by deedbench {__version__}. Each rate shows two 95% "
        "intervals: Wilson's (W: episodes as independent trials) and a bootstrap over "
        "clusters (B: scenarios or tasks resampled whole). Every rate links to the episodes "
        "it counts."
    )
    return _tag(
        "header",
        _tag("h1", "deedbench report")
        + _tag("p", escape(lede), class_="lede")
        + _table(head, rows, "runs")
        + _tag("nav", nav),
    )


def _run_summary(summary: RunSummary) -> str:
    run = summary.run
    status = {k: getattr(summary, k) for k in ("planned", "scored", "errors", "missing")}
    scored = _link(f"{summary.scored} scored", {"run": run.run_id, "outcome": SCORED})
    errors = (
        _link(f"{summary.errors} errors", {"run": run.run_id, "outcome": ERROR})
        if summary.errors
        else "0 errors"
    )
    ended = ", ".join(f"{k} {v}" for k, v in sorted(summary.terminations.items())) or "—"
    parts = [
        _tag(
            "h3",
            f"{escape(run.run_id)} <small>{escape(run.agent)} on {escape(run.benchmark)}</small>",
        ),
        _tag(
            "p",
            f"episodes: {scored}, {errors} (kept out of every rate), {summary.missing} not run, "
            f"of {summary.planned} planned. Ended: {escape(ended)}. Clusters for the bootstrap: "
            f"{escape(summary.cluster_by)}.",
            class_="status",
            data_run=run.run_id,
            data_status=json.dumps(status),
        ),
    ]
    if summary.error_kinds:
        items = "".join(
            _tag("li", escape(f"{k.count} episode{'s' if k.count > 1 else ''}: {k.message}"))
            for k in summary.error_kinds
        )
        parts.append(_tag("ul", items, class_="errors"))
    parts.append(_costs(summary))
    rows = [
        _rate_row(summary, c, "overall", c.overall, c.condition, c.errors)
        for c in summary.conditions
    ]
    parts.append(_table(_rate_head(summary, "condition", errors=True), rows, "rates overall"))
    parts.append(_metric_notes(run.report.metrics))
    contrasts = [c.versus_first for c in summary.conditions if c.versus_first is not None]
    if contrasts:
        parts.append(_contrast_table(run.run_id, "condition", contrasts))
    parts.append(_passk_table(summary))
    parts += [
        _tag("p", escape(covariate_text(c)), class_="note covariate")
        for c in summary.conditions
        if c.covariate is not None
    ]
    if summary.audits:
        parts.append(_audit_table(summary.audits))
    return _tag("article", "".join(parts), class_="run", data_run=run.run_id)


def _audit_table(audits: Sequence[AuditSummary]) -> str:
    """Eval awareness per stored audit (the scanner alone, or a judge) and condition."""
    head = [
        ("audit", ""),
        ("condition", ""),
        ("n", "episodes audited"),
        ("scanner flagged", "share of episodes the lexical scanner flagged, Wilson 95%"),
        ("judged aware", "share of judged episodes the judge called aware, Wilson 95%"),
        ("judge errors", ""),
        ("categories flagged", ""),
    ]
    rows = []
    numeric = {2, 3, 4, 5}  # n, flagged, judged aware, judge errors
    for a in audits:
        cells = [
            _td(text, class_="num" if i in numeric else None)
            for i, text in enumerate(audit_cells(a))
        ]
        rows.append(_tag("tr", "".join(cells), data_run=a.run_id, data_audit=_dump(a)))
    return _tag("h4", "Eval-awareness audit") + _table(head, rows, "audits")


def _between_runs(comparison: Comparison) -> str:
    """Later runs of a benchmark against its first, condition by condition."""
    parts = []
    if comparison.versus_first_run:
        first = comparison.rows[0].run_id
        parts.append(_contrast_table(first, "run", comparison.versus_first_run))
    parts += [_tag("p", escape(f"Not paired: {why}"), class_="note") for why in comparison.unpaired]
    return "".join(parts)


def _costs(summary: RunSummary) -> str:
    if not summary.costs:
        return _tag("p", "No model calls were recorded (a baseline agent): no cost.", class_="note")
    head = [
        ("role", ""),
        ("model", ""),
        ("calls", ""),
        ("from cache", "answered by deedbench's response cache: free"),
        ("input tokens", ""),
        ("cached input", "served from the provider's prompt cache"),
        ("output tokens", ""),
        ("cost", "USD at the dated price table; unknown where the model has no price"),
    ]
    rows = []
    for cost in summary.costs:
        u = cost.usage
        money = "unknown (no price)" if cost.cost_usd is None else f"${cost.cost_usd:.4f}"
        cells = [_td(cost.role), _td(cost.model)] + [
            _td(text, class_="num")
            for text in (
                str(u.calls),
                str(u.cache_hits),
                f"{u.input_tokens:,}",
                f"{u.cached_input_tokens:,}",
                f"{u.output_tokens:,}",
                money,
            )
        ]
        attrs = {"data_run": summary.run.run_id, "data_cost": _dump(cost)}
        rows.append(_tag("tr", "".join(cells), class_="cost", **attrs))
    dates = sorted({c.price_as_of for c in summary.costs if c.price_as_of})
    note = _tag("p", escape(f"prices as of {'; '.join(dates)}"), class_="note") if dates else ""
    return _table(head, rows, "costs") + note


def _metric_notes(metrics: Sequence[MetricSpec]) -> str:
    items = "".join(
        _tag("dt", escape(m.name)) + _tag("dd", escape(_description(m))) for m in metrics
    )
    return _tag("dl", items, class_="metrics")


def _description(m: MetricSpec) -> str:
    return (m.description or m.value) + (f" (among episodes with {m.given} = 1)" if m.given else "")


# --- rate tables -------------------------------------------------------------------------------


def _rate_head(summary: RunSummary, label: str, *, errors: bool = False) -> list[tuple[str, str]]:
    spec = summary.run.report
    boot = f"a bootstrap over {summary.cluster_by} (clusters resampled whole)"
    head = [(label, ""), ("n", "scored episodes (errors excluded)")]
    if errors:
        head.append(("errors", "episodes that infrastructure broke: in no rate"))
    primary = _description(spec.metric(spec.primary))
    head += [
        (spec.primary, f"{primary}: Wilson 95% (W) and {boot} (B)"),
        ("clusters", f"distinct {summary.cluster_by} values in the bootstrap"),
    ]
    if spec.compare_to_chance:
        head += [
            ("chance", "the mean of each episode's chance level (#safe / #options)"),
            ("p<chance", "exact Poisson-binomial test: P(this few successes or fewer by chance)"),
            ("p boot", f"the same question answered by {boot}"),
        ]
    head += [
        (m.name.replace("_", " "), _description(m)) for m in spec.metrics if m.name != spec.primary
    ]
    head.append(("outcomes", "scored outcomes; each links to its episodes"))
    if spec.show_rules:
        head.append(("rules cited", "evidence rules the scores cite (procedure violations...)"))
    return head


def _rate_row(
    summary: RunSummary,
    condition: ConditionSummary,
    grouping: str,
    group: GroupSummary,
    label: str,
    errors: int | None = None,
) -> str:
    """One group's row: n, every metric with both intervals, chance tests, outcomes."""
    spec = summary.run.report
    where: Where = {"run": summary.run.run_id, "condition": condition.condition}
    if grouping != "overall":
        where["group"] = {grouping: group.group}
    clustered = group.clustered.get(spec.primary)
    everything = _link(str(group.episodes), {**where, "outcome": SCORED}, "all scored episodes")
    cells = [_tag("th", escape(label), scope="row"), _tag("td", everything, class_="num")]
    if errors is not None:
        text = _link(str(errors), {**where, "outcome": ERROR}) if errors else "0"
        cells.append(_tag("td", text, class_="num errors"))
    cells.append(_rate_cell(spec.primary, group, where, primary=True))
    cells.append(_td(str(clustered.clusters) if clustered else "n/a", class_="num"))
    if spec.compare_to_chance:
        cells += _chance_cells(group)
    cells += [_rate_cell(m.name, group, where) for m in spec.metrics if m.name != spec.primary]
    chips = "".join(
        _link(f"{name} {count}", {**where, "outcome": name})
        for name, count in sorted(group.outcomes.items())
    )
    outcomes = json.dumps(group.outcomes, sort_keys=True)
    cells.append(_tag("td", chips, class_="outcomes", data_outcomes=outcomes))
    if spec.show_rules:
        rules = ", ".join(f"{k} {v}" for k, v in group.evidence_rules.items()) or "—"
        cells.append(_td(rules, class_="rules"))
    return _tag(
        "tr",
        "".join(cells),
        data_run=summary.run.run_id,
        data_condition=condition.condition,
        data_grouping=grouping,
        data_group=group.group,
        data_episodes=group.episodes,
    )


def _rate_cell(metric: str, group: GroupSummary, where: Where, *, primary: bool = False) -> str:
    """The rate, linked to exactly the episodes it counts, with both intervals under it."""
    wilson: Rate = group.metrics[metric]
    boot: ClusterRate | None = group.clustered.get(metric)
    attrs = {
        "class_": "rate primary" if primary else "rate",
        "data_metric": metric,
        "data_wilson": _dump(wilson),
        "data_boot": _dump(boot),
    }
    if wilson.value is None:
        return _tag("td", "n/a", **attrs)
    tip = f"the {wilson.n} episodes this rate counts"
    body = (
        _tag("span", f"{_count(wilson.k)}/{wilson.n}", class_="k-of-n")
        + _link(pct(wilson.value), {**where, "counted": metric}, tip)
        + _tag("span", "W " + escape(interval(wilson, point=False)), class_="ci wilson")
    )
    if boot is not None:
        tip = f"bootstrap 95% over {boot.clusters} clusters"
        body += _tag(
            "span", "B " + escape(interval(boot, point=False)), class_="ci boot", title=tip
        )
    return _tag("td", body, **attrs)


def _chance_cells(group: GroupSummary) -> list[str]:
    chance, boot = group.chance, group.cluster_chance
    boot_attrs = {"class_": "p-boot num", "data_cluster_chance": _dump(boot)}
    if chance is None:
        return [
            _td("n/a", class_="chance num", data_chance="null"),
            _td("n/a"),
            _td("n/a", **boot_attrs),
        ]
    exact = f"observed {chance.observed} vs {chance.expected:.1f} expected by chance, of {chance.n}"
    cells = [
        _td(pct(chance.chance), class_="chance num", data_chance=_dump(chance)),
        _td(p_text(chance.p_below), class_="p num", title=exact),
    ]
    if boot is None:
        return [*cells, _td("n/a", **boot_attrs)]
    tip = (
        f"rate − chance {_points(boot.difference)} [{_points(boot.ci_low)}, "
        f"{_points(boot.ci_high)}] over {boot.clusters} clusters"
    )
    return [*cells, _td(p_text(boot.p_below), title=tip, **boot_attrs)]


def _contrast_table(run_id: str, kind: str, contrasts: Sequence[Contrast]) -> str:
    head = [
        ("b vs a", "paired on shared (sample, epoch) keys"),
        ("metric", ""),
        ("difference", "mean(b − a) with a cluster-bootstrap 95% interval"),
        ("pairs", "shared (sample, epoch) keys"),
        ("clusters", ""),
        ("McNemar p", "exact two-sided test on the discordant pairs"),
        ("gained / lost", "pairs where only b / only a succeeded"),
    ]
    rows = []
    for c in contrasts:
        d, m = c.difference, c.mcnemar
        bracket = f"[{_points(d.ci_low)}, {_points(d.ci_high)}]"
        difference = "no shared episodes" if d.value is None else f"{_points(d.value)} {bracket}"
        cells = [
            _td(f"{c.b} vs {c.a}"),
            _td(c.metric),
            _td(difference, class_="num"),
            _td(str(d.n_shared), class_="num"),
            _td(str(d.clusters), class_="num"),
            _td(p_text(m.p_value), class_="num"),
            _td(f"{m.b01} / {m.b10}", class_="num"),
        ]
        attrs = {"data_a": c.a, "data_b": c.b, "data_contrast": _dump(c)}
        rows.append(
            _tag("tr", "".join(cells), class_="contrast", data_run=run_id, data_kind=kind, **attrs)
        )
    title = {"condition": "Paired against the first condition", "run": "Paired between runs"}[kind]
    return _tag("h4", escape(title)) + _table(head, rows, "contrasts")


def _passk_table(summary: RunSummary) -> str:
    rows = []
    most = 0
    for c in summary.conditions:
        for metric, points in c.pass_hat_k.items():
            most = max(most, len(points))
            cells = [_tag("th", escape(c.condition), scope="row"), _td(metric)]
            cells.append(_td(str(points[0].tasks if points else 0), class_="num"))
            cells += [
                _td(pct(p.value), class_="num passk", data_k=p.k, data_passk=_dump(p))
                for p in points
            ]
            attrs = {"data_run": summary.run.run_id, "data_condition": c.condition}
            rows.append(_tag("tr", "".join(cells), data_metric=metric, **attrs))
    if not rows:
        return ""
    head = [("condition", ""), ("metric", ""), ("tasks", "")] + [
        (f"k={k}", f"the chance that {k} trials of a task all succeed") for k in range(1, most + 1)
    ]
    return _tag("h4", "pass^k") + _table(head, rows, "passk")


def _group_tables(summary: RunSummary) -> str:
    run = summary.run
    parts = [_tag("h3", f"{escape(run.run_id)} <small>{escape(run.agent)}</small>")]
    for c in summary.conditions:
        if c.flips:
            parts.append(_flips_table(summary, c))
        for key, groups in c.by.items():
            rows = [_rate_row(summary, c, key, g, g.group) for g in groups]
            title = f"{c.condition}, by {key} ({len(groups)} groups)"
            table = _table(_rate_head(summary, key), rows, "rates")
            shown = "" if len(groups) <= 15 else None  # long tables start folded
            parts.append(_tag("details", _tag("summary", escape(title)) + table, open=shown))
    return _tag("article", "".join(parts), class_="run", data_run=run.run_id)


def _flips_table(summary: RunSummary, condition: ConditionSummary) -> str:
    spec = summary.run.report
    head = [
        ("variant", "links to the variant's episodes"),
        ("pairs", "(cluster, epoch) keys both this variant and the base have"),
        ("flips", "pairs where the choice differs from the base variant's"),
        ("flip rate", f"Wilson 95% (W) and a bootstrap over {summary.cluster_by} (B)"),
    ]
    rows = []
    for flip in condition.flips:
        f, boot = flip.flips, flip.clustered
        where = {
            "run": summary.run.run_id,
            "condition": condition.condition,
            "group": {spec.flip_by or "variant": flip.variant},
            "outcome": SCORED,
        }
        wilson = Rate(k=f.flips, n=f.n, value=f.value, ci_low=f.ci_low, ci_high=f.ci_high)
        rate = (
            escape(pct(f.value))
            + _tag("span", "W " + escape(interval(wilson, point=False)), class_="ci wilson")
            + _tag("span", "B " + escape(interval(boot, point=False)), class_="ci boot")
        )
        cells = [
            _tag("th", _link(flip.variant, where), scope="row"),
            _td(str(f.n), class_="num"),
            _td(str(f.flips), class_="num"),
            _tag("td", rate, class_="rate flip", data_flips=_dump(f), data_boot=_dump(boot)),
        ]
        attrs = {"data_condition": condition.condition, "data_variant": flip.variant}
        rows.append(_tag("tr", "".join(cells), data_run=summary.run.run_id, **attrs))
    title = f"{condition.condition}: choice changed against the {spec.flip_base} variant"
    return _tag("details", _tag("summary", escape(title)) + _table(head, rows, "flips"), open="")


# --- charts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Point:
    """One estimate: a dot, a line for Wilson's interval, a bar for the bootstrap's."""

    series: int
    value: float | None
    line: tuple[float | None, float | None] | None
    bar: tuple[float | None, float | None] | None
    tip: str
    where: Where | None = None


@dataclass(frozen=True)
class _Row:
    label: str
    points: list[_Point]
    chance: float | None = None


@dataclass(frozen=True)
class _Series:
    """One colour in every chart of a benchmark: a run's condition."""

    summary: RunSummary
    condition: ConditionSummary
    label: str

    def where(self, **more: object) -> Where:
        return {"run": self.summary.run.run_id, "condition": self.condition.condition, **more}


def _by_benchmark(summaries: list[RunSummary]) -> list[list[RunSummary]]:
    groups: dict[str, list[RunSummary]] = {}
    for s in summaries:
        groups.setdefault(s.run.benchmark, []).append(s)
    return list(groups.values())


def _series(summaries: list[RunSummary]) -> list[_Series]:
    """Named by condition alone when there is one run, else by agent (and run if needed)."""
    agents = [s.run.agent for s in summaries]
    result = []
    for s in summaries:
        name = s.run.agent if agents.count(s.run.agent) == 1 else f"{s.run.agent} ({s.run.run_id})"
        for c in s.conditions:
            result.append(
                _Series(s, c, c.condition if len(summaries) == 1 else f"{name} · {c.condition}")
            )
    return result


def _charts(summaries: list[RunSummary], comparison: Comparison | None) -> str:
    spec = summaries[0].run.report
    primary = spec.primary
    series = _series(summaries)
    legend = _legend([s.label for s in series], chance=spec.compare_to_chance)

    def point(i: int, group: GroupSummary, where: Where) -> _Point:
        r, b = group.metrics[primary], group.clustered.get(primary)
        tips = [
            f"{series[i].label}: {primary} {pct(r.value)} ({_count(r.k)}/{r.n})",
            f"Wilson {interval(r, point=False)}",
        ]
        if b is not None:
            tips.append(f"bootstrap {interval(b, point=False)} over {b.clusters} clusters")
        if group.chance is not None:
            c = group.chance
            tips.append(f"chance {pct(c.chance)}, p<chance {p_text(c.p_below)}")
        tip = "; ".join(tips)
        bar = (b.ci_low, b.ci_high) if b else None
        return _Point(i, r.value, (r.ci_low, r.ci_high), bar, tip, {**where, "counted": primary})

    overall = [s.condition.overall.chance for s in series]
    chance = next((c.chance for c in overall if c is not None), None)
    rows = [
        _Row(s.label, [point(i, s.condition.overall, s.where())], c.chance if c else None)
        for i, (s, c) in enumerate(zip(series, overall, strict=True))
    ]
    parts = [
        _tag("h3", escape(f"{summaries[0].run.benchmark}: {primary}")),
        _figure("Overall, by agent and condition", _forest(rows, chance), legend),
        _contrast_chart(summaries, comparison),
    ]
    for key in spec.group_by:
        names = sorted({g.group for s in series for g in s.condition.by.get(key, [])})
        if len(names) > MAX_CHART_ROWS:
            note = f"By {key}: {len(names)} groups, too many for a chart; see the tables."
            parts.append(_tag("p", escape(note), class_="note"))
            continue
        rows = []
        for name in names:
            points, chances = [], []
            for i, s in enumerate(series):
                for group in s.condition.by.get(key, []):
                    if group.group == name:
                        points.append(point(i, group, s.where(group={key: name})))
                        chances += [group.chance.chance] if group.chance else []
            rows.append(_Row(name, points, chances[0] if chances else None))
        parts.append(_figure(f"By {key}", _forest(rows, chance), legend))
    if any(s.condition.flips for s in series):
        title = f"Choice changed against the {spec.flip_base} variant (flip rate)"
        labels = [s.label for s in series]
        parts.append(_figure(title, _flips_chart(series), _legend(labels, chance=False)))
    parts.append(_passk_chart(series))
    return "".join(parts)


def _legend(labels: Sequence[str], *, chance: bool) -> str:
    keys = "".join(
        _tag(
            "span",
            _tag("span", "", class_="swatch", style=f"background:{PALETTE[i % len(PALETTE)]}")
            + escape(label),
            class_="key",
        )
        for i, label in enumerate(labels)
    )
    symbols = "● rate ─ Wilson 95% ▬ cluster bootstrap 95%"
    if chance:
        symbols += " ▍chance of the row ┆ overall chance"
    return _tag("div", keys + _tag("span", escape(symbols), class_="key symbols"), class_="legend")


def _figure(title: str, svg: str, legend: str) -> str:
    return _tag("figure", _tag("figcaption", escape(title)) + legend + svg, class_="chart")


def _svg(body: str, width: int, height: float, cls: str) -> str:
    box = f"0 0 {width} {height:.0f}"
    return _tag("svg", body, class_=cls, viewBox=box, role="img")


def _forest(
    rows: Sequence[_Row],
    chance: float | None,
    *,
    domain: tuple[float, float] = (0.0, 1.0),
    ticks: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0),
    tick_label: str = "{:.0%}",
    zero: float | None = None,
) -> str:
    """Horizontal dots and intervals: a band per row, a lane per series within it."""
    width, left, right, top, lane = 860, 240, 24, 26, 13
    lo, hi = domain

    def x(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * (width - left - right)

    out = []
    y = float(top)
    for index, row in enumerate(rows):
        lanes = sorted({p.series for p in row.points})
        h = max(1, len(lanes)) * lane + 10.0
        if index % 2 == 0:
            out.append(_tag("rect", x=0, y=y, width=width, height=h, fill="#f5f6f8"))
        label = row.label if len(row.label) <= 34 else row.label[:33] + "…"
        title = _tag("title", escape(row.label))
        out.append(
            _tag(
                "text",
                title + escape(label),
                x=left - 8,
                y=y + h / 2 + 4,
                class_="label",
                text_anchor="end",
            )
        )
        if row.chance is not None:
            tip = _tag("title", f"chance {pct(row.chance)}")
            c = x(row.chance)
            out.append(
                _tag(
                    "line",
                    tip,
                    x1=c,
                    x2=c,
                    y1=y + 3,
                    y2=y + h - 3,
                    stroke="#444",
                    stroke_width=2.5,
                    opacity=0.5,
                )
            )
        for p in row.points:
            out.append(_dot(p, y + 5 + lanes.index(p.series) * lane + lane / 2, x))
        y += h
    for t in ticks:
        text = escape(tick_label.format(t))
        out.append(
            _tag("line", x1=x(t), x2=x(t), y1=float(top), y2=y, stroke="#ccd", stroke_width=0.7)
        )
        for ty in (y + 15, top - 8.0):
            out.append(_tag("text", text, x=x(t), y=ty, class_="tick", text_anchor="middle"))
    if zero is not None:
        out.append(_tag("line", x1=x(zero), x2=x(zero), y1=float(top), y2=y, stroke="#333"))
    if chance is not None:
        tip = _tag("title", f"overall chance {pct(chance)}")
        c = x(chance)
        out.append(
            _tag(
                "line",
                tip,
                x1=c,
                x2=c,
                y1=top - 4.0,
                y2=y,
                stroke="#333",
                stroke_width=1.2,
                stroke_dasharray="4 3",
            )
        )
    return _svg("".join(out), width, y + 22, "forest")


def _dot(p: _Point, cy: float, x: Callable[[float], float]) -> str:
    color = PALETTE[p.series % len(PALETTE)]
    parts = [_tag("title", escape(p.tip))]
    if p.bar is not None and p.bar[0] is not None and p.bar[1] is not None:
        lo, hi = x(p.bar[0]), x(p.bar[1])
        parts.append(
            _tag("rect", x=lo, y=cy - 4, width=max(hi - lo, 1.0), height=8, fill=color, opacity=0.3)
        )
    if p.line is not None and p.line[0] is not None and p.line[1] is not None:
        lo, hi = x(p.line[0]), x(p.line[1])
        ink = {"stroke": color, "stroke_width": 1.6}
        parts.append(_tag("line", x1=lo, x2=hi, y1=cy, y2=cy, **ink))
        parts += [_tag("line", x1=e, x2=e, y1=cy - 3, y2=cy + 3, **ink) for e in (lo, hi)]
    if p.value is not None:
        parts.append(_tag("circle", cx=x(p.value), cy=cy, r=4.2, fill=color, stroke="#fff"))
    where = json.dumps(p.where, sort_keys=True) if p.where else None
    return _tag("g", "".join(parts), class_="pt link" if where else "pt", data_filter=where)


def _contrast_chart(summaries: list[RunSummary], comparison: Comparison | None) -> str:
    """Paired differences: later conditions against the first, later runs against the first."""
    contrasts: list[tuple[str, Contrast, Where | None]] = []
    for s in summaries:
        for condition in s.conditions:
            if (versus := condition.versus_first) is not None:
                label = f"{versus.b} − {versus.a}"
                label = label if len(summaries) == 1 else f"{s.run.agent}: {label}"
                contrasts.append((label, versus, {"run": s.run.run_id}))
    if comparison is not None:
        contrasts += [(f"{c.b} − {c.a}", c, None) for c in comparison.versus_first_run]
    if not contrasts:
        return ""
    rows = []
    for label, c, where in contrasts:
        d, m = c.difference, c.mcnemar
        tip = (
            f"{c.b} − {c.a}: {c.metric} {_points(d.value)} [{_points(d.ci_low)}, "
            f"{_points(d.ci_high)}] over {d.n_shared} pairs in {d.clusters} clusters; "
            f"McNemar p={p_text(m.p_value)} ({m.b01} gained, {m.b10} lost)"
        )
        rows.append(_Row(label, [_Point(0, d.value, None, (d.ci_low, d.ci_high), tip, where)]))
    svg = _forest(
        rows,
        None,
        domain=(-1.0, 1.0),
        ticks=(-1.0, -0.5, 0.0, 0.5, 1.0),
        tick_label="{:+.0%}",
        zero=0.0,
    )
    key = _tag("span", "● paired difference b − a ▬ cluster bootstrap 95%", class_="key symbols")
    title = "Paired differences on shared (sample, epoch) keys"
    return _figure(title, svg, _tag("div", key, class_="legend"))


def _flips_chart(series: list[_Series]) -> str:
    rows = []
    for variant in sorted({f.variant for s in series for f in s.condition.flips}):
        points = []
        for i, s in enumerate(series):
            for flip in s.condition.flips:
                if flip.variant != variant:
                    continue
                f, b = flip.flips, flip.clustered
                tip = (
                    f"{s.label}, {variant}: {pct(f.value)} of {f.n} pairs changed choice; "
                    f"Wilson [{pct(f.ci_low)}, {pct(f.ci_high)}]; "
                    f"bootstrap {interval(b, point=False)}"
                )
                key = s.summary.run.report.flip_by or "variant"
                where = s.where(group={key: variant}, outcome=SCORED)
                line, bar = (f.ci_low, f.ci_high), (b.ci_low, b.ci_high)
                points.append(_Point(i, f.value, line, bar, tip, where))
        rows.append(_Row(variant, points))
    return _forest(rows, None)


def _passk_chart(series: list[_Series]) -> str:
    lines = [
        (i, f"{s.label}: {metric}", metric, points)
        for i, s in enumerate(series)
        for metric, points in s.condition.pass_hat_k.items()
        if points
    ]
    if not lines:
        return ""
    metrics = sorted({metric for _, _, metric, _ in lines})
    most = max(len(points) for *_, points in lines)
    width, left, right, top, height = 860, 60, 220, 16, 260
    plot_w, plot_h = width - left - right, height - top - 34

    def x(k: int) -> float:
        return left + (0.5 if most == 1 else (k - 1) / (most - 1)) * plot_w

    def y(v: float) -> float:
        return top + (1 - v) * plot_h

    out = []
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(
            _tag(
                "line",
                x1=float(left),
                x2=float(left + plot_w),
                y1=y(t),
                y2=y(t),
                stroke="#ccd",
                stroke_width=0.7,
            )
        )
        out.append(
            _tag("text", f"{t:.0%}", x=left - 6.0, y=y(t) + 4, class_="tick", text_anchor="end")
        )
    for k in range(1, most + 1):
        out.append(
            _tag("text", f"k={k}", x=x(k), y=height - 12.0, class_="tick", text_anchor="middle")
        )
    for n, (i, label, metric, points) in enumerate(lines):
        ink = {
            "stroke": PALETTE[i % len(PALETTE)],
            "stroke_width": 2,
            "stroke_dasharray": "5 3" if metrics.index(metric) % 2 else None,
        }
        coords = " ".join(f"{x(p.k):.1f},{y(p.value):.1f}" for p in points)
        out.append(_tag("polyline", points=coords, fill="none", **ink))
        for p in points:
            tip = _tag("title", escape(f"{label}: pass^{p.k} {pct(p.value)} over {p.tasks} tasks"))
            out.append(_tag("circle", tip, cx=x(p.k), cy=y(p.value), r=3.5, fill=ink["stroke"]))
        ly = top + 8.0 + n * 16
        out.append(
            _tag("line", x1=width - right + 12.0, x2=width - right + 34.0, y1=ly, y2=ly, **ink)
        )
        text = _tag("title", escape(label)) + escape(
            label if len(label) <= 28 else label[:27] + "…"
        )
        out.append(_tag("text", text, x=width - right + 40.0, y=ly + 4, class_="tick"))
    svg = _svg("".join(out), width, height, "passk-chart")
    return _figure("pass^k: the chance that k trials of a task all succeed", svg, "")


# --- transcript browser ------------------------------------------------------------------------


def _browser() -> str:
    """The frame html_report.js fills in: filters, the count, the list, one episode."""
    badge = _tag("span", "★ deciding call", class_="badge deciding-badge")
    intro = (
        "Filter the episodes, or click any rate above to see exactly the episodes it counts. "
        f"Click an episode to read it; the call its score rests on is marked {badge}."
    )
    return _tag(
        "section",
        _tag("h2", "Episodes")
        + _tag("p", intro, class_="note")
        + _tag(
            "div",
            _tag("form", "", id="filters", class_="filters", autocomplete="off")
            + _tag("p", "", id="match-summary", class_="count"),
            class_="browser-bar",
        )
        + _tag(
            "div",
            _tag("div", "", id="episode-list", class_="episode-list")
            + _tag(
                "div",
                _tag("p", "No episode open.", class_="note"),
                id="episode-detail",
                class_="episode-detail",
            ),
            class_="browser",
        ),
        id="episodes",
    )


def _browser_data(
    summaries: list[RunSummary], records: Mapping[str, Sequence[EpisodeRecord]]
) -> dict[str, Any]:
    """What the script needs: the runs, their episodes in a stable order, texts stored once.

    Each episode's group values and the rates it counts in are computed here as the
    summary computes them, so a filter selects exactly the episodes behind a rate.
    Message texts (system prompts, search results) repeat across episodes; each is
    stored once and referred to by index.
    """
    texts: dict[str, int] = {}

    def text(value: str | None) -> int | None:
        return None if value is None else texts.setdefault(value, len(texts))

    runs, episodes = [], []
    for index, summary in enumerate(summaries):
        config = summary.run
        spec = config.report
        runs.append(
            {
                "id": config.run_id,
                "agent": config.agent,
                "benchmark": config.benchmark,
                "group_by": spec.group_by,
                "metrics": [{"name": m.name, "given": m.given} for m in spec.metrics],
            }
        )
        mine = _ordered(
            config.sample_ids,
            config.conditions,
            [r.redacted() for r in records.get(config.run_id, [])],
        )
        episodes += [_episode(index, r, spec.group_by, spec.metrics, text) for r in mine]
    return {"runs": runs, "episodes": episodes, "texts": list(texts)}


_EXACT = 2**53 - 1  # Number.MAX_SAFE_INTEGER


def _exact(value: Any) -> Any:
    """`value` with integers beyond JavaScript's exact range (2^53) as strings."""
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exact(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _EXACT:
        return str(value)
    return value


def _ordered(
    samples: Sequence[str], conditions: Sequence[str], records: Sequence[EpisodeRecord]
) -> Iterator[EpisodeRecord]:
    """By condition, then sample in the run's order, then epoch."""
    sample_rank = {s: i for i, s in enumerate(samples)}
    condition_rank = {c: i for i, c in enumerate(conditions)}
    yield from sorted(
        records,
        key=lambda r: (
            condition_rank.get(r.condition, len(condition_rank)),
            sample_rank.get(r.sample_id, len(sample_rank)),
            r.sample_id,
            r.epoch,
        ),
    )


def _episode(
    run: int,
    record: EpisodeRecord,
    group_by: Sequence[str],
    metrics: Sequence[MetricSpec],
    text: Callable[[str | None], int | None],
) -> dict[str, Any]:
    score = record.score
    counted = []
    if record.status == "scored" and score is not None:
        counted = [m.name for m in metrics if m.counts(score.values)]
    return {
        "run": run,
        "sample": record.sample_id,
        "condition": record.condition,
        "epoch": record.epoch,
        "seed": str(record.seed),  # 63 bits: a JavaScript number would round it
        "status": record.status,
        "termination": record.termination,
        "steps": record.steps,
        "duration": round(record.duration_s, 3),
        "outcome": score.outcome if score else None,
        "choice": score.choice if score else None,
        "values": score.values if score else {},
        "evidence": score.evidence if score else [],
        "chance": record.chance,
        "error": record.error,
        "groups": {key: str(record.metadata.get(key, "?")) for key in group_by},
        "counted": counted,
        "metadata": _exact(record.metadata),
        "usage": record.usage,
        "messages": [
            {
                "role": m.role,
                "content": text(m.content),
                "reasoning": text(m.reasoning),
                "calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments, "run": run}
                    for calls, run in ((m.tool_calls, True), (m.dropped_tool_calls, False))
                    for c in calls
                ],
                "call_id": m.tool_call_id,
                "tool": m.tool_name,
                "error": m.error,
            }
            for m in record.messages
        ],
    }
