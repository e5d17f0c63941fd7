"""The documentation as the tests read it: its pages, their code blocks and their prose."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"

# A block's marker, the HTML comment right before its opening fence.
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<reason>.*?)\s*-->", re.S)
RUN_BY = re.compile(r"<!--\s*run by\s+(?P<path>\S+)\s*-->")
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^"]+)"$', re.M)
_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int  # of the opening fence, counting from 1
    lang: str
    code: str
    marker: str  # the comment right before the fence, or ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def not_run(self) -> str | None:
        """The reason given for not running the block, if it says it is not run."""
        found = NOT_RUN.fullmatch(self.marker)
        return found.group("reason") if found else None

    @property
    def run_by(self) -> str | None:
        """The test file that runs the block, if the marker names one."""
        found = RUN_BY.fullmatch(self.marker)
        return found.group("path") if found else None


def pages() -> list[Path]:
    """The README and every page of the site."""
    return [README, *sorted(DOCS.glob("*.md"))]


def blocks(page: Path) -> list[Block]:
    """Every fenced block of `page`, in order."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent = opening.group("indent")
        end = next(
            j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"
            and lines[j].startswith(indent)
        )  # fmt: skip
        code = "\n".join(line.removeprefix(indent) for line in lines[i + 1 : end]) + "\n"
        before = [line.strip() for line in lines[:i] if line.strip()]
        marker = before[-1] if before and before[-1].startswith("<!--") else ""
        found.append(Block(page, i + 1, opening.group("lang"), code, marker))
        i = end + 1
    return found


def prose(page: Path) -> str:
    """The page without its code blocks, HTML comments and snippet lines."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^ *```.*?^ *```[ \t]*$", "", text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    return SNIPPET.sub("", text)


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')]?\s+(?=[A-Z`\"'(\[*0-9τ])")


def sentences(text: str) -> list[str]:
    """The sentences of some prose: each heading, list item and table cell stands alone,
    and within one a sentence ends at `.`, `!` or `?` before a capital, a number or code."""
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        for item in re.split(r"\n\s*(?=[-*] |\d+\. |#|\|)", paragraph):
            item = re.sub(r"^\s*(?:[-*]|\d+\.|#+)\s+", "", item)  # a list or heading mark
            for cell in item.split("|") if item.lstrip().startswith("|") else [item]:
                pieces.extend(_SENTENCE_END.split(" ".join(cell.split())))
    return [p for p in pieces if p.strip()]


def words(sentence: str) -> int:
    """Words in a sentence; a code span counts as one."""
    return len(re.sub(r"`[^`]*`", "code", sentence).split())
