"""τ²'s toolkits read from its source: which tools a class has, in τ²'s order, and the
JSON each is sent as, built as τ²'s ``Tool.openai_schema`` builds it.

τ²'s ``ToolKitType`` collects a class's methods marked ``@is_tool`` (or
``@is_discoverable_tool``) in the order written, and a toolkit's tools are its own
followed by those of the classes after it in its method resolution order, each name
once. ``get_tools`` leaves out the discoverable ones. A tool's JSON is its name, its
description (the docstring's short and long descriptions) and pydantic's schema of
a model named ``parameters`` whose fields are the method's parameters, each with its
docstring description (`tool_spec`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from pydantic import Field, create_model

from deedbench.benchmarks.tau2.source.annotations import TypeMaker
from deedbench.benchmarks.tau2.source.docstrings import parse_docstring
from deedbench.benchmarks.tau2.source.tree import (
    Definition,
    ParsedModule,
    SourceTree,
)

__all__ = ["ToolText", "ToolkitReader", "tool_spec"]

_TOOLKIT = "tau2.environment.toolkit"
_MARKS = {"is_tool": False, "is_discoverable_tool": True}


@dataclass(frozen=True)
class ToolText:
    """One of τ²'s tools as its source has it."""

    name: str
    spec: dict[str, Any]
    """The JSON τ² sends the model (``openai_schema``)."""
    discoverable: bool
    doc: str
    """The docstring as ``inspect.getdoc`` gives it (what τ³'s unlocking reads)."""


def tool_spec(
    types: TypeMaker, module: ParsedModule, node: ast.FunctionDef, skip_first: bool = True
) -> dict[str, Any]:
    """A function's ``openai_schema``, as τ²'s ``Tool`` builds it from the function (a
    bound method: its first parameter left out)."""
    where = module.where(node)
    doc = parse_docstring(ast.get_docstring(node, clean=False), where)
    arguments = node.args
    if arguments.vararg or arguments.kwarg:
        raise module.error(node, f"{node.name}: *args or **kwargs in a tool")
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
    defaults += list(arguments.defaults)
    pairs = list(zip(positional, defaults, strict=True))
    pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
    if skip_first:
        pairs = pairs[1:]
    fields: dict[str, Any] = {}
    for argument, default_node in pairs:
        if argument.annotation is None:
            raise module.error(node, f"{node.name}: parameter {argument.arg!r} has no annotation")
        annotation = types.annotation(module, argument.annotation)
        default: Any = ... if default_node is None else types.value(module, default_node)
        if argument.arg in doc.params:
            default = Field(default, description=doc.params[argument.arg])
        fields[argument.arg] = (annotation, default)
    parameters = create_model("parameters", **fields)
    return {
        "type": "function",
        "function": {
            "name": node.name,
            "description": doc.description or node.name,
            "parameters": parameters.model_json_schema(),
        },
    }


class ToolkitReader:
    """τ²'s toolkit classes read from its source."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self.types = TypeMaker(tree)
        self._tools: dict[tuple[str, str], list[ToolText]] = {}

    def definition(self, module: str, name: str) -> Definition:
        parsed = self.tree.module(module)
        if name not in parsed.classes:
            raise parsed.error(None, f"no class {name} (τ²'s source is another version?)")
        return Definition(parsed, name)

    def tools(self, module: str, name: str) -> list[ToolText]:
        """The class's tools in τ²'s order, discoverable ones included."""
        key = (module, name)
        if key not in self._tools:
            self._tools[key] = self._read(self.definition(module, name))
        return self._tools[key]

    def listed(self, module: str, name: str) -> list[ToolText]:
        """What τ²'s ``get_tools`` gives: the tools that are not discoverable."""
        return [t for t in self.tools(module, name) if not t.discoverable]

    def _read(self, cls: Definition) -> list[ToolText]:
        order = [c for c in self._mro(cls) if self._collects(c)]
        names: dict[str, bool] = {}
        for klass in order:
            for method, discoverable in self._marked(klass):
                names.setdefault(method.name, discoverable)
        found = []
        for tool_name, discoverable in names.items():
            owner, method = self._attribute(cls, tool_name)
            found.append(
                ToolText(
                    name=tool_name,
                    spec=tool_spec(self.types, owner.module, method),
                    discoverable=discoverable,
                    doc=ast.get_docstring(method, clean=True) or "",
                )
            )
        return found

    def _marked(self, cls: Definition) -> list[tuple[ast.FunctionDef, bool]]:
        node = cls.module.classes[cls.name]
        found = []
        for statement in node.body:
            if not isinstance(statement, ast.FunctionDef):
                continue
            for decorator in statement.decorator_list:
                call = decorator.func if isinstance(decorator, ast.Call) else decorator
                if not isinstance(call, ast.Name | ast.Attribute):
                    continue
                target = self.tree.resolve_expr(cls.module, call)
                if (
                    isinstance(target, Definition)
                    and target.module.name == _TOOLKIT
                    and target.name in _MARKS
                ):
                    found.append((statement, _MARKS[target.name]))
                    break
        return found

    def _attribute(self, cls: Definition, name: str) -> tuple[Definition, ast.FunctionDef]:
        """The method `name` as an instance of `cls` finds it."""
        for klass in self._mro(cls):
            for statement in klass.module.classes[klass.name].body:
                if isinstance(statement, ast.FunctionDef) and statement.name == name:
                    return klass, statement
        raise cls.module.error(None, f"{cls.name} has no method {name}")

    # --- classes ----------------------------------------------------------------------------

    def _bases(self, cls: Definition) -> list[Definition]:
        node = cls.module.classes[cls.name]
        found = []
        for base in node.bases:
            target = self.tree.resolve_expr(cls.module, base)
            if isinstance(target, Definition) and target.name in target.module.classes:
                found.append(target)
        return found

    def _collects(self, cls: Definition) -> bool:
        """Whether the class has τ²'s ``ToolKitType`` as its metaclass (only those collect
        tools)."""
        node = cls.module.classes[cls.name]
        for keyword in node.keywords:
            if keyword.arg == "metaclass" and isinstance(keyword.value, ast.Name | ast.Attribute):
                target = self.tree.resolve_expr(cls.module, keyword.value)
                if isinstance(target, Definition) and target.name == "ToolKitType":
                    return True
        return any(self._collects(base) for base in self._bases(cls))

    def _mro(self, cls: Definition, depth: int = 0) -> list[Definition]:
        """C3 linearization of τ²'s classes (foreign bases left out)."""
        if depth > 50:
            raise cls.module.error(None, f"{cls.name}: a class hierarchy deedbench cannot order")
        bases = self._bases(cls)
        sequences = [self._mro(base, depth + 1) for base in bases] + [list(bases)]
        result = [cls]
        while any(sequences):
            for sequence in sequences:
                if not sequence:
                    continue
                head = sequence[0]
                if not any(_same(head, c) for s in sequences for c in s[1:]):
                    break
            else:
                raise cls.module.error(None, f"{cls.name}: no consistent method order")
            result.append(head)
            sequences = [s[1:] if s and _same(s[0], head) else s for s in sequences]
        return result


def _same(a: Definition, b: Definition) -> bool:
    return a.module is b.module and a.name == b.name
