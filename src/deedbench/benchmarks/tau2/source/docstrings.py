"""A docstring read as τ²'s tools read theirs: ``docstring_parser.parse`` (0.18), for the
docstrings τ² writes.

τ²'s ``Tool`` takes a tool's description (short, then long, joined by a blank line)
and each parameter's from ``docstring_parser.parse``, which tries four styles and
keeps the one that found the most entries. τ²'s docstrings are Google style; where
the Google reading finds no entry (or fails), the reStructuredText reading wins the
tie, which only differs where a line starts with ``:``. This module reproduces the
Google reading and that tie; a docstring whose reading would depend on the other
styles is refused (`SourceError`) rather than guessed.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

from deedbench.benchmarks.tau2.source.tree import SourceError

__all__ = ["ParsedDocstring", "parse_docstring"]

_SECTIONS = {
    "Arguments": "param",
    "Args": "param",
    "Parameters": "param",
    "Params": "param",
    "Raises": "raises",
    "Exceptions": "raises",
    "Except": "raises",
    "Attributes": "attribute",
    "Example": "examples",
    "Examples": "examples",
    "Returns": "returns",
    "Yields": "yields",
}
_SINGULAR = {"examples"}
_SINGULAR_OR_MULTIPLE = {"returns", "yields"}
_TITLES = re.compile("^(" + "|".join(f"({t})" for t in _SECTIONS) + "):[ \t\r\f\v]*$", flags=re.M)
_TYPED_ARG = re.compile(r"\s*(.+?)\s*\(\s*(.*[^\s]+)\s*\)")
_MULTIPLE = re.compile(r"(\s*[^:\s]+:)|([^:]*\]:.*)")
_OTHER_STYLES = re.compile(r"^[:@]|^\s*-{3,}\s*$", flags=re.M)


class _ParseError(Exception):
    pass


@dataclass
class ParsedDocstring:
    """What τ²'s ``Tool`` takes from a docstring."""

    short: str | None = None
    long: str | None = None
    params: dict[str, str | None] = field(default_factory=dict)
    """Each parameter's description, by name, in the order written."""
    entries: int = 0

    @property
    def description(self) -> str | None:
        """τ²'s ``Tool._get_description`` (None where τ² falls back to the tool's name)."""
        if not self.short:
            return None
        return self.short if not self.long else f"{self.short}\n\n{self.long}"


def _descriptions(text: str, cut: int | None) -> tuple[str | None, str | None]:
    chunk = text if cut is None else text[:cut]
    parts = chunk.split("\n", 1)
    short = parts[0] or None
    long = (parts[1] or "").strip() or None if len(parts) > 1 else None
    return short, long


def _entry(text: str, key: str, parsed: ParsedDocstring) -> None:
    if (key in _SINGULAR_OR_MULTIPLE and not _MULTIPLE.match(text)) or key in _SINGULAR:
        if key == "param":
            raise _ParseError("Expected paramenter name.")
        parsed.entries += 1
        return
    if ":" not in text:
        raise _ParseError(f"Expected a colon in {text!r}.")
    before, desc = text.split(":", 1)
    if before and "\n" in before:
        first, rest = before.split("\n", 1)
        before = first + inspect.cleandoc(rest)
    if desc:
        desc = desc[1:] if desc[0] == " " else desc
        if "\n" in desc:
            first, rest = desc.split("\n", 1)
            desc = first + "\n" + inspect.cleandoc(rest)
        desc = desc.strip("\n")
    parsed.entries += 1
    if key == "param":
        typed = _TYPED_ARG.match(before)
        name = typed.group(1) if typed else before
        parsed.params[name] = desc


def _google(text: str) -> ParsedDocstring:
    parsed = ParsedDocstring()
    first = _TITLES.search(text)
    parsed.short, parsed.long = _descriptions(text, first.start() if first else None)
    if first is None:
        return parsed
    meta = text[first.start() :]
    matches = list(_TITLES.finditer(meta))
    ends = [m.start() for m in matches[1:]] + [len(meta)]
    chunks: dict[str, str] = {}
    for match, end in zip(matches, ends, strict=True):
        details = meta[match.end() : end]
        unknown = re.search(r"\n\S", details)
        if unknown is not None:
            details = details[: unknown.start()]
        chunks[match.group(1)] = details.strip("\n")
    for title, chunk in chunks.items():
        key = _SECTIONS[title]
        indent = re.search(r"^\s*", chunk)
        assert indent is not None  # matches the empty string at least
        if key in _SINGULAR or key in _SINGULAR_OR_MULTIPLE:
            _entry(inspect.cleandoc(chunk), key, parsed)
            continue
        starts = list(re.finditer("^" + indent.group() + r"(?=\S)", chunk, flags=re.M))
        if not starts:
            raise _ParseError(f'No specification for "{title}": "{chunk}"')
        stops = [m.start() for m in starts[1:]] + [len(chunk)]
        for start, stop in zip(starts, stops, strict=True):
            _entry(chunk[start.end() : stop].strip("\n"), key, parsed)
    return parsed


def parse_docstring(doc: str | None, where: str) -> ParsedDocstring:
    """`doc` (a function's ``__doc__``, uncleaned) as ``docstring_parser.parse`` reads it;
    `where` names it in a `SourceError`."""
    if not doc:
        return ParsedDocstring()
    text = inspect.cleandoc(doc)
    try:
        parsed = _google(text)
    except _ParseError:
        parsed = ParsedDocstring(entries=0)
    if parsed.entries:
        return parsed
    if _OTHER_STYLES.search(text):
        raise SourceError(f"{where}: a docstring in a style deedbench does not read")
    short, long = _descriptions(text, None)
    return ParsedDocstring(short, long)
