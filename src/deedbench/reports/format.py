"""How the reports write numbers and the lines built from them, shared by the terminal
tables and the HTML report so that both show a figure the same way."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deedbench.audit import AuditSummary
from deedbench.reports.contrast import Contrast
from deedbench.reports.summary import ConditionSummary
from deedbench.stats import ClusterRate, FlipRate, PassK, Rate

__all__ = [
    "CHANCE_SIDES",
    "audit_cells",
    "chance_p_text",
    "contrast_text",
    "counts_text",
    "covariate_text",
    "curve_text",
    "data_label",
    "interval",
    "k_text",
    "p_text",
    "pct",
    "points_text",
]


# a content hash, with or without its scheme: what a data label shortens
_HASH = re.compile(r"(?:sha256:)?([0-9a-f]{32,})")


def counts_text(counts: Mapping[str, int]) -> str:
    """Counts by name in a line: "agent 3, task 1" ("none" when there are none)."""
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def curve_text(points: Sequence[PassK], keep: str = " ") -> str:
    """pass^k in a line, "k=1: 70.0%  k=2: 44.9% (3 of 114 tasks)": a k over fewer tasks
    than k=1 (the tasks with that many trials) says how many, since its figure is theirs
    alone. `keep` joins each k to its figure (a terminal's no-break space)."""
    if not points:
        return "none"
    every = points[0].tasks
    return "  ".join(
        f"k={p.k}:{keep}{100 * p.value:.1f}%"
        + (f" ({p.tasks} of {every} tasks)" if p.tasks < every else "")
        for p in points
    )


def data_label(data_hash: str) -> str:
    """A run's data as every report and page shows it, in one form: each content hash as
    ``sha256:`` and its first 12 digits (as git shortens a commit's), whether the run
    recorded it bare (τ²'s), with its scheme (TAC's) or named ("tau2-results:sha256:...",
    an imported τ² file's); a named part keeps its name before it ("world sha256:cbad..."),
    parts are joined by ", ". Anything that is no hash is shown whole (a benchmark's own
    label, "wordbench:apple,birch"; an Inspect log's version, "inspect:1")."""
    shown = []
    for part in data_hash.split("|"):
        name, sep, rest = part.partition(":")
        named = _HASH.fullmatch(rest) if sep and name != "sha256" else None
        whole = _HASH.fullmatch(part)
        if named is not None:
            shown.append(f"{name} sha256:{named.group(1)[:12]}")
        elif whole is not None:
            shown.append(f"sha256:{whole.group(1)[:12]}")
        else:
            shown.append(part)
    return ", ".join(shown)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def interval(r: Rate | ClusterRate | FlipRate, *, point: bool = True) -> str:
    """ "61.2% [55.0, 67.1]"; the bracket alone with point=False; n/a where undefined."""
    if r.value is None:
        return "n/a"
    bracket = (
        "[n/a]"
        if r.ci_low is None or r.ci_high is None
        else f"[{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]"
    )
    return f"{100 * r.value:.1f}% {bracket}" if point else bracket


def p_text(value: float | None) -> str:
    """ "0.216", "3e-65"; an exact 0 is "<1e-15": a tail computed as 1 − cdf is 0 in floats
    long before the true value is (0.64^144 is 1e-28)."""
    if value is None:
        return "n/a"
    if value == 0:
        return "<1e-15"
    return f"{value:.3f}" if value >= 1e-3 else f"{value:.0e}"


# the header over chance_p_text's cells
CHANCE_SIDES = "below/above"


def chance_p_text(below: float | None, above: float | None) -> str:
    """Both one-sided p-values against chance, "below / above": a perfect run reads
    "1.000 / 2e-28", so the 1.000 is never read as "no evidence"."""
    return f"{p_text(below)} / {p_text(above)}"


def contrast_text(c: Contrast) -> str:
    """One line: the paired difference b − a with its interval and McNemar's p; the sides
    and the metric are named apart ("welfare vs base, welfare rate: +0.0 points")."""
    d = c.difference
    if d.value is None:
        return f"{c.b} vs {c.a}: no shared episodes"
    bracket = (
        "n/a"
        if d.ci_low is None or d.ci_high is None
        else f"[{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}]"
    )
    m = c.mcnemar
    return (
        f"{c.b} vs {c.a}, {c.metric} rate: {100 * d.value:+.1f} points {bracket} "
        f"over {d.n_shared} paired episodes in {d.clusters} clusters; "
        f"McNemar exact p={p_text(m.p_value)} ({m.b01} gained, {m.b10} lost)"
    )


def k_text(k: float) -> str:
    return str(int(k)) if float(k).is_integer() else f"{k:g}"


def points_text(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pts"


def audit_cells(a: AuditSummary) -> list[str]:
    """An audit's row: who audited, condition, n, scanner flagged, judged aware, judge
    errors, categories flagged."""
    who = f"judge {a.judge_spec} (rubric {a.rubric_version})" if a.judge_spec else "scanner"
    return [
        who,
        a.condition,
        str(a.episodes),
        interval(a.flagged),
        interval(a.judged_aware) if a.judged_aware else "—",
        str(a.judge_errors) if a.judge_spec else "—",
        ", ".join(f"{k} {v}" for k, v in a.categories.items()) or "none",
    ]


def covariate_text(condition: ConditionSummary) -> str:
    """One line: Spearman's rho of per-cluster rate and covariate, or why it is undefined."""
    result = condition.covariate
    assert result is not None
    c = result.correlation
    head = f"{condition.condition}: Spearman rho of per-cluster {result.metric} and {result.name}"
    if c.rho is None:
        text = f"{head}: undefined ({c.reason}; {c.n} clusters)"
    else:
        bracket = (
            "n/a"
            if c.ci_low is None or c.ci_high is None
            else f"[{c.ci_low:+.2f}, {c.ci_high:+.2f}]"
        )
        text = f"{head}: {c.rho:+.2f} {bracket}, p={p_text(c.p_value)}, {c.n} clusters"
    if result.unmatched:
        text += f"; not in the covariate file: {', '.join(result.unmatched)}"
    return text
