"""The CLI's tests read its tables at a wide terminal, one table per figure (piped output
is $COLUMNS wide, else 80; tests/cli/test_widths.py reads every table at 80 to 200)."""

from __future__ import annotations

import pytest
from tests.cli.summaries import PrintedSummaries, spy_on_summaries

from deedbench.cli.app import console


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # for the commands run as processes
    monkeypatch.setattr(console, "width", 200)  # the one console, whatever its import saw


@pytest.fixture
def printed_summaries(monkeypatch: pytest.MonkeyPatch) -> PrintedSummaries:
    """What `run` prints its closing tables from, and the runs it reads back from a store."""
    return spy_on_summaries(monkeypatch)
