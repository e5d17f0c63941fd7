"""Validate leaderboard submission folders with τ²'s own validator, for the export tests.

This script runs in τ²'s Python (3.12, τ²'s packages, its source on the path; see
`_reference.py`), never in deedbench's. It reads a JSON list of submission folders
and writes, for each, what τ²'s leaderboard code made of it, as JSON:

    [{"loaded": [ok, error], "submission": <Submission.model_dump(mode="json")>,
      "traj_set": [ok, error],
      "files": {name: {"format": [ok, error], "tasks": [...], "trials": [...]}},
      "metrics": "<what validate_submission_metrics printed>",
      "computed": {domain: <DomainResults as get_metrics computes it>}}]

The steps are τ²'s ``validate_submission`` (prepare_submission.py): its
``check_and_load_submission_data`` (which validates submission.json with its
``Submission`` model), ``validate_submission_traj_set``, then per trajectory file
``check_format``, ``check_tasks`` and ``check_num_trials`` (verify_trajectories_public.py,
what its public ``verify_trajectories`` runs), then ``validate_submission_metrics``
with its console captured.

Usage: python submission_driver.py FOLDERS.json OUT.json
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

from loguru import logger

logger.remove()
from rich.console import Console  # noqa: E402
from tau2.scripts.leaderboard.prepare_submission import (  # noqa: E402
    check_and_load_submission_data,
    get_metrics,
    validate_submission_metrics,
    validate_submission_traj_set,
)
from tau2.scripts.leaderboard.verify_trajectories_public import (  # noqa: E402
    check_format,
    check_num_trials,
    check_tasks,
)


def validate(folder: str) -> dict[str, Any]:
    loaded, error, data = check_and_load_submission_data(folder)
    found: dict[str, Any] = {"loaded": [loaded, error]}
    if not loaded:
        return found
    found["submission"] = data.submission.model_dump(mode="json")
    found["traj_set"] = list(validate_submission_traj_set(data.results))
    files: dict[str, Any] = {}
    for path in data.trajectory_files:
        results, ok, problem = check_format(path)
        checked: dict[str, Any] = {"format": [ok, problem]}
        if results is not None:
            checked["tasks"] = list(check_tasks(results))
            checked["trials"] = list(check_num_trials(results))
        files[Path(path).name] = checked
    found["files"] = files
    out = io.StringIO()
    console = Console(file=out, width=400, color_system=None, force_terminal=False)
    validate_submission_metrics(data.submission, data.results, console)
    found["metrics"] = out.getvalue()
    _, computed, _, _ = get_metrics(data.results)
    found["computed"] = {d: r.model_dump(mode="json") for d, r in computed.items()}
    return found


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    folders = json.loads(Path(source).read_text(encoding="utf-8"))
    found = [validate(folder) for folder in folders]
    Path(target).write_text(json.dumps(found), encoding="utf-8")


if __name__ == "__main__":
    main()
