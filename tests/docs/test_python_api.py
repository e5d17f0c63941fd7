"""docs/python-api.md runs as written: its script and its study file, in a fresh
interpreter in an empty folder, twice (the second time resumes and adds nothing)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from deedbench.engine import RunStore

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def test_the_python_api_script_runs_a_run_a_launch_on_workers_and_a_study(tmp_path: Path) -> None:
    api = PAGE.read_text(encoding="utf-8")
    [script] = re.findall(r"```python\n(.*?)```", api, re.S)
    [study] = re.findall(r"```toml\n(.*?)```", api, re.S)
    (tmp_path / "demo.py").write_text(script)
    (tmp_path / "study.toml").write_text(study)
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "demo.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
    with RunStore(tmp_path / "demo.db") as store:
        runs = {run_id: store.count(run_id) for run_id in store.run_ids()}
    assert runs == {
        "demo": {"scored": 96},  # 48 samples x 2 conditions, once
        "refuse": {"scored": 96},
        "demo-study-tac-random": {"scored": 8},
        "demo-study-tac-welfare": {"scored": 8},
    }
    assert "episodes started: 0" in done.stdout  # the second time, the study had run
