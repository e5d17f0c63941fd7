"""Did the agent tell the user what it had to? Two rules for required outputs.

`outputs_compat` is τ-bench's rule: the output, lower-cased, is a substring of
some agent reply with commas removed. It passes "10" inside "$100" and fails "20
hours" for "20 hrs". `outputs_strict` compares numbers as numbers (within a
tolerance, with or without thousands separators or a currency sign) and words on
word boundaries, so "10" is not found in "$100".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["missing_outputs", "outputs_compat", "outputs_strict"]

# A comma separates thousands only before exactly three digits, so "1,234,567" is one
# number and "10,20,30" is three.
_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\w)")


def outputs_compat(outputs: Sequence[str], replies: Sequence[str | None]) -> bool:
    """τ-bench's rule, as its loop runs it: each output is looked for in the replies in
    order, and a reply that is None (sent as JSON null) fails the check where it is
    reached, since ``None.lower()`` raises and τ-bench's run scores 0."""
    for output in outputs:
        wanted = output.lower()
        for reply in replies:
            if reply is None:
                return False
            if wanted in reply.lower().replace(",", ""):
                break
        else:
            return False
    return True


def _as_number(text: str) -> float | None:
    try:
        return float(text.replace("$", "").replace(",", ""))
    except ValueError:
        return None


def _found_strict(output: str, reply: str, tolerance: float) -> bool:
    target = _as_number(output.strip())
    if target is not None:
        return any(
            (value := _as_number(match.group())) is not None and abs(value - target) <= tolerance
            for match in _NUMBER.finditer(reply)
        )
    pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, output.lower().split())) + r"(?!\w)"
    return re.search(pattern, reply.lower()) is not None


def missing_outputs(
    outputs: Sequence[str], replies: Sequence[str], tolerance: float = 0.005
) -> list[str]:
    """The outputs no reply states, under the strict rule."""
    return [o for o in outputs if not any(_found_strict(o, r, tolerance) for r in replies)]


def outputs_strict(
    outputs: Sequence[str], replies: Sequence[str], tolerance: float = 0.005
) -> bool:
    return not missing_outputs(outputs, replies, tolerance)
