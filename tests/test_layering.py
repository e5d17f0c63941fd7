"""The layering table of docs/architecture.md, enforced on the code's imports.

Every import of deedbench in src/deedbench (at module level, inside functions, under
TYPE_CHECKING) is an edge from the importing unit to the imported one. A unit is a
top-level package or module of deedbench (`deedbench.engine`, `deedbench.errors`, ...);
`from deedbench import errors` is an edge to `errors`, and an import of a name of the face
(`from deedbench import run`) an edge to the face, `deedbench`. The edges must be allowed
by the table's last column, every unit must have a row, and the units must not import
each other in a circle.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "deedbench"
DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
ANYTHING = "anything"


def units() -> set[str]:
    """deedbench's top-level packages and modules, by short name (`engine`, `errors`)."""
    found = {"deedbench"}
    for path in SRC.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(path.name)
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(path.stem)
    return found


def allowed() -> dict[str, set[str] | None]:
    """The table's rows: unit -> the units it may import (None: anything)."""
    rows: dict[str, set[str] | None] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `deedbench(?:\.(\w+))?` \|.*\| ([^|]*) \|$", line)
        if not match:
            continue
        unit, rule = match.group(1) or "deedbench", match.group(2).strip()
        rows[unit] = None if rule == ANYTHING else set(re.findall(r"`(\w+)`", rule))
    return rows


def unit_of(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return "deedbench" if parts == ("__init__",) else parts[0]


def imports(path: Path, known: set[str]) -> Iterator[tuple[int, str]]:
    """(line, imported unit) for each import of deedbench in the file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "deedbench":  # from deedbench import errors / a name of the face
                names = [f"deedbench.{alias.name}" for alias in node.names]
            else:
                names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] != "deedbench":
                continue
            target = parts[1] if len(parts) > 1 and parts[1] in known else "deedbench"
            yield node.lineno, target


def edges() -> list[tuple[str, str, str]]:
    """(importing unit, imported unit, where) for every import across units."""
    known = units()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        source = unit_of(path)
        for line, target in imports(path, known):
            if target != source:
                found.append((source, target, f"{path.relative_to(SRC.parent)}:{line}"))
    return found


def test_the_table_has_a_row_for_every_unit_and_no_other() -> None:
    rows = allowed()
    assert set(rows) == units(), (
        f"rows without a unit: {sorted(set(rows) - units())}; "
        f"units without a row: {sorted(units() - set(rows))}"
    )
    for unit, may in rows.items():
        if may is not None:
            assert may <= units(), f"{unit} may import unknown units {sorted(may - units())}"


def test_every_import_is_allowed_by_the_table() -> None:
    rows = allowed()
    wrong = [
        f"{where}: deedbench.{source} imports deedbench.{target}"
        for source, target, where in edges()
        if rows.get(source) is not None and target not in rows[source]  # type: ignore[operator]
    ]
    assert wrong == [], "imports docs/architecture.md does not allow:\n" + "\n".join(wrong)


def test_the_units_import_each_other_in_no_circle() -> None:
    graph: dict[str, set[str]] = {unit: set() for unit in units()}
    for source, target, _ in edges():
        graph[source].add(target)
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle between units: {' -> '.join(exc.args[1])}")


def test_the_check_sees_function_level_imports(tmp_path: Path) -> None:
    """An import inside a function counts: the layering is about what code can reach."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from deedbench.engine.store import RunStore\n")
    assert list(imports(module, units())) == [(2, "engine")]
