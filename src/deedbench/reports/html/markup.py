"""Markup helpers for the HTML report: elements with escaped attributes, links that
apply the transcript browser's filter, sections and tables.

Bodies passed in are markup already escaped; every attribute value is escaped here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from pydantic import BaseModel

__all__ = [
    "ERROR",
    "ONE_EPOCH",
    "SCORED",
    "Where",
    "figure_json",
    "filter_link",
    "flip_where",
    "rows_table",
    "section",
    "tag",
    "td",
]

SCORED, ERROR = "(scored)", "(error)"  # outcome filters beside the scorers' own outcomes

# A browser filter: run, condition, group {key: value}, outcome, counted; audit (flagged:JUDGE
# or aware:JUDGE); flip (a variant: its pairs with the base variant), flipped (those that flip).
Where = dict[str, Any]

ONE_EPOCH = (
    "One epoch: each task ran once, so only pass^1 (the share of tasks that succeeded) "
    "exists. pass^k, the chance that k trials of a task all succeed, needs k epochs: "
    "run with --epochs 2 or more to see how reliability falls with k."
)


def tag(name: str, body: str = "", /, **attrs: object) -> str:
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


def figure_json(value: BaseModel | None) -> str:
    """A figure exactly as `report --json` writes it (pydantic's JSON)."""
    return "null" if value is None else value.model_dump_json()


def filter_link(text: str, where: Where, title: str | None = None) -> str:
    """A link that applies the browser filter `where` (report.js: applyFilter)."""
    return tag(
        "a",
        escape(text),
        class_="filter-link",
        href="#episodes",
        data_filter=json.dumps(where, sort_keys=True),
        title=title,
    )


def flip_where(run_id: str, condition: str, variant: str) -> Where:
    """The filter that shows a variant's pairs with the base variant, side by side."""
    return {"run": run_id, "condition": condition, "flip": variant}


def section(anchor: str, title: str, body: str) -> str:
    return tag("section", tag("h2", escape(title)) + body, id=anchor)


def rows_table(head: Sequence[tuple[str, str]], rows: Sequence[str], cls: str) -> str:
    """`head` is (label, tooltip) pairs; `rows` are finished <tr> elements. A metric's name
    may break after its underscores, so long names do not set a column's width."""
    cells = "".join(
        tag("th", escape(label).replace("_", "_<wbr>"), title=tip or None) for label, tip in head
    )
    table = tag(
        "table", f"<thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody>", class_=cls
    )
    return tag("div", table, class_="table-wrap")


def td(text: str, **attrs: object) -> str:
    return tag("td", escape(text), **attrs)
