"""Every code block of the README and the docs site runs in a test, or says why not.

A block is one of three kinds, by the HTML comment right before its fence:
- `<!-- not run: REASON -->`: not run, for the reason given (a key, a cluster, an install);
- `<!-- run by tests/PATH -->`: that test runs it (it names the page, or the file the block
  includes with `--8<--`);
- no comment: a `bash` or `python` block, run here as a reader would run it.
Anything else fails, so a new block cannot go unchecked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ._pages import ROOT, SNIPPET, Block, blocks, pages

RUN_HERE = ("bash", "python")
SHARED = ROOT.parent / "shared"


def every_block() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def test_every_block_runs_or_says_why_not() -> None:
    wrong = []
    for block in every_block():
        if block.not_run is not None:
            if len(block.not_run.split()) < 2:
                wrong.append(f"{block.where}: say why it is not run")
        elif block.run_by is not None:
            problem = _run_by_problem(block)
            if problem:
                wrong.append(f"{block.where}: {problem}")
        elif block.marker:
            wrong.append(f"{block.where}: unknown marker {block.marker!r}")
        elif block.lang not in RUN_HERE:
            wrong.append(
                f"{block.where}: a {block.lang or 'plain'} block no test runs: mark it "
                "<!-- not run: reason --> or <!-- run by tests/PATH -->"
            )
        elif SNIPPET.search(block.code):
            wrong.append(f"{block.where}: an included file is run by the test that owns it")
    assert wrong == []


def _run_by_problem(block: Block) -> str | None:
    """Why the test a block names does not run it, if it does not."""
    assert block.run_by is not None
    test = ROOT / block.run_by
    if not test.is_file():
        return f"{block.run_by} does not exist"
    text = test.read_text(encoding="utf-8")
    included = SNIPPET.search(block.code)
    if included:
        path = Path(included.group("path"))
        if not (ROOT / path).is_file():
            return f"the included {path} does not exist"
        if path.stem not in text and path.parent.name not in text:
            return f"{block.run_by} does not name {path}"
    elif block.page.name not in text:
        return f"{block.run_by} does not name {block.page.name}"
    return None


def test_the_checker_refuses_an_unmarked_block_it_cannot_run(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text.\n\n```toml\nname = 1\n```\n\n<!-- not run: a real key -->\n```bash\nx\n```\n"
    )
    toml, bash = blocks(page)
    assert (toml.lang, toml.marker, toml.not_run) == ("toml", "", None)
    assert bash.not_run == "a real key"


def _runnable(lang: str) -> dict[str, list[Block]]:
    """Each page's blocks this test runs, in page order; a block whose code an earlier page
    shows already (the first run's command, on three pages) runs once."""
    found: dict[str, list[Block]] = {}
    seen: set[str] = set()
    for block in every_block():
        if not block.marker and block.lang == lang and not SNIPPET.search(block.code):
            if block.code not in seen:
                found.setdefault(str(block.page.relative_to(ROOT)), []).append(block)
            seen.add(block.code)
    return found


def _environment(folder: Path) -> dict[str, str]:
    """A reader's shell: this venv's `deedbench` first on the PATH, the default store in
    `folder`, an 80-column terminal, and τ²'s data where $TAU2_DATA_DIR says."""
    env = {k: v for k, v in os.environ.items() if k not in ("DEEDBENCH_STORE", "PYTHONPATH")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "80"
    env["TAU2_DATA_DIR"] = str(SHARED / "tau2" / "data")
    return env


def _folder(tmp_path: Path) -> Path:
    """An empty working folder with the repository's examples beside it, as in a checkout."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


BASH = _runnable("bash")
PYTHON = [block for found in _runnable("python").values() for block in found]


# Each page's commands are baseline runs of a second or two each, so a page takes a few seconds.
@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(BASH))
def test_the_pages_shell_blocks_run_as_written(page: str, tmp_path: Path) -> None:
    """One folder per page, its blocks in order, so a later block reads what an earlier one
    stored (`report rnd` after `run ... --run-id rnd`)."""
    folder = _folder(tmp_path)
    for block in BASH[page]:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.code], cwd=folder,
            env=_environment(folder), capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, f"{block.where}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


# The Inspect block imports Inspect AI, most of its 8 s; the others take well under a second.
@pytest.mark.parametrize("block", PYTHON, ids=[block.where for block in PYTHON])
def test_the_python_blocks_run_as_written(block: Block, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "block.py").write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "block.py"], cwd=folder, env=_environment(folder),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, f"{block.where}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def test_the_shell_blocks_that_need_taus_data_find_it() -> None:
    """Blocks run with $TAU2_DATA_DIR pointing at ../shared; without it they cannot run here,
    and fail rather than skip."""
    needs = [b.where for found in BASH.values() for b in found if "tau2-" in b.code]
    assert needs, "no shell block runs τ²: the docs lost their offline τ² example"
    assert (SHARED / "tau2" / "data").is_dir(), f"{SHARED / 'tau2'} is missing: {needs}"
