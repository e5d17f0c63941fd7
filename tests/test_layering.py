"""The layering table of docs/architecture.md, enforced on the code's imports.

Every import of deedbench in src/deedbench (at module level, inside functions, under
TYPE_CHECKING) is an edge from the importing unit to the imported one. A unit is a
top-level package or module of deedbench (`deedbench.engine`, `deedbench.errors`, ...);
`from deedbench import errors` is an edge to `errors`, and an import of a name of the face
(`from deedbench import run`) an edge to the face, `deedbench`. The edges must be allowed
by the table's last column, every unit must have a row, and the units must not import
each other in a circle.

Inside `benchmarks`, each folder is a unit too (`deedbench.benchmarks.servicedesk`), with a
row whose last column names the other folders it may import: the desk knows no domain, TAC
no desk. Beyond its folder a folder's imports are the `benchmarks` row's to allow, and an
import of any folder from outside is an edge to `benchmarks`.
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
FOLDERS = "benchmarks"  # the unit whose folders are units of their own


def units() -> set[str]:
    """deedbench's top-level packages and modules, by short name (`engine`, `errors`)."""
    found = {"deedbench"}
    for path in SRC.iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(path.name)
        elif path.suffix == ".py" and path.name != "__init__.py":
            found.add(path.stem)
    return found


def folders() -> set[str]:
    """The folders of `benchmarks` as units (`benchmarks.tac`)."""
    root = SRC / FOLDERS
    return {
        f"{FOLDERS}.{path.name}"
        for path in root.iterdir()
        if path.is_dir() and (path / "__init__.py").exists()
    }


def allowed() -> dict[str, set[str] | None]:
    """The table's rows: unit -> the units it may import (None: anything); a folder of
    `benchmarks` -> the other folders it may import (`benchmarks.servicedesk`)."""
    rows: dict[str, set[str] | None] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `deedbench(?:\.([\w.]+))?` \|.*\| ([^|]*) \|$", line)
        if not match:
            continue
        unit, rule = match.group(1) or "deedbench", match.group(2).strip()
        names = set(re.findall(r"`(\w+)`", rule))
        if unit.startswith(f"{FOLDERS}."):
            names = {f"{FOLDERS}.{name}" for name in names}
        rows[unit] = None if rule == ANYTHING else names
    return rows


def unit_of(path: Path) -> str:
    """The unit a file is in: a top-level unit, or a folder of `benchmarks`."""
    parts = path.relative_to(SRC).with_suffix("").parts
    if parts == ("__init__",):
        return "deedbench"
    if parts[0] == FOLDERS and len(parts) > 2:
        return f"{FOLDERS}.{parts[1]}"
    return parts[0]


def top(unit: str) -> str:
    """The top-level unit a unit is in (`benchmarks.tac` is in `benchmarks`)."""
    return unit.partition(".")[0]


def imports(path: Path, known: set[str]) -> Iterator[tuple[int, str]]:
    """(line, imported unit) for each import of deedbench in the file: a top-level unit, or
    a folder of `benchmarks` when `known` has it."""
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
            if target == FOLDERS and len(parts) > 2 and f"{FOLDERS}.{parts[2]}" in known:
                target = f"{FOLDERS}.{parts[2]}"
            yield node.lineno, target


def edges() -> list[tuple[str, str, str]]:
    """(importing unit, imported unit, where) for every import across units: between two
    folders of `benchmarks`, from folder to folder; otherwise between top-level units."""
    known = units() | folders()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        source = unit_of(path)
        for line, target in imports(path, known):
            if top(source) != top(target) or FOLDERS in (source, target):
                edge = (top(source), top(target))
            else:
                edge = (source, target)
            if edge[0] != edge[1]:
                found.append((*edge, f"{path.relative_to(SRC.parent)}:{line}"))
    return found


def test_the_table_has_a_row_for_every_unit_and_no_other() -> None:
    rows = allowed()
    every = units() | folders()
    assert set(rows) == every, (
        f"rows without a unit: {sorted(set(rows) - every)}; "
        f"units without a row: {sorted(every - set(rows))}"
    )
    for unit, may in rows.items():
        known = folders() if unit in folders() else units()
        if may is not None:
            assert may <= known, f"{unit} may import unknown units {sorted(may - known)}"


def test_every_import_is_allowed_by_the_table() -> None:
    rows = allowed()
    wrong = [
        f"{where}: deedbench.{source} imports deedbench.{target}"
        for source, target, where in edges()
        if rows.get(source) is not None and target not in rows[source]  # type: ignore[operator]
    ]
    assert wrong == [], "imports docs/architecture.md does not allow:\n" + "\n".join(wrong)


def test_the_units_import_each_other_in_no_circle() -> None:
    graph: dict[str, set[str]] = {unit: set() for unit in units() | folders()}
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


def test_the_check_sees_imports_between_the_folders_of_benchmarks(tmp_path: Path) -> None:
    """An import of a domain is an edge to its folder, which the desk's row and TAC's do not
    allow (the desk knows no domain, TAC no desk); the domains may import the desk."""
    module = tmp_path / "m.py"
    module.write_text("from deedbench.benchmarks.retail.domain import RETAIL\n")
    assert list(imports(module, units() | folders())) == [(1, "benchmarks.retail")]
    rows = allowed()
    desk, tac = rows["benchmarks.servicedesk"], rows["benchmarks.tac"]
    assert desk is not None and tac is not None
    domains = {"benchmarks.retail", "benchmarks.airline", "benchmarks.taubench", "benchmarks.tau2"}
    assert not desk & domains and not tac & (domains | {"benchmarks.servicedesk"})
    assert all("benchmarks.servicedesk" in (rows[domain] or ()) for domain in domains)
