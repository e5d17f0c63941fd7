"""τ²'s Python source as parsed trees: modules by dotted name, names followed through
imports, literal values read from expressions. Nothing here is ever executed.

A `SourceTree` is τ²'s package folder (the one holding ``environment/tool.py``). It
parses a module the first time something asks for it (``tau2.domains.airline.tools``
is ``domains/airline/tools.py`` under the folder) and remembers every file it read
with the sha256 of its bytes, which a run records. `SourceError` names the file,
the line and what could not be read; the callers turn it into a one-line message.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deedbench.files import read_bytes

__all__ = [
    "Definition",
    "Foreign",
    "Found",
    "Imported",
    "Member",
    "ModuleRef",
    "ParsedModule",
    "SourceError",
    "SourceTree",
    "literal",
]

_PACKAGE = "tau2"


class SourceError(Exception):
    """τ²'s source cannot be read as deedbench expects: file, line and what."""


@dataclass(frozen=True)
class Imported:
    """A name bound by an import: the module it comes from and its name there (None: the
    module itself, ``import typing``)."""

    module: str
    name: str | None


@dataclass(eq=False)
class ParsedModule:
    """One module of τ²'s source, parsed: its top-level classes, functions, assignments
    and imports, by name."""

    name: str
    path: Path
    tree: ast.Module
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    values: dict[str, ast.expr] = field(default_factory=dict)
    imports: dict[str, Imported] = field(default_factory=dict)

    def where(self, node: ast.AST | None = None) -> str:
        line = getattr(node, "lineno", None)
        return f"{self.path}:{line}" if line is not None else str(self.path)

    def error(self, node: ast.AST | None, what: str) -> SourceError:
        return SourceError(f"{self.where(node)}: {what}")


def _index(module: ParsedModule) -> None:
    package = module.name.rpartition(".")[0]
    if module.path.name == "__init__.py":
        package = module.name
    for node in module.tree.body:
        if isinstance(node, ast.ClassDef):
            module.classes[node.name] = node
        elif isinstance(node, ast.FunctionDef):
            module.functions[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                module.values[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                module.values[node.target.id] = node.value
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    module.imports[alias.asname] = Imported(alias.name, None)
                else:
                    top = alias.name.partition(".")[0]
                    module.imports[top] = Imported(top, None)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join([*base, source] if source else base)
            for alias in node.names:
                module.imports[alias.asname or alias.name] = Imported(source, alias.name)


class SourceTree:
    """τ²'s package folder, its modules parsed when first asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._modules: dict[str, ParsedModule] = {}
        self.files: dict[Path, str] = {}
        """Every file read, with the sha256 of its bytes."""

    def path_of(self, dotted: str) -> Path | None:
        parts = dotted.split(".")
        if parts[0] != _PACKAGE:
            return None
        base = self.root.joinpath(*parts[1:])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def has(self, dotted: str) -> bool:
        return self.path_of(dotted) is not None

    def module(self, dotted: str) -> ParsedModule:
        found = self._modules.get(dotted)
        if found is not None:
            return found
        path = self.path_of(dotted)
        if path is None:
            raise SourceError(f"{self.root}: no module {dotted} (τ²'s source is incomplete)")
        data = read_bytes(path)
        self.files[path] = hashlib.sha256(data).hexdigest()
        try:
            tree = ast.parse(data, filename=str(path))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise SourceError(f"{path}: not Python that parses: {exc!r}"[:300]) from None
        parsed = ParsedModule(dotted, path, tree)
        _index(parsed)
        self._modules[dotted] = parsed
        return parsed

    def resolve(self, module: ParsedModule, name: str, depth: int = 0) -> Found:
        """What `name` is where `module` uses it, followed through τ²'s own imports: a
        definition in τ²'s source, one of τ²'s modules, or a foreign module's name."""
        if depth > 20:
            raise module.error(None, f"the import of {name!r} goes round in circles")
        if name in module.classes or name in module.functions or name in module.values:
            return Definition(module, name)
        imported = module.imports.get(name)
        if imported is None:
            if name in _BUILTINS:
                return Foreign("builtins", name)
            raise module.error(None, f"{name!r} is neither defined nor imported")
        if imported.name is None:
            return self._module_ref(imported.module)
        if self.has(imported.module):
            source = self.module(imported.module)
            if (
                imported.name in source.classes
                or imported.name in source.functions
                or imported.name in source.values
                or imported.name in source.imports
            ):
                return self.resolve(source, imported.name, depth + 1)
        return self._module_ref(f"{imported.module}.{imported.name}", imported)

    def resolve_expr(self, module: ParsedModule, node: ast.expr) -> Found:
        """`resolve` for a name or a dotted name (``typing.List``, ``data_model.Passenger``)."""
        if isinstance(node, ast.Name):
            return self.resolve(module, node.id)
        if isinstance(node, ast.Attribute):
            owner = self.resolve_expr(module, node.value)
            if isinstance(owner, ModuleRef):
                return self.resolve(owner.module, node.attr)
            if isinstance(owner, Foreign) and not owner.name:
                return Foreign(owner.module, node.attr)
            if isinstance(owner, Definition):
                return Member(owner, node.attr)
        raise module.error(node, f"cannot follow {ast.unparse(node)[:80]!r}")

    def _module_ref(self, dotted: str, imported: Imported | None = None) -> Found:
        if self.has(dotted):
            return ModuleRef(self.module(dotted))
        if imported is not None and imported.name is not None:
            return Foreign(imported.module, imported.name)
        return Foreign(dotted, "")


@dataclass(frozen=True)
class Definition:
    """A name defined at the top of one of τ²'s modules."""

    module: ParsedModule
    name: str


@dataclass(frozen=True)
class Member:
    """An attribute of a definition (``APNNames.INTERNET``)."""

    owner: Definition
    name: str


@dataclass(frozen=True)
class ModuleRef:
    """One of τ²'s modules, bound to a name."""

    module: ParsedModule


@dataclass(frozen=True)
class Foreign:
    """A name from outside τ²'s source (``typing.List``, ``pydantic.Field``); `name` is
    empty for the module itself."""

    module: str
    name: str


Found = Definition | Member | ModuleRef | Foreign
_BUILTINS = frozenset(dir(builtins))


def literal(module: ParsedModule, node: ast.expr) -> Any:
    """The value of a literal expression: constants, tuples, lists, dicts, negative
    numbers, strings joined with ``+`` and ``"...".strip()`` (how τ² writes its prompts);
    a `SourceError` for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = literal(module, node.operand)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Tuple | ast.List):
        items = [literal(module, item) for item in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Dict) and all(key is not None for key in node.keys):
        return {
            literal(module, key): literal(module, value)  # type: ignore[arg-type]
            for key, value in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal(module, node.left), literal(module, node.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("strip", "lstrip", "rstrip")
        and not node.args
        and not node.keywords
    ):
        value = literal(module, node.func.value)
        if isinstance(value, str):
            stripped: str = getattr(value, node.func.attr)()
            return stripped
    raise module.error(node, f"expected a literal value, found {ast.unparse(node)[:80]!r}")
