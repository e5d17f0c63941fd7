"""Types written in τ²'s source, made again from its parsed text.

τ²'s ``Tool`` hands pydantic each parameter's annotation; the JSON Schema it sends
is pydantic's for those types. To give the model the same schema without running
τ²'s code, `TypeMaker` reads an annotation's tree and makes the type it names:
builtins and ``typing``'s generics, ``Literal`` values, aliases defined in τ²'s
modules, and τ²'s own pydantic models and enums, each made again as a class of the
same name, fields, defaults, descriptions, configuration and docstring (so pydantic
writes the same ``$defs``, titles and descriptions). What it cannot read it
refuses with a `SourceError` naming file and line, never a guess.
"""

from __future__ import annotations

import ast
import enum
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from deedbench.benchmarks.tau2.source.tree import (
    Definition,
    Foreign,
    Member,
    ParsedModule,
    SourceTree,
    literal,
)

__all__ = ["TypeMaker"]

_TYPING = {
    "Any": Any,
    "List": list,
    "Dict": dict,
    "Tuple": tuple,
    "Set": set,
    "FrozenSet": frozenset,
    "Optional": typing.Optional,
    "Union": typing.Union,
    "Literal": typing.Literal,
    "Annotated": typing.Annotated,
}
_BUILTINS: dict[str, Any] = {
    "str": str, "int": int, "float": float, "bool": bool, "bytes": bytes, "dict": dict,
    "list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "object": object,
    "None": None,
}  # fmt: skip
_FIELD_KEYWORDS = frozenset(
    {"default", "description", "title", "alias", "examples", "ge", "gt", "le", "lt",
     "min_length", "max_length", "pattern", "default_factory", "strict"}
)  # fmt: skip
_FACTORIES: dict[str, Any] = {"list": list, "dict": dict, "set": set, "tuple": tuple}
_ENUM_BASES = {"Enum": None, "IntEnum": int, "StrEnum": str}


class TypeMaker:
    """Types named in τ²'s source, made once each."""

    def __init__(self, tree: SourceTree) -> None:
        self.tree = tree
        self._made: dict[tuple[str, str], Any] = {}

    # --- annotations ------------------------------------------------------------------------

    def annotation(self, module: ParsedModule, node: ast.expr) -> Any:
        """The type an annotation names."""
        if isinstance(node, ast.Constant):
            if node.value is None:
                return None
            if isinstance(node.value, str):  # a forward reference
                parsed = ast.parse(node.value, mode="eval").body
                return self.annotation(module, parsed)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _union(self.annotation(module, node.left), self.annotation(module, node.right))
        if isinstance(node, ast.Subscript):
            return self._generic(module, node)
        if isinstance(node, ast.Name | ast.Attribute):
            return self._named(module, node)
        raise module.error(node, f"an annotation deedbench does not read: {ast.unparse(node)!r}")

    def _generic(self, module: ParsedModule, node: ast.Subscript) -> Any:
        origin = self._named(module, node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if origin is typing.Literal:
            return typing.Literal[tuple(self._literal_value(module, item) for item in items)]
        if origin is typing.Annotated:
            base = self.annotation(module, items[0])
            extras = tuple(self._metadata(module, item) for item in items[1:])
            return typing.Annotated[(base, *extras)]
        args = tuple(self.annotation(module, item) for item in items)
        if origin is typing.Optional:
            return _union(args[0], None)
        if origin is typing.Union:
            return _union(*args)
        if origin in (list, set, frozenset) and len(args) == 1:
            return origin[args[0]]
        if origin in (dict, tuple):
            return origin[args]
        raise module.error(node, f"an annotation deedbench does not read: {ast.unparse(node)!r}")

    def _literal_value(self, module: ParsedModule, node: ast.expr) -> Any:
        if isinstance(node, ast.Name | ast.Attribute):
            found = self.tree.resolve_expr(module, node)
            if isinstance(found, Member):
                return self._member(found)
        return literal(module, node)

    def _metadata(self, module: ParsedModule, node: ast.expr) -> Any:
        if isinstance(node, ast.Call) and self._is_field(module, node.func):
            return self.field(module, node)
        return self._literal_value(module, node)

    def _named(self, module: ParsedModule, node: ast.expr) -> Any:
        found = self.tree.resolve_expr(module, node)
        if isinstance(found, Foreign):
            if found.module in ("typing", "typing_extensions") and found.name in _TYPING:
                return _TYPING[found.name]
            if found.module == "builtins" and found.name in _BUILTINS:
                return _BUILTINS[found.name]
            raise module.error(node, f"a type deedbench does not read: {ast.unparse(node)!r}")
        if isinstance(found, Definition):
            return self.definition(found)
        raise module.error(node, f"a type deedbench does not read: {ast.unparse(node)!r}")

    # --- τ²'s own definitions ---------------------------------------------------------------

    def definition(self, found: Definition) -> Any:
        """A class (model or enum) or a type alias defined in τ²'s source, made once."""
        key = (found.module.name, found.name)
        if key not in self._made:
            module, name = found.module, found.name
            if name in module.classes:
                self._made[key] = self._class(module, module.classes[name])
            elif name in module.values:
                self._made[key] = self.annotation(module, module.values[name])
            else:
                raise module.error(None, f"{name!r} is no type")
        return self._made[key]

    def _member(self, found: Member) -> Any:
        made = self.definition(found.owner)
        if isinstance(made, type) and issubclass(made, enum.Enum):
            return made[found.name]
        raise found.owner.module.error(None, f"{found.owner.name}.{found.name} is no enum member")

    def _class(self, module: ParsedModule, node: ast.ClassDef) -> Any:
        bases = [self.tree.resolve_expr(module, base) for base in node.bases]
        for base in bases:
            if isinstance(base, Foreign) and base.module == "enum" and base.name in _ENUM_BASES:
                return self._enum(module, node, bases)
        parents: list[type[BaseModel]] = []
        for base, written in zip(bases, node.bases, strict=True):
            if isinstance(base, Foreign) and base.module == "pydantic" and base.name == "BaseModel":
                parents.append(BaseModel)
            elif isinstance(base, Definition):
                made = self.definition(base)
                if not (isinstance(made, type) and issubclass(made, BaseModel)):
                    raise module.error(written, f"{node.name}'s base is no pydantic model")
                parents.append(made)
            else:
                raise module.error(written, f"{node.name}: a base deedbench does not read")
        return self._model(module, node, parents)

    def _enum(self, module: ParsedModule, node: ast.ClassDef, bases: list[Any]) -> Any:
        mixin = None
        for base in bases:
            if (
                isinstance(base, Foreign)
                and base.module == "builtins"
                and base.name in ("str", "int")
            ):
                mixin = _BUILTINS[base.name]
            elif isinstance(base, Foreign) and base.module == "enum":
                mixin = mixin or _ENUM_BASES[base.name]
        members = []
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name) and not target.id.startswith("_"):
                    members.append((target.id, literal(module, statement.value)))
        make: Any = enum.Enum  # the functional API, with a name known only at run time
        made: Any = make(node.name, members, type=mixin, module=module.name, qualname=node.name)
        made.__doc__ = ast.get_docstring(node, clean=False)
        return made

    def _model(
        self, module: ParsedModule, node: ast.ClassDef, parents: list[type[BaseModel]]
    ) -> type[BaseModel]:
        annotations: dict[str, Any] = {}
        namespace: dict[str, Any] = {
            "__module__": module.name,
            "__qualname__": node.name,
            "__doc__": ast.get_docstring(node, clean=False),
        }
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                name = statement.target.id
                written = statement.annotation
                if isinstance(written, ast.Subscript) and ast.unparse(written.value).endswith(
                    "ClassVar"
                ):
                    continue
                annotations[name] = self.annotation(module, written)
                if statement.value is not None:
                    namespace[name] = self._default(module, statement.value)
            elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if isinstance(target, ast.Name) and target.id == "model_config":
                    namespace["model_config"] = self._config(module, statement.value)
            elif isinstance(statement, ast.ClassDef):
                raise module.error(
                    statement, f"{node.name}: a nested class deedbench does not read"
                )
        namespace["__annotations__"] = annotations
        metaclass: Any = type(parents[0])  # pydantic's, as a class statement would use
        made: type[BaseModel] = metaclass(node.name, tuple(parents), namespace)
        return made

    def _config(self, module: ParsedModule, node: ast.expr) -> ConfigDict:
        if isinstance(node, ast.Call) and not node.args:
            found = self.tree.resolve_expr(module, node.func)
            if (
                isinstance(found, Foreign)
                and found.module == "pydantic"
                and found.name == "ConfigDict"
            ):
                values: dict[str, Any] = {
                    k.arg: literal(module, k.value) for k in node.keywords if k.arg
                }
                config: ConfigDict = ConfigDict(**values)  # type: ignore[typeddict-item]
                return config
        raise module.error(node, "a model_config deedbench does not read")

    # --- fields and defaults ----------------------------------------------------------------

    def _is_field(self, module: ParsedModule, node: ast.expr) -> bool:
        if not isinstance(node, ast.Name | ast.Attribute):
            return False
        found = self.tree.resolve_expr(module, node)
        return isinstance(found, Foreign) and found.module == "pydantic" and found.name == "Field"

    def _default(self, module: ParsedModule, node: ast.expr) -> Any:
        if isinstance(node, ast.Call) and self._is_field(module, node.func):
            return self.field(module, node)
        return self.value(module, node)

    def value(self, module: ParsedModule, node: ast.expr) -> Any:
        """A default value: a literal, or a member of one of τ²'s enums."""
        if isinstance(node, ast.Name) and node.id in ("None", "True", "False"):
            return {"None": None, "True": True, "False": False}[node.id]
        if isinstance(node, ast.Attribute):
            found = self.tree.resolve_expr(module, node)
            if isinstance(found, Member):
                return self._member(found)
        return literal(module, node)

    def field(self, module: ParsedModule, node: ast.Call) -> Any:
        """``Field(...)`` as written (the keywords pydantic's schema reads)."""
        keywords: dict[str, Any] = {}
        if len(node.args) > 1:
            raise module.error(node, "a Field with more than one positional argument")
        if node.args:
            keywords["default"] = self.value(module, node.args[0])
        for keyword in node.keywords:
            if keyword.arg not in _FIELD_KEYWORDS:
                raise module.error(node, f"a Field keyword deedbench does not read: {keyword.arg}")
            if keyword.arg == "default_factory":
                if not (isinstance(keyword.value, ast.Name) and keyword.value.id in _FACTORIES):
                    raise module.error(node, "a default_factory deedbench does not read")
                keywords["default_factory"] = _FACTORIES[keyword.value.id]
            else:
                keywords[keyword.arg] = self.value(module, keyword.value)
        return Field(**keywords)


def _union(*types: Any) -> Any:
    """``typing.Union`` of types made at run time (the ``X | Y`` syntax is for written
    annotations; these are read from τ²'s text)."""
    return typing.Union[types]  # noqa: UP007
