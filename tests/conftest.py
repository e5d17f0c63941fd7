"""Shared test settings: property tests are derandomized so CI runs are repeatable, and
tests marked `realmodel` (a real model server, minutes per run) run only when asked."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("deedbench", derandomize=True, deadline=None)
settings.load_profile("deedbench")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--differential",
        type=int,
        default=None,
        metavar="N",
        help="τ-bench differential tests: N generated call sequences and conversations per "
        "domain instead of the default few hundred",
    )
    parser.addoption(
        "--realmodel",
        action="store_true",
        help="run the tests against a real model server (tests/cli/test_realmodel.py)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--realmodel") or os.environ.get("DEEDBENCH_REALMODEL_URL"):
        return
    skip = pytest.mark.skip(reason="a real model server: pass --realmodel (see the README)")
    for item in items:
        if "realmodel" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh working folder that is not on `sys.path`, as under the `deedbench` console
    script (whose bin folder comes first instead): `sys.path` is restored afterwards."""
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(folder))])
    return folder
