"""Every figure `report` and `compare` printed before issue 40 (reading every stored
summary, the exact tests by whole convolutions) is printed now (reading each run's kinds of
episode and two integers per episode, the exact tests from the tails alone), on a store of
a few thousand episodes: the tables and CSV to the byte, the JSON to the last bit but for
the exact p-values (chance tests', McNemar's), which are within 1e-12 of the old ones."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.reports._before_40 import REPORTS, build, report

pytestmark = pytest.mark.slow  # three runs of the CLI made for each worker

DATA = Path(__file__).parent / "data"
EXACT_P = {"p_below", "p_above", "p_value"}  # of the exact tests only: the bootstrap's are equal


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three runs of the CLI and some rewritten records: about 4 s on the idle 2-core machine,
    shared by every test here."""
    path = tmp_path_factory.mktemp("before-40") / "runs.db"
    build(path)
    return path


def same(old: Any, new: Any, path: str = "") -> None:
    if isinstance(old, dict):
        assert isinstance(new, dict) and list(old) == list(new), path
        for key in old:
            same(old[key], new[key], f"{path}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(old) == len(new), path
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            same(a, b, f"{path}[{i}]")
    elif path.endswith((".run.format", ".run.created_at", ".run.deedbench_version")):
        pass
    elif isinstance(old, float) and path.rsplit(".", 1)[-1] in EXACT_P:
        assert math.isclose(old, new, rel_tol=1e-12), (path, old, new)
    else:
        assert old == new, (path, old, new)


@pytest.mark.parametrize("command", REPORTS)
def test_what_was_printed_is_printed(store: Path, command: str) -> None:
    before = DATA / ("before-40-" + command.replace(" --", "-").replace(" ", "-") + ".txt")
    old, new = before.read_text(), report(store, command)
    if command.endswith("--json"):
        same(json.loads(old), json.loads(new))
    elif command.endswith("--csv"):
        old_rows = list(csv.DictReader(io.StringIO(old)))
        new_rows = list(csv.DictReader(io.StringIO(new)))
        assert len(old_rows) == len(new_rows)
        for a, b in zip(old_rows, new_rows, strict=True):
            assert list(a) == list(b)
            for key in a:
                if key.startswith(("chance_p_", "p_")) and a[key] and "cluster" not in key:
                    assert math.isclose(float(a[key]), float(b[key]), rel_tol=1e-12), key
                else:
                    assert a[key] == b[key], key
    else:
        assert new == old
