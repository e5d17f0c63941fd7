"""docs/environment.md's Python examples run as written, each in a fresh interpreter in an
empty folder, with τ²'s data from ../shared through $TAU2_DATA_DIR."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ._replay import TAU2

DOC = Path(__file__).resolve().parents[2] / "docs" / "environment.md"
BLOCKS = re.findall(r"(<!-- not run: [^>]*-->\n)?```(\w+)\n(.*?)```", DOC.read_text(), re.S)


def test_every_block_runs_or_says_why_not() -> None:
    """Python blocks run below unless they say why not; the tmux block runs in
    tests/cli/test_play.py; any other says why it is not run."""
    for why, lang, code in BLOCKS:
        assert lang in ("python", "bash")
        assert lang == "python" or why or "tmux new-session" in code, code


# Each example runs in a fresh interpreter (1-2 s to start and import) and most load a
# benchmark's data: 2-7 s each on the shared 2-core machine.
@pytest.mark.parametrize("n", [i for i, b in enumerate(BLOCKS) if b[1] == "python" and not b[0]])
def test_the_python_examples_run(tmp_path: Path, n: int) -> None:
    (tmp_path / "example.py").write_text(BLOCKS[n][2])
    env = {**os.environ, "TAU2_DATA_DIR": str(TAU2 / "data")}
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
