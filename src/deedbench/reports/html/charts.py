"""The charts, drawn as inline SVG: rates with both intervals and chance marks (a forest per
grouping), paired differences, flip rates and pass^k curves. Colours are Okabe-Ito's."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from deedbench.reports.compare import Comparison
from deedbench.reports.contrast import Contrast
from deedbench.reports.format import chance_p_text, interval, k_text, p_text, pct, points_text
from deedbench.reports.html.markup import ONE_EPOCH, Where, flip_where, tag
from deedbench.reports.summary import ConditionSummary, GroupSummary, RunSummary, group_order

__all__ = ["benchmark_charts", "by_benchmark"]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
_PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
_MAX_CHART_ROWS = 40  # a grouping with more groups (retail's tasks) gets a table, no chart


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


def by_benchmark(summaries: list[RunSummary]) -> list[list[RunSummary]]:
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


def benchmark_charts(summaries: list[RunSummary], comparison: Comparison | None) -> str:
    spec = summaries[0].run.report
    primary = spec.primary
    series = _series(summaries)
    legend = _legend([s.label for s in series], chance=spec.compare_to_chance)

    def point(i: int, group: GroupSummary, where: Where) -> _Point:
        r, b = group.metrics[primary], group.clustered.get(primary)
        tips = [
            f"{series[i].label}: {primary} {pct(r.value)} ({k_text(r.k)}/{r.n})",
            f"Wilson {interval(r, point=False)}",
        ]
        if b is not None:
            tips.append(f"bootstrap {interval(b, point=False)} over {b.clusters} clusters")
        if group.chance is not None:
            c = group.chance
            p_both = chance_p_text(c.p_below, c.p_above)
            tips.append(f"chance {pct(c.chance)}, p below/above {p_both}")
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
        tag("h3", escape(f"{summaries[0].run.benchmark}: {primary}")),
        _figure("Overall, by agent and condition", _forest(rows, chance), legend),
        _contrast_chart(summaries, comparison),
    ]
    for key in spec.group_by:
        names = sorted(
            {g.group for s in series for g in s.condition.by.get(key, [])}, key=group_order
        )
        if len(names) > _MAX_CHART_ROWS:
            note = f"By {key}: {len(names)} groups, too many for a chart; see the tables."
            parts.append(tag("p", escape(note), class_="note"))
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
        tag(
            "span",
            tag("span", "", class_="swatch", style=f"background:{_PALETTE[i % len(_PALETTE)]}")
            + escape(label),
            class_="key",
        )
        for i, label in enumerate(labels)
    )
    symbols = "● rate ─ Wilson 95% ▬ cluster bootstrap 95%"
    if chance:
        symbols += " ▍chance of the row ┆ overall chance"
    return tag("div", keys + tag("span", escape(symbols), class_="key symbols"), class_="legend")


def _figure(title: str, svg: str, legend: str) -> str:
    return tag("figure", tag("figcaption", escape(title)) + legend + svg, class_="chart")


def _svg(body: str, width: int, height: float, cls: str) -> str:
    box = f"0 0 {width} {height:.0f}"
    return tag("svg", body, class_=cls, viewBox=box, role="img")


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
            out.append(tag("rect", x=0, y=y, width=width, height=h, fill="#f5f6f8"))
        label = row.label if len(row.label) <= 34 else row.label[:33] + "…"
        title = tag("title", escape(row.label))
        out.append(
            tag(
                "text",
                title + escape(label),
                x=left - 8,
                y=y + h / 2 + 4,
                class_="label",
                text_anchor="end",
            )
        )
        if row.chance is not None:
            tip = tag("title", f"chance {pct(row.chance)}")
            c = x(row.chance)
            out.append(
                tag(
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
            tag("line", x1=x(t), x2=x(t), y1=float(top), y2=y, stroke="#ccd", stroke_width=0.7)
        )
        for ty in (y + 15, top - 8.0):
            out.append(tag("text", text, x=x(t), y=ty, class_="tick", text_anchor="middle"))
    if zero is not None:
        out.append(tag("line", x1=x(zero), x2=x(zero), y1=float(top), y2=y, stroke="#333"))
    if chance is not None:
        tip = tag("title", f"overall chance {pct(chance)}")
        c = x(chance)
        out.append(
            tag(
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
    color = _PALETTE[p.series % len(_PALETTE)]
    parts = [tag("title", escape(p.tip))]
    if p.bar is not None and p.bar[0] is not None and p.bar[1] is not None:
        lo, hi = x(p.bar[0]), x(p.bar[1])
        parts.append(
            tag("rect", x=lo, y=cy - 4, width=max(hi - lo, 1.0), height=8, fill=color, opacity=0.3)
        )
    if p.line is not None and p.line[0] is not None and p.line[1] is not None:
        lo, hi = x(p.line[0]), x(p.line[1])
        ink = {"stroke": color, "stroke_width": 1.6}
        parts.append(tag("line", x1=lo, x2=hi, y1=cy, y2=cy, **ink))
        parts += [tag("line", x1=e, x2=e, y1=cy - 3, y2=cy + 3, **ink) for e in (lo, hi)]
    if p.value is not None:
        parts.append(tag("circle", cx=x(p.value), cy=cy, r=4.2, fill=color, stroke="#fff"))
    where = json.dumps(p.where, sort_keys=True) if p.where else None
    return tag("g", "".join(parts), class_="pt link" if where else "pt", data_filter=where)


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
            f"{c.b} − {c.a}: {c.metric} {points_text(d.value)} [{points_text(d.ci_low)}, "
            f"{points_text(d.ci_high)}] over {d.n_shared} pairs in {d.clusters} clusters; "
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
    key = tag("span", "● paired difference b − a ▬ cluster bootstrap 95%", class_="key symbols")
    title = "Paired differences on shared (sample, epoch) keys"
    return _figure(title, svg, tag("div", key, class_="legend"))


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
                where = flip_where(s.summary.run.run_id, s.condition.condition, variant)
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
    title = "pass^k: the chance that k trials of a task all succeed"
    if most == 1:  # a curve needs k = 2 at least: say so instead of drawing lone dots
        shown = "; ".join(f"{label} {pct(points[0].value)}" for _, label, _, points in lines)
        body = tag("p", escape(ONE_EPOCH), class_="note one-epoch")
        return tag(
            "figure",
            tag("figcaption", escape(title)) + body + tag("p", escape(f"pass^1: {shown}")),
            class_="chart passk-none",
        )
    width, left, right, top, height = 860, 60, 220, 16, 260
    plot_w, plot_h = width - left - right, height - top - 34

    def x(k: int) -> float:
        return left + (0.5 if most == 1 else (k - 1) / (most - 1)) * plot_w

    def y(v: float) -> float:
        return top + (1 - v) * plot_h

    out = []
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(
            tag(
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
            tag("text", f"{t:.0%}", x=left - 6.0, y=y(t) + 4, class_="tick", text_anchor="end")
        )
    for k in range(1, most + 1):
        out.append(
            tag("text", f"k={k}", x=x(k), y=height - 12.0, class_="tick", text_anchor="middle")
        )
    for n, (i, label, metric, points) in enumerate(lines):
        ink = {
            "stroke": _PALETTE[i % len(_PALETTE)],
            "stroke_width": 2,
            "stroke_dasharray": "5 3" if metrics.index(metric) % 2 else None,
        }
        coords = " ".join(f"{x(p.k):.1f},{y(p.value):.1f}" for p in points)
        out.append(tag("polyline", points=coords, fill="none", **ink))
        for p in points:
            tip = tag("title", escape(f"{label}: pass^{p.k} {pct(p.value)} over {p.tasks} tasks"))
            out.append(tag("circle", tip, cx=x(p.k), cy=y(p.value), r=3.5, fill=ink["stroke"]))
        ly = top + 8.0 + n * 16
        out.append(
            tag("line", x1=width - right + 12.0, x2=width - right + 34.0, y1=ly, y2=ly, **ink)
        )
        text = tag("title", escape(label)) + escape(label if len(label) <= 28 else label[:27] + "…")
        out.append(tag("text", text, x=width - right + 40.0, y=ly + 4, class_="tick"))
    svg = _svg("".join(out), width, height, "passk-chart")
    return _figure(title, svg, "")
