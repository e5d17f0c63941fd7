"""Text from data, made safe to print on a terminal.

Model replies, scenario text, tool outputs and run ids can carry escape sequences
that a terminal obeys (clear the screen, hide text, set the window title, plant a
hyperlink) and bidirectional overrides that reorder what is shown. `printable` shows
each such character as a visible escape (ESC as ``\\x1b``) and redacts registered
secrets; newlines and tabs stay as they are. `safe` does the same for text that goes
into rich markup, where data must never be read as markup (``[bold]``, ``[/]``).
"""

from __future__ import annotations

import re

from rich.markup import escape

from deedbench.secrets import redact

__all__ = ["printable", "safe"]

# C0 controls but tab and newline, DEL, C1 controls, and the bidi embeddings, overrides
# and isolates (U+202A-U+202E, U+2066-U+2069).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with control characters shown as escapes and secrets redacted."""
    return redact(_UNSAFE.sub(_visible, text))


def safe(value: object) -> str:
    """`value` as rich markup that shows it as it is: `printable`, and markup escaped."""
    return escape(printable(str(value)))
