"""Text from data made safe for a terminal: controls shown as escapes, secrets redacted."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from deedbench import secrets as secrets_module
from deedbench.printable import printable, safe
from deedbench.secrets import register_secret

HOSTILE = {
    "\x1b[2J": "\\x1b[2J",  # clear the screen
    "\x1b[8mhidden": "\\x1b[8mhidden",  # hidden text
    "\x1b]0;title\x07": "\\x1b]0;title\\x07",  # window title
    "\x1b]8;;http://x\x1b\\": "\\x1b]8;;http://x\\x1b\\",  # a hyperlink
    "\x9b2J": "\\x9b2J",  # the one-byte C1 control sequence introducer
    "a\rb": "a\\x0db",  # carriage return overwrites the line
    "\u202eabc": "\\u202eabc",  # right-to-left override
    "\x00\x7f": "\\x00\\x7f",
}


@pytest.mark.parametrize(("text", "shown"), HOSTILE.items())
def test_control_characters_are_shown_as_escapes(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_newlines_tabs_and_ordinary_unicode_stay() -> None:
    text = "line one\n\tline two — café, 東京, ★"
    assert printable(text) == text


@given(st.text())
def test_nothing_a_terminal_obeys_survives(text: str) -> None:
    shown = printable(text)
    assert not any((ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F for c in shown)


def test_registered_secrets_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets_module, "_SECRETS", set())
    register_secret("sk-printable-secret-000")
    assert printable("key sk-printable-secret-000\x1b") == "key [REDACTED]\\x1b"


@pytest.mark.parametrize("data", ["[bold red]x[/]", "x[/]", "[link=http://x]y[/link]"])
def test_safe_data_is_never_markup(data: str) -> None:
    console = Console(record=True, width=80)
    console.print(f"[bold]run[/bold] {safe(data)}")
    assert console.export_text().strip() == f"run {data}"
    Text.from_markup(safe(data))  # and it never fails to parse
