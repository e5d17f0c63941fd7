"""Write docs/cli.md, the CLI reference, from the `deedbench` typer app itself.

    python tools/cli_reference.py           # write docs/cli.md
    python tools/cli_reference.py --check   # exit 1 if docs/cli.md is not what this writes

Every command and every option comes from the app (names, type, default, help), so the page
cannot leave one out; tests/docs/test_cli_reference.py fails when the committed page is stale.
What a command's options mean at length, and how its tables are laid out, is on the task page
each command links to (`TASK_PAGES`).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from deedbench.cli.main import app

__all__ = ["PAGE", "READING_ORDER", "TASK_PAGES", "commands", "render"]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "cli.md"

# The order a newcomer meets the commands in; a command missing here comes at the end.
READING_ORDER = [
    "list", "run", "runs", "report", "compare", "show", "export", "import inspect",
    "import tau2", "audit", "study", "validate", "rescore", "view", "play",
]  # fmt: skip

# Where each command's task is explained (page, title).
TASK_PAGES: dict[str, list[tuple[str, str]]] = {
    "list": [("getting-started.md", "Getting started")],
    "run": [
        ("getting-started.md", "Getting started"),
        ("models-and-roles.md", "Running real models"),
        ("tac.md", "TAC"),
        ("service-desks.md", "Service desks"),
    ],
    "runs": [("reading-results.md", "Reading results")],
    "report": [("reading-results.md", "Reading results")],
    "compare": [("reading-results.md", "Reading results")],
    "show": [("reading-results.md", "Reading results")],
    "export": [
        ("reading-results.md", "Reading results"),
        ("inspect.md", "Inspect AI"),
        ("tau2.md", "τ²-bench"),
    ],
    "import inspect": [("inspect.md", "Inspect AI")],
    "import tau2": [("tau2.md", "τ²-bench")],
    "play": [("environment.md", "Driving an episode from outside")],
    "audit": [("audit.md", "The eval-awareness audit"), ("who-failed.md", "Who failed")],
    "study": [("studies-and-ray.md", "Studies and Ray")],
    "validate": [("service-desks.md", "Service desks"), ("taubench.md", "τ-bench")],
    "rescore": [("taubench.md", "τ-bench"), ("tau2.md", "τ²-bench")],
    "view": [("viewer.md", "The viewer")],
}

HEAD = """\
# CLI reference

<!-- Written by tools/cli_reference.py from the typer app; do not edit by hand. -->

Every command and option of `deedbench`, as `--help` prints them.
This page is generated from the command itself: `python tools/cli_reference.py` writes it.
A test fails when it is stale or leaves a command or an option out.
Each command links to the page that explains its task.

Commands that read or write runs take `--store PATH`.
Its default is `$DEEDBENCH_STORE`, else `./deedbench.db`: the SQLite file that holds runs.
`list`, `validate` and `rescore` touch no store.

"""


def commands() -> Iterator[tuple[str, Any, Any]]:
    """(path, command, context) for the root and every command under it, depth first."""
    from typer._click.core import Context  # the command's own click: typer vendors one

    root = typer.main.get_command(app)
    root_ctx = Context(root, info_name="deedbench")
    yield "", root, root_ctx

    def walk(group: Any, ctx: Any, prefix: str) -> Iterator[tuple[str, Any, Any]]:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            sub = Context(command, parent=ctx, info_name=name)
            path = f"{prefix} {name}".strip()
            if hasattr(command, "list_commands"):
                yield from walk(command, sub, path)
            else:
                yield path, command, sub

    yield from walk(root, root_ctx, "")


def _cell(text: str) -> str:
    """Text for a table cell: one line, pipes escaped, and outside code spans no `<`
    read as HTML and no `*` read as emphasis."""
    parts = " ".join(text.split()).replace("|", "\\|").split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace("*", "\\*")
    return "`".join(parts)


def _names(param: Any) -> str:
    names = [*param.opts, *getattr(param, "secondary_opts", [])]
    if param.param_type_name == "argument":
        names = [param.name.upper()]
    return ", ".join(f"`{n}`" for n in names)


_BRACKET = re.compile(r"\s*\[([^\[\]]*)\]\s*$")


def _split_help(param: Any, ctx: Any) -> tuple[str, str, list[str]]:
    """(type, help, extras) from the help line `--help` prints: the type after the names,
    the text, and what `--help` adds in brackets (default, range, required)."""
    record = param.get_help_record(ctx)
    label, text = record if record else ("", param.help or "")
    shown = re.search(r"<([^<>]*)>", label)
    type_ = shown.group(1) if shown else ""
    extras: list[str] = []
    found = _BRACKET.search(text)
    if found:
        extras = [e.strip() for e in found.group(1).split(";")]
        text = text[: found.start()]
    return type_, text, extras


def _default(param: Any, extras: list[str]) -> str:
    if param.required:
        return "required"
    if getattr(param, "is_flag", False):
        return "off"
    shown = [e.removeprefix("default: ") for e in extras if e.startswith("default: ")]
    if shown:
        return f"`{shown[0]}`"
    return ""


def _option_rows(command: Any, ctx: Any) -> tuple[list[str], list[str]]:
    arguments: list[str] = []
    options: list[str] = []
    for param in command.get_params(ctx):
        if param.name == "help" or getattr(param, "hidden", False):
            continue
        type_, text, extras = _split_help(param, ctx)
        ranges = [e for e in extras if not e.startswith("default: ") and e != "required"]
        shown_type = f"`{type_}`" if type_ else "flag"
        if ranges:
            shown_type += " (" + ", ".join(f"`{r}`" for r in ranges) + ")"
        row = f"| {_names(param)} | {shown_type} | {_default(param, extras)} | {_cell(text)} |"
        (arguments if param.param_type_name == "argument" else options).append(row)
    return arguments, options


def _anchor(path: str) -> str:
    return "deedbench-" + path.replace(" ", "-")


def render() -> str:
    """The whole page."""
    found = {path: (command, ctx) for path, command, ctx in commands()}
    order = [p for p in READING_ORDER if p in found]
    order += [p for p in found if p and p not in order]
    out = [HEAD]
    out.append("| command | what it does |\n|---|---|\n")
    for path in order:
        command, _ = found[path]
        summary = _cell(command.help.split("\n\n")[0])
        out.append(f"| [`deedbench {path}`](#{_anchor(path)}) | {summary} |\n")
    root, root_ctx = found[""]
    out.append("\n## `deedbench`\n\n")
    out.append(f"`{_cell(root.get_usage(root_ctx).removeprefix('Usage: '))}`\n\n")
    _, options = _option_rows(root, root_ctx)
    out.append("| option | type | default | meaning |\n|---|---|---|---|\n")
    out.append("".join(row + "\n" for row in options))
    for path in order:
        command, ctx = found[path]
        out.append(f"\n## `deedbench {path}` {{#{_anchor(path)}}}\n\n")
        out.append(" ".join(command.help.split()) + "\n\n")
        out.append(f"`{_cell(command.get_usage(ctx).removeprefix('Usage: '))}`\n\n")
        pages = TASK_PAGES.get(path, [])
        if pages:
            links = ", ".join(f"[{title}]({page})" for page, title in pages)
            out.append(f"Explained in: {links}.\n\n")
        arguments, options = _option_rows(command, ctx)
        if arguments:
            out.append("| argument | type | default | meaning |\n|---|---|---|---|\n")
            out.append("".join(row + "\n" for row in arguments) + "\n")
        if options:
            out.append("| option | type | default | meaning |\n|---|---|---|---|\n")
            out.append("".join(row + "\n" for row in options))
    out.append(_benchmark_options())
    return "".join(out)


def _benchmark_options() -> str:
    """deedbench's own benchmarks: conditions, epochs, baselines and `-T` options."""
    from deedbench.benchmarks import BUILTIN, benchmark_class

    out = [
        "\n## Benchmark options: `-T KEY=VALUE` {#benchmark-options}\n\n",
        "`run`, `validate` and a study's `options` take these; `deedbench list` prints them.\n",
        "An installed package's benchmark lists its own there.\n",
    ]
    for name in BUILTIN:
        bench = benchmark_class(name)
        baselines = ", ".join(f"`baseline/{b}`" for b in bench.baseline_names)
        out.append(f"\n### `{name}`\n\n{_cell(bench.description)}\n\n")
        out.append(f"Conditions: {', '.join(f'`{c}`' for c in bench.conditions)}.\n")
        out.append(f"Default epochs: {bench.default_epochs}.\n")
        out.append(f"Baselines: {baselines}.\n\n")
        out.append("| option | type | default | meaning |\n|---|---|---|---|\n")
        for spec in bench.option_specs:
            default = "" if spec.default is None else f"`{spec.default}`"
            out.append(f"| `{spec.name}` | `{spec.type_name}` | {default} | {_cell(spec.help)} |\n")
    return "".join(out)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run python tools/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
