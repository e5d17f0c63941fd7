"""docs/cli.md, the CLI reference, is what tools/cli_reference.py writes from the typer app:
every command and every option has an entry, and the committed page is not stale."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import pytest

from ._pages import DOCS, ROOT


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "cli_reference", ROOT / "tools" / "cli_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sections(page: str) -> dict[str, str]:
    """Each command's section of the page, by its path ("run", "import tau2")."""
    parts = re.split(r"^## `deedbench ?([a-z0-9 -]*)`.*$", page, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_the_committed_page_is_what_the_script_writes(reference: ModuleType) -> None:
    committed = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert committed == reference.render(), "docs/cli.md is stale: python tools/cli_reference.py"


def test_every_command_and_option_has_an_entry(reference: ModuleType) -> None:
    page = sections((DOCS / "cli.md").read_text(encoding="utf-8"))
    missing = []
    for path, command, ctx in reference.commands():
        if path not in page:
            missing.append(f"deedbench {path}")
            continue
        rows = [line for line in page[path].splitlines() if line.startswith("| `")]
        for param in command.get_params(ctx):
            if param.name == "help" or getattr(param, "hidden", False):  # as in --help
                continue
            names = param.opts if param.param_type_name == "option" else [param.name.upper()]
            if not any(all(f"`{n}`" in row for n in names) for row in rows):
                missing.append(f"deedbench {path} {'/'.join(names)}")
    assert missing == []
    assert {"run", "report", "import tau2", "view"} <= set(page)


def test_every_command_links_to_a_page_that_explains_it(reference: ModuleType) -> None:
    paths = [path for path, _, _ in reference.commands() if path]
    assert sorted(reference.TASK_PAGES) == sorted(paths)
    for pages in reference.TASK_PAGES.values():
        for page, _ in pages:
            assert (DOCS / page).is_file(), page


def test_every_benchmark_option_has_an_entry(reference: ModuleType) -> None:
    from deedbench.benchmarks import BUILTIN, benchmark_class

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    options = page[page.index("{#benchmark-options}") :]
    for name in BUILTIN:
        section = options[options.index(f"### `{name}`") :].split("\n### ")[0]
        for spec in benchmark_class(name).option_specs:
            assert f"| `{spec.name}` | `{spec.type_name}` |" in section, (name, spec.name)


def test_a_changed_help_makes_the_page_stale(
    reference: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page is written from the app as it is now: change an option's help and the
    committed page no longer matches."""
    import typer.main

    original = typer.main.get_command

    def changed(app: object) -> object:
        group = original(app)  # type: ignore[arg-type]
        for param in group.params:
            if param.name == "version":
                param.help = "Another help."
        return group

    monkeypatch.setattr(typer.main, "get_command", changed)
    assert "| `--version` | flag | off | Another help. |" in reference.render()
