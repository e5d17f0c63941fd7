"""Tables and lines of prose at the console's width (rich): what every command prints
its figures with.

A command's tables go through a `TablePrinter`. At a terminal too narrow for a whole
table (80 columns) it shows the columns that fit, most important first (the headline
rate with its intervals, n, errors, chance...), and one closing line names the others
and the command that shows them (`--wide`); `--wide` prints every column, those that do
not fit continuing in another table (`print_table`). Nothing is ever cut or wrapped
inside a number, an interval, an id or a command: prose lines (`say`) wrap only between
them, and a command is printed whole on its own line (`print_command`).

A title, a header and a line given as `str` are data, never rich markup.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from deedbench.printable import printable, safe

__all__ = [
    "KEEP",
    "TablePrinter",
    "new_table",
    "print_command",
    "print_table",
    "say",
]


def new_table(title: str) -> Table:
    """A table titled `title` (shown as it is, never read as markup): a rule under the
    header and two spaces between columns, so that 80 columns hold the headline figures."""
    return Table(
        title=safe(title),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
        show_edge=False,
    )


# --- lines of prose and commands ---------------------------------------------------------

_SPACES = re.compile(" +")


# joins words that a line of prose keeps together ("data sha256:..."); printed as a space
KEEP = "\u00a0"


def say(console: Console, text: str | Text, *, indent: int = 0, style: str = "") -> None:
    """Print a line at the console's width, wrapped only at spaces outside brackets, so
    an interval ("[25.4, 74.6]") is never split, and never at a `KEEP`; continuation lines
    are indented two more. A `str` is data, shown as it is (never markup), in `style`; a
    `Text` carries its own styles."""
    line = Text(printable(text), style=style) if isinstance(text, str) else text
    width = max(console.width - indent, 1)
    lines = _wrapped(line, [width, max(width - 2, 1)], _prose_breaks(line.plain))
    for number, part in enumerate(lines):
        part.plain = part.plain.replace(KEEP, " ")
        lead = " " * (indent + (2 if number else 0))
        console.print(Text.assemble(lead, part), soft_wrap=True, highlight=False)


def print_command(console: Console, command: str, *, indent: int = 2) -> None:
    """A command on a line of its own, never wrapped, so it can be copied whole."""
    console.print(Text(" " * indent + printable(command)), soft_wrap=True, highlight=False)


def _prose_breaks(plain: str) -> list[tuple[int, int]]:
    """Where a line of prose may break: each run of spaces outside brackets, as (the end
    of one line, the start of the next)."""
    depth, breaks = 0, []
    for i, char in enumerate(plain):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        elif char == " " and depth == 0 and (i == 0 or plain[i - 1] != " "):
            end = _SPACES.match(plain, i)
            assert end is not None
            breaks.append((i, end.end()))
    return breaks


def _header_breaks(plain: str) -> list[tuple[int, int]]:
    """Where a header may break: at spaces, and after an underscore inside a metric's
    name ("welfare_if_" over "completed"), which has no space to break at."""
    breaks = [(m.start(), m.end()) for m in _SPACES.finditer(plain)]
    breaks += [(i + 1, i + 1) for i, c in enumerate(plain[:-1]) if c == "_" and plain[i + 1] != " "]
    return sorted(breaks)


def _wrapped(text: Text, widths: Sequence[int], breaks: Sequence[tuple[int, int]]) -> list[Text]:
    """`text` in lines of at most widths[0] cells, then widths[-1], cut only at `breaks`;
    a stretch with no break inside that is wider stays whole on a line of its own."""
    plain, start = text.plain, 0
    lines: list[Text] = []
    while cell_len(plain[start:]) > (width := widths[min(len(lines), len(widths) - 1)]):
        later = [b for b in breaks if b[0] > start]
        if not later:
            break
        fitting = [b for b in later if cell_len(plain[start : b[0]]) <= width]
        end, start_next = fitting[-1] if fitting else later[0]
        lines.append(text[start:end])
        start = start_next
    lines.append(text[start:])
    return lines


# --- tables at the console's width ---------------------------------------------------------


@dataclass
class _Fit:
    """What a column needs: `least` (its cells whole; a text column's longest word),
    `most` (every cell and the header on one line each) and `whole` (its widest cell)."""

    least: int
    most: int
    whole: int


# a text column (descriptions, excerpts) narrower than this folds its longest words
_WIDEST_WORD = 24


def print_table(console: Console, table: Table, *, labels: int = 1) -> None:
    """Print every column of `table` at the console's width with no cell cut, wrapped
    inside a number or shortened to "…": columns that do not fit move to a second table
    (and a third...), each repeating the first `labels` columns (the row labels).

    Columns made with `no_wrap` are atomic (numbers, intervals); the others wrap at spaces,
    and fold words longer than _WIDEST_WORD only where even those do not fit. Headers wrap
    at spaces and after underscores.
    """
    width = console.width
    fits = _fits(console, table, labels)
    labels = min(labels, len(fits))
    parts: list[list[int]] = []
    part = list(range(labels))
    for i in range(labels, len(fits)):
        if len(part) > labels and _width(table, [fits[j].least for j in [*part, i]]) > width:
            parts.append(part)
            part = [*range(labels), i]
        else:
            part.append(i)
    parts.append(part)
    for number, columns in enumerate(parts):
        _print_title(console, table, continued=number > 0)
        console.print(_part(console, table, columns, fits))
        console.print()


class TablePrinter:
    """Prints a command's tables. `wide`: every column (`print_table`). Otherwise each table
    keeps the columns that fit the console, most important first (`rank`), and `close`
    names those left out and the command that shows them all; at a terminal wide enough
    for a whole table, that table is printed whole."""

    def __init__(self, console: Console, *, wide: bool) -> None:
        self.console = console
        self.wide = wide
        self.left_out: dict[str, None] = {}  # headers of the columns left out, in order

    def fits(self, table: Table, *, labels: int = 1) -> bool:
        """Whether every column of `table` fits the console side by side."""
        fits = _fits(self.console, table, labels)
        return _width(table, [f.least for f in fits]) <= self.console.width

    def print(
        self,
        table: Table,
        *,
        labels: int = 1,
        rank: Sequence[int] | None = None,
        sections: Sequence[tuple[Text, int]] = (),
    ) -> None:
        """Print `table`; `labels`: how many first columns label a row (always shown);
        `rank`: the other columns' indexes, most important first (default: their order);
        `sections`: (heading, number of rows) in order, each heading printed on a line of
        its own above its rows (the header once, on top), where a label column would be
        too wide (compare's run ids). Sections are for the fitted layout, never `wide`."""
        console = self.console
        if self.wide:
            print_table(console, table, labels=labels)
            return
        fits = _fits(console, table, labels)
        labels = min(labels, len(fits))
        shown = list(range(labels))
        order = list(rank if rank is not None else range(labels, len(fits)))
        while order and _width(table, [fits[j].least for j in [*shown, order[0]]]) <= console.width:
            shown.append(order.pop(0))
        for i in order:
            self.left_out[_plain(console, table.columns[i].header)] = None
        shown.sort()
        _print_title(console, table, continued=False)
        if not sections:
            console.print(_part(console, table, shown, fits))
            console.print()
            return
        head = _part(console, table, shown, fits, rows=range(0))
        console.print(head)
        start = 0
        for heading, count in sections:
            say(console, heading)
            part = _part(console, table, shown, fits, rows=range(start, start + count))
            part.show_header = False
            console.print(part)
            start += count
        console.print()

    def close(self, command: str) -> None:
        """One line naming the columns left out so far, then the command that shows them."""
        if not self.left_out:
            return
        names = ", ".join(self.left_out)
        say(
            self.console,
            f"Not shown at {self.console.width} columns: {names}. Every{KEEP}column:",
            style="dim",
        )
        print_command(self.console, f"{command} --wide")
        self.left_out = {}


def _fits(console: Console, table: Table, labels: int) -> list[_Fit]:
    """Each column's needs, the label columns' least widths cut down if (absurdly long
    labels) they leave no room for the widest other column."""
    fits = [_fit(console, column) for column in table.columns]
    labels = min(labels, len(fits))
    widest = max((fits[i].least for i in range(labels, len(fits))), default=0)
    room = console.width - _extra(table, labels + 1) - widest
    label_widths = [fits[i].most for i in range(labels)]
    while sum(label_widths) > room and max(label_widths, default=0) > 8:
        longest = label_widths.index(max(label_widths))
        label_widths[longest] -= 1
    for i, least in enumerate(label_widths):
        fits[i].least = least
    return fits


def _fit(console: Console, column: Column) -> _Fit:
    cells = [Measurement.get(console, console.options, c) for c in column.cells]
    header = _header_text(console, column.header)
    pieces = _wrapped(header, [1], _header_breaks(header.plain))
    header_least = max((cell_len(p.plain) for p in pieces), default=0)
    header_most = max((cell_len(line) for line in header.plain.split("\n")), default=0)
    whole = max((c.maximum for c in cells), default=0)
    most = max(header_most, whole)
    if column.no_wrap:
        return _Fit(max(header_least, whole), most, whole)
    least = min(max([header_least, *(c.minimum for c in cells)]), _WIDEST_WORD)
    return _Fit(least, most, whole)


def _header_text(console: Console, header: object) -> Text:
    if isinstance(header, Text):
        return header
    return console.render_str(str(header)) if isinstance(header, str) else Text()


def _plain(console: Console, header: object) -> str:
    return " ".join(_header_text(console, header).plain.split())


def _extra(table: Table, columns: int) -> int:
    """What `columns` columns of `table` add to their cells' widths: padding, rules, edges
    (as rich's Table._get_padding_width and _extra_width count them)."""
    _, right, _, left = table.padding
    if table.collapse_padding:
        left = 0
    pads = [left + right] * columns
    if columns and not table.pad_edge:
        pads[0] -= left
        pads[-1] -= right
    edges = (2 if table.show_edge else 0) + columns - 1 if table.box and columns else 0
    return sum(pads) + edges


def _width(table: Table, widths: list[int]) -> int:
    return sum(widths) + _extra(table, len(widths))


def _print_title(console: Console, table: Table, *, continued: bool) -> None:
    """The table's title on its own lines (a table would wrap it at its own width)."""
    if table.title is None:
        return
    title = _header_text(console, table.title).copy()
    title.stylize("table.title")
    say(console, title + Text(" (continued)") if continued else title)


def _part(
    console: Console,
    table: Table,
    columns: list[int],
    fits: list[_Fit],
    rows: range | None = None,
) -> Table:
    """The table of `columns` (and `rows`: default all), untitled: each column as narrow
    as it may be, widened toward one line per cell while the console has room."""
    widths = [fits[i].least for i in columns]
    slack = console.width - _width(table, widths)
    for k, i in enumerate(columns):
        grow = min(slack, fits[i].most - widths[k])
        if grow > 0:
            widths[k] += grow
            slack -= grow
    part = copy.copy(table)
    part.title = None
    part.columns = []
    if rows is not None:
        part.rows = table.rows[rows.start : rows.stop]
    for k, (i, w) in enumerate(zip(columns, widths, strict=True)):
        column = copy.copy(table.columns[i])
        column._index, column.width, column.min_width, column.max_width = k, w, None, None
        column.ratio = None
        if rows is not None:
            column._cells = column._cells[rows.start : rows.stop]
        header = _header_text(console, column.header)
        lines = [
            folded
            for line in _wrapped(header, [w], _header_breaks(header.plain))
            for folded in (
                line.wrap(console, w, overflow="fold") if cell_len(line.plain) > w else [line]
            )
        ]
        column.header = Text("\n").join(lines)
        if not column.no_wrap or fits[i].whole > w:
            column.no_wrap, column.overflow = False, "fold"
        part.columns.append(column)
    return part
