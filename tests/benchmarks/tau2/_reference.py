"""τ²'s own code (../shared/tau2/src, tag v1.0.1), run beside deedbench.

τ² needs Python 3.12 and packages deedbench does not depend on, so it runs in a
virtual environment of its own, made once per machine (``$DEEDBENCH_TAU2_VENV``,
else ``~/.cache/deedbench/tau2-reference``) from ../shared/tau2/offline's list,
with the import-only stand-ins for litellm and openai on its path: no model is
ever called. `evaluate` hands it cases and reads back what τ² made of them
(`reference_driver.py`). `missing()` says why it cannot run here, for a skip
that prints its reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

# tests/benchmarks/tau2/<this file>: parents[3] is the checkout, its parent holds `shared`.
TAU2 = Path(__file__).resolve().parents[3].parent / "shared" / "tau2"
SOURCE = TAU2 / "src" / "src"
DATA = TAU2 / "data"
DRIVER = Path(__file__).with_name("reference_driver.py")
VENV = Path(
    os.environ.get("DEEDBENCH_TAU2_VENV", Path.home() / ".cache" / "deedbench" / "tau2-reference")
)


def domain_data(domain: str) -> Path:
    return DATA / "tau2" / "domains" / domain


def _python312() -> str | None:
    for candidate in ("python3.12",):
        found = shutil.which(candidate)
        if found is None:
            continue
        env = {**os.environ, "PYENV_VERSION": os.environ.get("PYENV_VERSION", "3.12.1")}
        probe = subprocess.run(
            [found, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
            capture_output=True,
            text=True,
            env=env,
        )
        if probe.stdout.strip() == "True":
            return found
    return None


@cache
def missing() -> str | None:
    """Why τ²'s evaluator cannot run here (None: it can)."""
    if not (SOURCE / "tau2" / "evaluator" / "evaluator.py").is_file():
        return f"τ²'s source is not at {SOURCE}"
    if not (DATA / "tau2" / "domains" / "airline" / "db.json").is_file():
        return f"τ²'s data is not at {DATA}"
    if _python312() is None:
        return "no Python 3.12 (τ² needs it; pyenv's python3.12 with PYENV_VERSION=3.12.1)"
    try:
        _venv()
    except subprocess.CalledProcessError as exc:
        return f"τ²'s reference environment could not be made: {exc}"
    return None


LOCKED = ("pandas==2.3.3",)
"""τ²'s own lock (``uv.lock``) where the offline list differs: under pandas 3, τ²'s
``get_metrics_df`` no longer leaves infrastructure errors out of pass^k (it compares a
column of enum names with the enum), which its leaderboard, run on its lock, does."""


@cache
def _venv() -> Path:
    python = VENV / "bin" / "python"
    stamp = VENV / ".deedbench-ready"
    requirements = TAU2 / "offline" / "requirements-offline.txt"
    wanted = requirements.read_text(encoding="utf-8") + "\n".join(LOCKED)
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    maker = _python312()
    assert maker is not None
    env = {**os.environ, "PYENV_VERSION": os.environ.get("PYENV_VERSION", "3.12.1")}
    subprocess.run([maker, "-m", "venv", "--clear", str(VENV)], check=True, env=env)
    for wants in (["-r", str(requirements)], list(LOCKED)):  # the lock's over the list's
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *wants], check=True, capture_output=True
        )
    stamp.write_text(wanted, encoding="utf-8")
    return python


def evaluate(
    domain: str, cases: list[dict[str, Any]], env_kwargs: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """What τ² makes of each case (see `reference_driver.py`), in order."""
    found: list[dict[str, Any]] = _drive(domain, cases, env_kwargs, None)
    return found


def results_file(
    domain: str,
    cases: list[dict[str, Any]],
    results: dict[str, Any],
    env_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The cases evaluated by τ², saved as a τ² result file (`results`: its path, format,
    trials, ...; see `reference_driver.py`) and re-graded by τ²'s own re-grader."""
    found: dict[str, Any] = _drive(domain, cases, env_kwargs, results)
    return found


def run_script(script: Path, *args: str) -> None:
    """Run one of deedbench's scripts written for τ²'s own Python (the bench's generators),
    with τ²'s source, data and offline stand-ins, as the driver runs."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{SOURCE}{os.pathsep}{TAU2 / 'offline' / 'stubs'}",
        "TAU2_DATA_DIR": str(DATA),
    }
    subprocess.run([str(_venv()), str(script), *args], check=True, env=env)


def _drive(
    domain: str,
    cases: list[dict[str, Any]],
    env_kwargs: dict[str, Any] | None,
    results: dict[str, Any] | None,
) -> Any:
    spec: dict[str, Any] = {"domain": domain, "env_kwargs": env_kwargs or {}, "cases": cases}
    if results is not None:
        spec["results"] = results
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "cases.json", Path(folder) / "out.json"
        source.write_text(json.dumps(spec), encoding="utf-8")
        env = {
            **os.environ,
            "PYTHONPATH": f"{SOURCE}{os.pathsep}{TAU2 / 'offline' / 'stubs'}",
            "TAU2_DATA_DIR": str(DATA),
        }
        subprocess.run(
            [str(_venv()), str(DRIVER), str(source), str(target)],
            check=True,
            env=env,
            cwd=folder,
        )
        return json.loads(target.read_text(encoding="utf-8"))
