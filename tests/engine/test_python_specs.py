"""``python/MODULE:ATTR`` imports from the working folder, as ``python -m`` would."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from deedbench.engine.python_specs import import_target, use_working_folder


def test_a_module_in_the_working_folder_imports_without_pythonpath(working_folder: Path) -> None:
    (working_folder / "deedbench_here_a.py").write_text("answer = 42\n")
    assert import_target("deedbench_here_a:answer") == 42
    assert sys.path[0] == str(working_folder)  # first, as python -m puts it


def test_the_folder_is_added_once(working_folder: Path) -> None:
    use_working_folder()
    use_working_folder()
    assert sys.path.count(str(working_folder)) == 1


def test_what_cannot_be_found_is_pythons_own_error(working_folder: Path) -> None:
    (working_folder / "deedbench_here_b.py").write_text("answer = 42\n")
    with pytest.raises(ModuleNotFoundError, match="deedbench_nowhere"):
        import_target("deedbench_nowhere:x")
    with pytest.raises(AttributeError, match="missing"):
        import_target("deedbench_here_b:missing")
