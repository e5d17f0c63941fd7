"""τ²'s own code (../shared/tau2/src, tag v1.0.1), run beside deedbench.

τ² needs Python 3.12 and packages deedbench does not depend on, so it runs in a
virtual environment of its own, made once per machine (``$DEEDBENCH_TAU2_VENV``,
else ``~/.cache/deedbench/tau2-reference``) from ../shared/tau2/offline's list,
with the import-only stand-ins for litellm and openai on its path: no model is
ever called. `evaluate` hands it cases and reads back what τ² made of them
(`reference_driver.py`); `run_script` runs any script there the same way.

What τ² makes of a case is kept on disk (`_shared.cached`), keyed by the content hash
of τ²'s source, its data, the stand-ins, the package list, the script and the case:
a second run of the tests, on any worker, reads it instead of running τ² again, and a
change to any of them runs τ² again. The environment is made only when an answer is
not kept, under a lock, so two test workers never race to make it: the second waits.
Tests that need it are marked ``reference("tau2")`` (`_shared.check` fails them where
../shared is present but τ² cannot run, and skips them where ../shared is absent).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import _shared

TAU2 = _shared.TAU2
SOURCE = TAU2 / "src" / "src"
DATA = TAU2 / "data"
STUBS = TAU2 / "offline" / "stubs"
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


def missing() -> str | None:
    """Why τ²'s code and data are not here (None: they are). Whether τ²'s Python can be
    made is found out only when an answer is not kept, and fails that test if not."""
    return _shared.missing("tau2")


LOCKED = ("pandas==2.3.3",)
"""τ²'s own lock (``uv.lock``) where the offline list differs: under pandas 3, τ²'s
``get_metrics_df`` no longer leaves infrastructure errors out of pass^k (it compares a
column of enum names with the enum), which its leaderboard, run on its lock, does."""

REQUIREMENTS = TAU2 / "offline" / "requirements-offline.txt"


@cache
def _venv() -> Path:
    """τ²'s Python, its environment made first if need be (`_shared.made_once`: under a
    lock, so a second test worker waits for the first one's environment)."""
    python = VENV / "bin" / "python"
    wanted = REQUIREMENTS.read_text(encoding="utf-8") + "\n".join(LOCKED)

    def make() -> None:
        maker = _python312()
        if maker is None:
            raise RuntimeError(
                "τ²'s reference needs Python 3.12 (pyenv's python3.12 with PYENV_VERSION=3.12.1)"
            )
        env = {**os.environ, "PYENV_VERSION": os.environ.get("PYENV_VERSION", "3.12.1")}
        subprocess.run([maker, "-m", "venv", "--clear", str(VENV)], check=True, env=env)
        for wants in (["-r", str(REQUIREMENTS)], list(LOCKED)):  # the lock's over the list's
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", *wants],
                check=True,
                capture_output=True,
            )

    _shared.made_once(VENV, wanted, make)
    return python


@cache
def fingerprint() -> str:
    """The content hash of everything τ²'s answers depend on but the script and the case:
    τ²'s source, its data, the stand-ins and the package list."""
    digest = hashlib.sha256(_shared.tree_hash([SOURCE, DATA, STUBS, REQUIREMENTS]).encode())
    digest.update("\n".join(LOCKED).encode())
    return digest.hexdigest()


def run_script(
    script: Path | str, spec: Any, files: Path | None = None, inputs: tuple[Path, ...] = ()
) -> Any:
    """What `script` (a file, or a script's text) writes when run in τ²'s Python as
    ``python SCRIPT SPEC.json OUT.json``, with τ²'s source and the stand-ins on its path
    and τ²'s data folder set: read from the cache when kept.

    `files`: a file or folder the script writes (named in `spec`), kept and written again
    with the answer. `inputs`: files or folders the script reads (named in `spec`), which
    count by their content. Neither counts by where it is: their paths are placeholders
    in the key and in the kept answer."""
    text = script.read_text(encoding="utf-8") if isinstance(script, Path) else script
    places = {"<FILES>": files} if files is not None else {}
    places.update({f"<INPUT {n}>": path for n, path in enumerate(inputs)})
    key = {
        "script": hashlib.sha256(text.encode()).hexdigest(),
        "spec": json.loads(_to_places(json.dumps(spec), places)),
        "inputs": [_shared.tree_hash([path]) for path in inputs],
    }

    def compute() -> Any:
        return json.loads(_to_places(json.dumps(_run(text, spec)), places))

    kept = _shared.cached("tau2", fingerprint(), key, compute, files)
    return json.loads(_from_places(json.dumps(kept), places))


def _to_places(text: str, places: dict[str, Path]) -> str:
    for place, path in places.items():
        text = text.replace(json.dumps(str(path))[1:-1], place)
    return text


def _from_places(text: str, places: dict[str, Path]) -> str:
    for place, path in places.items():
        text = text.replace(place, json.dumps(str(path))[1:-1])
    return text


def _run(script: str, spec: Any) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "script.py"
        source, target = Path(folder) / "spec.json", Path(folder) / "out.json"
        path.write_text(script, encoding="utf-8")
        source.write_text(json.dumps(spec), encoding="utf-8")
        env = {
            **os.environ,
            "PYTHONPATH": f"{SOURCE}{os.pathsep}{STUBS}",
            "TAU2_DATA_DIR": str(DATA),
        }
        subprocess.run(
            [str(_venv()), str(path), str(source), str(target)], check=True, env=env, cwd=folder
        )
        return json.loads(target.read_text(encoding="utf-8"))


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


def shown(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What τ²'s own code shows its models for each task of each run (``{"domain",
    "tasks", "solo", "retrieval"}``; see `reference_driver.py`'s ``shown`` mode), and
    its NL judge's prompt, in one run of τ²'s Python."""
    found: dict[str, Any] = run_script(DRIVER, {"shown": runs})
    return found


def run_program(script: Path, *args: str) -> None:
    """Run one of deedbench's scripts written for τ²'s own Python (the bench's generators),
    with τ²'s source, data and offline stand-ins, as the driver runs."""
    env = {
        **os.environ,
        "PYTHONPATH": f"{SOURCE}{os.pathsep}{STUBS}",
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
    files = None
    if results is not None:
        spec["results"] = results
        files = Path(results["path"])
        if results.get("format") == "dir":  # τ² writes simulations/ beside the metadata
            files = files.parent
    return run_script(DRIVER, spec, files)
