"""One episode in the terminal: every message, tool calls set apart, the evidence marked.

The calls and messages a score's evidence points at are flagged where they occur, so
the reader sees the deciding call in its context rather than in a separate list.
Everything from the transcript is printed as text, never as rich markup, and with its
control characters shown as visible escapes (`printable`).

A long system prompt (τ²'s: its instructions and the whole policy, some 200 lines) is
folded to its first lines, so the conversation starts on the first screen; `full_system`
shows it whole. The heading lines wrap only between a label and its value's pairs
("ended agent_finished" stays on one line).
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.text import Text

from deedbench.printable import printable
from deedbench.records import EpisodeRecord, Message
from deedbench.reports.tables import KEEP, say

__all__ = ["SYSTEM_LINES", "render_episode"]

_STYLES = {"system": "dim", "user": "cyan", "assistant": "green", "tool": "yellow"}
SYSTEM_LINES = 12
"""A system prompt of more lines is folded to its first `SYSTEM_LINES` (unless shown whole)."""


def render_episode(
    record: EpisodeRecord,
    console: Console,
    *,
    full_tools: bool = False,
    full_system: bool = False,
) -> None:
    """Print the episode; tool outputs are cut at 600 characters unless `full_tools`, a
    system prompt at `SYSTEM_LINES` lines unless `full_system`."""
    evidence = record.score.evidence if record.score else []
    deciding_calls = {e.tool_call_id for e in evidence if e.tool_call_id}
    cited_messages = {e.message_index for e in evidence if e.message_index is not None}
    score = record.score
    pairs = [
        ("condition", record.condition),
        ("epoch", record.epoch),
        ("seed", record.seed),
        ("status", record.status),
        ("ended", record.termination),
        ("steps", record.steps),
    ]
    head = "  ".join([record.sample_id, *(f"{k}{KEEP}{v}" for k, v in pairs)])
    say(console, head, style="bold")
    if score is not None:
        values = ", ".join(f"{k}{KEEP}{v:g}" for k, v in sorted(score.values.items()))
        say(console, f"outcome{KEEP}{score.outcome}: {values}")
    if record.error:
        say(console, f"error: {record.error}", style="red")
    for index, message in enumerate(record.messages):
        if message.role == "system" and not full_system:
            message = _folded(message)
        console.print(_panel(index, message, deciding_calls, index in cited_messages, full_tools))
    for item in evidence:
        where = []
        if item.message_index is not None:
            where.append(f"message {item.message_index}")
        if item.tool_call_id:
            where.append(f"call {item.tool_call_id}")
        line = Text("evidence", style="bold magenta")
        line.append(printable(f" [{item.rule or 'verdict'}] "))
        line.append(printable(", ".join(where) + ": " if where else ""))
        line.append(printable(item.excerpt))
        console.print(line)


def _folded(message: Message) -> Message:
    """A system prompt of more than `SYSTEM_LINES` lines, cut to them with a line saying
    how many more there are and how to see them."""
    lines = message.content.splitlines()
    if len(lines) <= SYSTEM_LINES:
        return message
    more = len(lines) - SYSTEM_LINES
    kept = "\n".join(lines[:SYSTEM_LINES])
    note = f"\n… {more} more lines of the system prompt (show --full shows them)"
    return message.model_copy(update={"content": kept + note})


def _panel(
    index: int, message: Message, deciding: set[str], cited: bool, full_tools: bool
) -> Panel:
    body = Text()
    if message.reasoning:
        body.append("reasoning: ", style="italic dim")
        body.append(printable(message.reasoning) + "\n", style="dim")
    content = message.content
    if message.role == "tool" and not full_tools and len(content) > 600:
        content = content[:600] + f" ... ({len(message.content) - 600} more characters)"
    body.append(printable(content))
    for number, call in enumerate(message.tool_calls):
        marked = call.id in deciding
        if content or number:
            body.append("\n")
        body.append("★ deciding call " if marked else "→ ", style="bold magenta" if marked else "")
        style = "bold reverse" if marked else "bold"
        body.append(printable(f"{call.name}({call.arguments})"), style=style)
        body.append(printable(f"  id {call.id}"), style="dim")
    for call in message.dropped_tool_calls:
        body.append("\n✗ not run (the benchmark runs a turn's first call only): ", style="dim")
        body.append(printable(f"{call.name}({call.arguments})"), style="dim")
        body.append(printable(f"  id {call.id}"), style="dim")
    title = f"{index} {message.role}"
    if message.role == "tool":
        title += f" ← {message.tool_name or '?'}" + (" (error)" if message.error else "")
    if cited:
        title += " ★ cited"
    return Panel(
        body,
        title=escape(printable(title)),
        title_align="left",
        border_style="magenta" if cited else _STYLES[message.role],
    )
