"""Without the `inspect` extra deedbench works, and asking for Inspect says how to get it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_without_inspect_deedbench_runs_and_import_names_the_extra(tmp_path: Path) -> None:
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["inspect_ai"] = None  # as if it were not installed
        from typer.testing import CliRunner
        from deedbench.cli.main import app
        listed = CliRunner().invoke(app, ["list"])
        assert listed.exit_code == 0, listed.output
        result = CliRunner().invoke(app, ["import", "inspect", {str(log)!r}])
        print(result.exit_code)
        print(" ".join(result.output.split()))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    code, message = done.stdout.splitlines()
    assert code == "2"
    assert "Inspect AI is not installed; install it with: pip install 'deedbench[inspect]'" in (
        message
    )
