"""The summary of each run (status, costs, rates per condition, contrasts, pass^k, audits) and
the rate tables by group; every rate a link to exactly the episodes it counts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from deedbench.audit import AuditSummary
from deedbench.records import MetricSpec
from deedbench.reports.compare import Comparison
from deedbench.reports.contrast import Contrast
from deedbench.reports.cost import agent_kind
from deedbench.reports.format import (
    CHANCE_SIDES,
    audit_cells,
    chance_p_text,
    covariate_text,
    interval,
    k_text,
    p_text,
    pct,
    points_text,
)
from deedbench.reports.html.markup import (
    ERROR,
    ONE_EPOCH,
    SCORED,
    Where,
    figure_json,
    filter_link,
    flip_where,
    rows_table,
    tag,
    td,
)
from deedbench.reports.summary import ConditionSummary, GroupSummary, RunSummary
from deedbench.stats import ClusterRate, Rate

__all__ = ["between_runs", "group_tables", "run_summary"]


def run_summary(summary: RunSummary) -> str:
    run = summary.run
    status = {k: getattr(summary, k) for k in ("planned", "scored", "errors", "missing")}
    scored = filter_link(f"{summary.scored} scored", {"run": run.run_id, "outcome": SCORED})
    errors = (
        filter_link(f"{summary.errors} errors", {"run": run.run_id, "outcome": ERROR})
        if summary.errors
        else "0 errors"
    )
    ended = ", ".join(f"{k} {v}" for k, v in sorted(summary.terminations.items())) or "—"
    parts = [
        tag(
            "h3",
            f"{escape(run.run_id)} <small>{escape(run.agent)} on {escape(run.benchmark)}</small>",
        ),
        tag(
            "p",
            f"episodes: {scored}, {errors} (kept out of every rate), {_not_run(summary)}. "
            f"Ended: {escape(ended)}. Clusters for the bootstrap: "
            f"{escape(summary.cluster_by)}.",
            class_="status",
            data_run=run.run_id,
            data_status=json.dumps(status),
        ),
    ]
    if summary.error_kinds:
        items = "".join(
            tag("li", escape(f"{k.count} episode{'s' if k.count > 1 else ''}: {k.message}"))
            for k in summary.error_kinds
        )
        parts.append(tag("ul", items, class_="errors"))
    parts.append(_costs(summary))
    rows = [
        _rate_row(summary, c, "overall", c.overall, c.condition, c.errors)
        for c in summary.conditions
    ]
    parts.append(rows_table(_rate_head(summary, "condition", errors=True), rows, "rates overall"))
    parts.append(_failures_table(summary))
    parts.append(_metric_notes(run.report.metrics))
    contrasts = [c.versus_first for c in summary.conditions if c.versus_first is not None]
    if contrasts:
        parts.append(_contrast_table(run.run_id, "condition", contrasts))
    parts.append(_passk_table(summary))
    parts += [
        tag("p", escape(covariate_text(c)), class_="note covariate")
        for c in summary.conditions
        if c.covariate is not None
    ]
    if summary.audits:
        parts.append(_audit_table(summary.audits))
    return tag("article", "".join(parts), class_="run", data_run=run.run_id)


def _not_run(summary: RunSummary) -> str:
    """The episodes not stored: not run (yet), or, for an imported run, not in its file."""
    source = summary.run.imported_from
    if source is None:
        return f"{summary.missing} not run, of {summary.planned} planned"
    held = f" ({summary.missing} trials of its tasks it does not hold)" if summary.missing else ""
    return escape(f"imported from {source}{held}")


def _failures_table(summary: RunSummary) -> str:
    """Per condition, why episodes did not pass: the evidence the scores cite and whose
    failure each was. Its own table so the overall rate table keeps to the window."""
    show_rules = summary.run.report.show_rules
    attributed = any(c.overall.failures for c in summary.conditions)
    if not (show_rules or attributed):
        return ""
    head = [("condition", "")]
    if show_rules:
        head.append((_EVIDENCE, _EVIDENCE_TIP))
    if attributed:
        head += [
            ("not passing", "scored episodes that did not pass"),
            (
                "whose failure",
                "each put on the agent, the simulated user or the task (unclear: user and "
                "task faults both found); each links to its episodes",
            ),
            ("user and task faults", "the faults found, by kind; each links to its episodes"),
        ]
    rows = []
    for condition in summary.conditions:
        group = condition.overall
        cells = [tag("th", escape(condition.condition), scope="row")]
        if show_rules:
            cells.append(_evidence_cell(group))
        if attributed:
            where: Where = {"run": summary.run.run_id, "condition": condition.condition}
            cells += _fault_cells(group, where)
        rows.append(tag("tr", "".join(cells), data_run=summary.run.run_id))
    return rows_table(head, rows, "failures")


def _fault_cells(group: GroupSummary, where: Where) -> list[str]:
    parties = [
        filter_link(f"{party} {count}", {**where, "fault": f"party:{party}"})
        for party, count in group.failures.items()
    ]
    faults = [
        filter_link(f"{kind} {count}", {**where, "fault": f"fault:{kind}"})
        for kind, count in group.fault_kinds.items()
        if not kind.startswith("agent.")
    ]
    counts = {f"party:{k}": v for k, v in group.failures.items()}
    counts |= {f"fault:{k}": v for k, v in group.fault_kinds.items()}
    data = json.dumps(counts, sort_keys=True)
    return [
        td(str(sum(group.failures.values())), class_="num"),
        tag("td", " ".join(parties) or "—", class_="faults", data_faults=data),
        tag("td", " ".join(faults) or "—", class_="faults", data_faults=data),
    ]


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
        # The two rates link to the episodes they count (report.js: the audit filter).
        judge = a.judge_spec or ""
        where = {"run": a.run_id, "condition": a.condition}
        links = {3: (a.flagged, f"flagged:{judge}"), 4: (a.judged_aware, f"aware:{judge}")}
        cells = []
        for i, text in enumerate(audit_cells(a)):
            kind = "num" if i in numeric else None
            figure, audit = links.get(i, (None, ""))
            if figure is not None and figure.k:
                count = k_text(figure.k)  # a count: 97, never 97.0
                tip = f"the {count} episodes this rate counts"
                link = filter_link(text, {**where, "audit": audit}, tip)
                cells.append(tag("td", link, class_=kind, data_count=count))
            else:
                cells.append(td(text, class_=kind))
        rows.append(tag("tr", "".join(cells), data_run=a.run_id, data_audit=figure_json(a)))
    return tag("h4", "Eval-awareness audit") + rows_table(head, rows, "audits")


def between_runs(comparison: Comparison) -> str:
    """Later runs of a benchmark against its first, condition by condition."""
    parts = []
    if comparison.versus_first_run:
        first = comparison.rows[0].run_id
        parts.append(_contrast_table(first, "run", comparison.versus_first_run))
    parts += [tag("p", escape(f"Not paired: {why}"), class_="note") for why in comparison.unpaired]
    return "".join(parts)


def _costs(summary: RunSummary) -> str:
    if not summary.costs:
        kind = agent_kind(summary.run.agent)
        return tag("p", escape(f"No model calls were recorded ({kind}): cost none."), class_="note")
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
        cells = [td(cost.role), td(cost.model)] + [
            td(text, class_="num")
            for text in (
                str(u.calls),
                str(u.cache_hits),
                f"{u.input_tokens:,}",
                f"{u.cached_input_tokens:,}",
                f"{u.output_tokens:,}",
                money,
            )
        ]
        attrs = {"data_run": summary.run.run_id, "data_cost": figure_json(cost)}
        rows.append(tag("tr", "".join(cells), class_="cost", **attrs))
    dates = sorted({c.price_as_of for c in summary.costs if c.price_as_of})
    note = tag("p", escape(f"prices as of {'; '.join(dates)}"), class_="note") if dates else ""
    return rows_table(head, rows, "costs") + note


def _metric_notes(metrics: Sequence[MetricSpec]) -> str:
    items = "".join(tag("dt", escape(m.name)) + tag("dd", escape(_description(m))) for m in metrics)
    return tag("dl", items, class_="metrics")


def _description(m: MetricSpec) -> str:
    """What the metric means, from its spec; a run recorded without a description says
    which score value it is the mean of rather than repeating the name."""
    text = m.description or f"the mean of the score value {m.value} (no description recorded)"
    return text + (f" (among episodes with {m.given} = 1)" if m.given else "")


# --- rate tables -------------------------------------------------------------------------------

_EVIDENCE = "evidence cited"
_EVIDENCE_TIP = "procedure rules broken, and the other evidence the scores cite"


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
            (
                f"p exact {CHANCE_SIDES}",
                "exact Poisson-binomial tests, one-sided: P(this few successes or fewer by "
                "chance) / P(this many or more)",
            ),
            (f"p boot {CHANCE_SIDES}", f"the same two questions answered by {boot}"),
        ]
    head += [(m.name, _description(m)) for m in spec.metrics if m.name != spec.primary]
    head.append(("outcomes", "scored outcomes; each links to its episodes"))
    if spec.show_rules and not errors:  # the overall table leaves it to _failures_table
        head.append((_EVIDENCE, _EVIDENCE_TIP))
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
    everything = filter_link(
        str(group.episodes), {**where, "outcome": SCORED}, "all scored episodes"
    )
    cells = [tag("th", escape(label), scope="row"), tag("td", everything, class_="num")]
    if errors is not None:
        text = filter_link(str(errors), {**where, "outcome": ERROR}) if errors else "0"
        cells.append(tag("td", text, class_="num errors"))
    cells.append(_rate_cell(spec.primary, group, where, primary=True))
    cells.append(td(str(clustered.clusters) if clustered else "n/a", class_="num"))
    if spec.compare_to_chance:
        cells += _chance_cells(group)
    cells += [_rate_cell(m.name, group, where) for m in spec.metrics if m.name != spec.primary]
    chips = "".join(
        filter_link(f"{name} {count}", {**where, "outcome": name})
        for name, count in sorted(group.outcomes.items())
    )
    outcomes = json.dumps(group.outcomes, sort_keys=True)
    cells.append(tag("td", chips, class_="outcomes", data_outcomes=outcomes))
    if spec.show_rules and errors is None:
        cells.append(_evidence_cell(group))
    return tag(
        "tr",
        "".join(cells),
        data_run=summary.run.run_id,
        data_condition=condition.condition,
        data_grouping=grouping,
        data_group=group.group,
        data_episodes=group.episodes,
    )


def _evidence_cell(group: GroupSummary) -> str:
    return td(", ".join(f"{k} {v}" for k, v in group.evidence_rules.items()) or "—", class_="rules")


def _rate_cell(metric: str, group: GroupSummary, where: Where, *, primary: bool = False) -> str:
    """The rate, linked to exactly the episodes it counts, with both intervals under it."""
    wilson: Rate = group.metrics[metric]
    boot: ClusterRate | None = group.clustered.get(metric)
    attrs = {
        "class_": "rate primary" if primary else "rate",
        "data_metric": metric,
        "data_wilson": figure_json(wilson),
        "data_boot": figure_json(boot),
    }
    if wilson.value is None:
        return tag("td", "n/a", **attrs)
    tip = f"the {wilson.n} episodes this rate counts"
    body = (
        tag("span", f"{k_text(wilson.k)}/{wilson.n}", class_="k-of-n")
        + filter_link(pct(wilson.value), {**where, "counted": metric}, tip)
        + tag("span", "W " + escape(interval(wilson, point=False)), class_="ci wilson")
    )
    if boot is not None:
        tip = f"bootstrap 95% over {boot.clusters} clusters"
        body += tag("span", "B " + escape(interval(boot, point=False)), class_="ci boot", title=tip)
    return tag("td", body, **attrs)


def _chance_cells(group: GroupSummary) -> list[str]:
    chance, boot = group.chance, group.cluster_chance
    boot_attrs = {"class_": "p-boot num", "data_cluster_chance": figure_json(boot)}
    if chance is None:
        return [
            td("n/a", class_="chance num", data_chance="null"),
            td("n/a"),
            td("n/a", **boot_attrs),
        ]
    exact = f"observed {chance.observed} vs {chance.expected:.1f} expected by chance, of {chance.n}"
    cells = [
        td(pct(chance.chance), class_="chance num", data_chance=figure_json(chance)),
        td(chance_p_text(chance.p_below, chance.p_above), class_="p num", title=exact),
    ]
    if boot is None:
        return [*cells, td("n/a", **boot_attrs)]
    tip = (
        f"rate − chance {points_text(boot.difference)} [{points_text(boot.ci_low)}, "
        f"{points_text(boot.ci_high)}] over {boot.clusters} clusters"
    )
    return [*cells, td(chance_p_text(boot.p_below, boot.p_above), title=tip, **boot_attrs)]


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
        bracket = f"[{points_text(d.ci_low)}, {points_text(d.ci_high)}]"
        difference = (
            "no shared episodes" if d.value is None else f"{points_text(d.value)} {bracket}"
        )
        cells = [
            td(f"{c.b} vs {c.a}"),
            td(c.metric),
            td(difference, class_="num"),
            td(str(d.n_shared), class_="num"),
            td(str(d.clusters), class_="num"),
            td(p_text(m.p_value), class_="num"),
            td(f"{m.b01} / {m.b10}", class_="num"),
        ]
        attrs = {"data_a": c.a, "data_b": c.b, "data_contrast": figure_json(c)}
        rows.append(
            tag("tr", "".join(cells), class_="contrast", data_run=run_id, data_kind=kind, **attrs)
        )
    title = {"condition": "Paired against the first condition", "run": "Paired between runs"}[kind]
    return tag("h4", escape(title)) + rows_table(head, rows, "contrasts")


def _passk_table(summary: RunSummary) -> str:
    rows = []
    most = 0
    for c in summary.conditions:
        for metric, points in c.pass_hat_k.items():
            most = max(most, len(points))
            cells = [tag("th", escape(c.condition), scope="row"), td(metric)]
            cells.append(td(str(points[0].tasks if points else 0), class_="num"))
            cells += [
                td(pct(p.value), class_="num passk", data_k=p.k, data_passk=figure_json(p))
                for p in points
            ]
            attrs = {"data_run": summary.run.run_id, "data_condition": c.condition}
            rows.append(tag("tr", "".join(cells), data_metric=metric, **attrs))
    if not rows:
        return ""
    note = tag("p", escape(ONE_EPOCH), class_="note one-epoch") if most == 1 else ""
    head = [("condition", ""), ("metric", ""), ("tasks", "")] + [
        (f"k={k}", f"the chance that {k} trials of a task all succeed") for k in range(1, most + 1)
    ]
    return tag("h4", "pass^k") + rows_table(head, rows, "passk") + note


def group_tables(summary: RunSummary) -> str:
    run = summary.run
    parts = [tag("h3", f"{escape(run.run_id)} <small>{escape(run.agent)}</small>")]
    for c in summary.conditions:
        if c.flips:
            parts.append(_flips_table(summary, c))
        for key, groups in c.by.items():
            rows = [_rate_row(summary, c, key, g, g.group) for g in groups]
            title = f"{c.condition}, by {key} ({len(groups)} groups)"
            table = rows_table(_rate_head(summary, key), rows, "rates")
            shown = "" if len(groups) <= 15 else None  # long tables start folded
            parts.append(tag("details", tag("summary", escape(title)) + table, open=shown))
    return tag("article", "".join(parts), class_="run", data_run=run.run_id)


def _flips_table(summary: RunSummary, condition: ConditionSummary) -> str:
    spec = summary.run.report
    head = [
        ("variant", ""),
        ("pairs", "(cluster, epoch) keys both this variant and the base have; links to the pairs"),
        ("flips", "pairs where the choice differs from the base variant's; links to them"),
        ("flip rate", f"Wilson 95% (W) and a bootstrap over {summary.cluster_by} (B)"),
    ]
    rows = []
    for flip in condition.flips:
        f, boot = flip.flips, flip.clustered
        where = flip_where(summary.run.run_id, condition.condition, flip.variant)
        wilson = Rate(k=f.flips, n=f.n, value=f.value, ci_low=f.ci_low, ci_high=f.ci_high)
        tip = f"the {f.n} base and {flip.variant} pairs side by side"
        rate = (
            filter_link(pct(f.value), where, tip)
            + tag("span", "W " + escape(interval(wilson, point=False)), class_="ci wilson")
            + tag("span", "B " + escape(interval(boot, point=False)), class_="ci boot")
        )
        flipped = filter_link(str(f.flips), {**where, "flipped": True}) if f.flips else "0"
        cells = [
            tag("th", escape(flip.variant), scope="row"),
            tag("td", filter_link(str(f.n), where, tip), class_="num", data_count=f.n),
            tag("td", flipped, class_="num", data_count=f.flips),
            tag(
                "td",
                rate,
                class_="rate flip",
                data_flips=figure_json(f),
                data_boot=figure_json(boot),
            ),
        ]
        attrs = {"data_condition": condition.condition, "data_variant": flip.variant}
        rows.append(tag("tr", "".join(cells), data_run=summary.run.run_id, **attrs))
    title = f"{condition.condition}: choice changed against the {spec.flip_base} variant"
    return tag("details", tag("summary", escape(title)) + rows_table(head, rows, "flips"), open="")
