"""Where τ-bench's files are in a folder a user points `--data` at, in any of the layouts
users have: a clone of sierra-research/tau-bench, or a converted copy.

A clone keeps a domain in ``tau_bench/envs/<domain>/``: its tables in ``data/*.json``,
its policy in ``wiki.md`` and its tasks in Python, ``tasks_<split>.py``, a list of
``Task(...)`` assigned to ``TASKS_<SPLIT>`` (or ``TASKS``, as airline's test split).
Those files are read without being run: parsed with `ast`, where only literals and
calls of ``Task`` and ``Action`` with keyword arguments are accepted, so a task file
cannot execute anything. A converted copy keeps the tables, ``tasks_<split>.json``
(or ``tasks.json``) and ``policy.md`` (or ``wiki.md``) in one folder.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deedbench.errors import BenchmarkError
from deedbench.files import read_text

__all__ = [
    "DOMAINS",
    "LAYOUTS",
    "TASK_FILE_LIMIT",
    "TaubenchFiles",
    "locate",
    "read_python_tasks",
    "tables_folder",
]

DOMAINS = ("retail", "airline")
TASK_FILE_LIMIT = 4 << 20
"""The most a task file in Python may hold: eight times τ-bench's largest (retail's
``tasks_train.py``, 472 KB). `ast` needs some forty times a file's size in memory, so a
file of hundreds of MB would exhaust the machine before any task is read."""

LAYOUTS = (
    "a tau-bench clone's root",
    "its tau_bench/envs/<domain> folder",
    "that folder's data/ folder",
    "a converted folder (the tables, tasks_<split>.json and policy.md together)",
)
"""What `--data` may name, as errors list them."""

_CALLS = frozenset({"Task", "Action"})
"""The constructors a task file may call (τ-bench's pydantic models, read as dicts)."""


@dataclass(frozen=True)
class TaubenchFiles:
    """Where one domain's tables, policy and tasks are."""

    tables: Path
    policy: Path | None
    tasks_folder: Path
    clone: bool
    """Tasks in Python (``tasks_<split>.py``), as a clone has them, rather than JSON."""

    def tasks_file(self, split: str) -> Path:
        """The tasks file of `split`, or a BenchmarkError naming the files looked for."""
        names = [f"tasks_{split}.py"] if self.clone else [f"tasks_{split}.json", "tasks.json"]
        for name in names:
            if (self.tasks_folder / name).is_file():
                return self.tasks_folder / name
        raise BenchmarkError(
            f"{self.tasks_folder}: no tasks file for split {split!r} (looked for "
            f"{', '.join(names)})"
        )


def locate(path: Path, domain: str) -> TaubenchFiles:
    """The files of `domain` (``retail``, ``airline``) under `path`, in any of `LAYOUTS`."""
    if not path.is_dir():
        raise BenchmarkError(f"τ-bench {domain} data folder {path} does not exist")
    for env in (path / "tau_bench" / "envs" / domain, path, path.parent):
        is_env = env.name == domain and (env / "wiki.md").is_file() and (env / "data").is_dir()
        if is_env and _is_env(env, path):
            if not any((env / "data").glob("*.json")):
                raise BenchmarkError(
                    f"{env / 'data'}: a tau-bench clone's {domain} folder with no tables "
                    "(data/*.json): the clone is incomplete"
                )
            return TaubenchFiles(env / "data", env / "wiki.md", env, clone=True)
    policy = next((path / n for n in ("policy.md", "wiki.md") if (path / n).is_file()), None)
    if policy is not None or any(path.glob("*.json")):  # converted: what is missing is named
        return TaubenchFiles(path, policy, path, clone=False)
    raise BenchmarkError(
        f"{path}: no τ-bench {domain} data here. --data takes " + "; ".join(LAYOUTS)
    )


def tables_folder(path: Path, policy_hint: str = "") -> Path:
    """The folder of a domain's tables under `path`, in any of `LAYOUTS`, for a command
    that needs only the tables (`rescore`). A clone's root holds both domains: the one
    whose policy heading (``wiki.md``'s first line) `policy_hint` contains (a result
    file's system prompt) is taken, else a BenchmarkError asks for the domain's folder."""
    envs = path / "tau_bench" / "envs"
    if envs.is_dir():
        found = [
            d
            for d in DOMAINS
            if (envs / d / "wiki.md").is_file() and _heading(envs / d / "wiki.md") in policy_hint
        ]
        if len(found) != 1:
            raise BenchmarkError(
                f"{path}: a tau-bench clone holds {' and '.join(DOMAINS)}; the result file's "
                f"system prompt shows {'neither policy' if not found else 'both policies'}: give "
                f"--data {envs}/<domain>"
            )
        return locate(path, found[0]).tables
    for domain in DOMAINS:  # a domain's folder, or its data/, in a clone or converted
        if domain in (path.name, path.parent.name if path.name == "data" else None):
            return locate(path, domain).tables
    return path


def _heading(policy: Path) -> str:
    try:
        lines = read_text(policy).strip().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{policy}: cannot be read: {exc}") from None
    return lines[0].strip() if lines else "\0"


def _is_env(env: Path, given: Path) -> bool:
    """Whether `env`, found from `given`, is a clone's domain folder: the one given, the
    parent of the ``data`` folder given, or the one under a given root."""
    return env == given or (given.name == "data" and env == given.parent) or given in env.parents


def read_python_tasks(path: Path, split: str) -> list[dict[str, Any]]:
    """The tasks of one of a clone's ``tasks_<split>.py``, as τ-bench's converted JSON has
    them (with each one's ``index``), read as literals: nothing in the file runs."""
    text = read_text(path, limit=(TASK_FILE_LIMIT, "a τ-bench task file"))
    try:
        tree = ast.parse(text, filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError, RecursionError, ValueError) as exc:
        raise BenchmarkError(f"{path}: cannot be read as Python: {exc}") from None
    except MemoryError:  # the parser's own stack, on expressions nested some 10,000 deep
        raise BenchmarkError(
            f"{path}: cannot be read as Python: expressions nested too deeply"
        ) from None
    names = (f"TASKS_{split.upper()}", "TASKS")
    found: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue  # read, never run: what it imports does not matter
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            found[node.targets[0].id] = node.value
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # a docstring
        raise BenchmarkError(
            f"{path}:{node.lineno}: a τ-bench task file holds only imports and the task "
            f"list; found {type(node).__name__}"
        )
    name = next((n for n in names if n in found), None)
    if name is None:
        raise BenchmarkError(f"{path}: no task list (looked for {' or '.join(names)} = [...])")
    tasks = _literal(found[name], path)
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise BenchmarkError(f"{path}: {name} must be a list of Task(...)")
    return [{"index": index, **task} for index, task in enumerate(tasks)]


def _literal(node: ast.expr, path: Path) -> Any:
    """A Python literal, or a Task/Action call with literal keyword arguments as a dict."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS:
        if node.args or any(k.arg is None for k in node.keywords):
            raise _not_literal(node, path, f"{node.func.id}(...) takes keyword arguments only")
        return {k.arg: _literal(k.value, path) for k in node.keywords if k.arg is not None}
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(item, path) for item in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise _not_literal(node, path, "a ** inside a dict")
        found = {}
        for key, value in zip(node.keys, node.values, strict=True):
            name = _literal(key, path) if key is not None else None
            if not _hashable(name):
                raise _not_literal(key or node, path, "a dict key must be a string or number")
            found[name] = _literal(value, path)
        return found
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise _not_literal(node, path, _source(node)) from None


def _hashable(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_hashable(item) for item in value)
    return isinstance(value, str | int | float | complex | bool | bytes) or value is None


def _source(node: ast.expr) -> str:
    try:
        return ast.unparse(node)[:80]
    except RecursionError:
        return "an expression nested too deeply"


def _not_literal(node: ast.expr, path: Path, what: str) -> BenchmarkError:
    return BenchmarkError(
        f"{path}:{getattr(node, 'lineno', '?')}: not a literal, Task(...) or Action(...): {what}"
    )
