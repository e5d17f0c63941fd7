"""The documentation reads in order: a short README, every page in the site's nav, the
questions a newcomer comes with answered by pages named after them, short sentences."""

from __future__ import annotations

import re

from deedbench.benchmarks import BUILTIN, benchmark_class

from ._pages import DOCS, README, ROOT, pages, prose, sentences, words

MAX_WORDS = 45  # the aim is about 30; this bound catches the run-on ones


def nav() -> list[str]:
    """The pages mkdocs.yml's nav lists, in order."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = text[text.index("\nnav:") :]
    return re.findall(r"^\s*- (?:[^:\n]+: )?([\w-]+\.md)$", listed, flags=re.M)


def title(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")


def test_the_readme_is_a_short_landing_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 150
    assert "## Quickstart" in lines and "## Documentation" in lines
    for page in DOCS.glob("*.md"):  # the site's home page is this README's twin
        if page.name != "index.md":
            assert f"(docs/{page.name})" in README.read_text(encoding="utf-8"), page.name


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    listed = nav()
    assert sorted(listed) == sorted(p.name for p in DOCS.glob("*.md"))
    assert len(listed) == len(set(listed))


def test_each_question_a_newcomer_asked_has_a_page_named_after_it() -> None:
    """The four questions issue 41's newcomer could not answer in two minutes."""
    assert "base URL" in title("models-and-roles.md")  # how to give the judge a base URL
    assert title("tau2-tasks.md") == "Picking τ² tasks"
    assert "a map from τ²'s flags to deedbench's" in title("coming-from-tau2.md")
    assert title("agents.md") == "Writing an agent"
    assert "the judge" in (DOCS / "models-and-roles.md").read_text(encoding="utf-8")


def test_no_sentence_runs_on() -> None:
    """Every sentence of the README and the site (headings, list items and table cells
    count alone) is at most MAX_WORDS words. The one exception is architecture.md's
    layering table: its cells list each unit's modules, tests/test_layering.py reads it,
    and every helper that adds a module edits it."""
    long = []
    for page in pages():
        text = prose(page)
        if page.name == "architecture.md":
            text = "\n".join(line for line in text.splitlines() if not line.startswith("| `deed"))
        long += [
            f"{page.name}: {words(s)} words: {s[:80]}..."
            for s in sentences(text)
            if words(s) > MAX_WORDS
        ]
    assert long == []


def test_the_sentence_counter_counts_sentences() -> None:
    text = "One two three. Four `five six` seven!\n\n- an item\n| a | cell. Two |"
    assert [words(s) for s in sentences(text)] == [3, 3, 2, 1, 1, 1]


def test_reading_results_names_every_metric_of_every_benchmark() -> None:
    page = (DOCS / "reading-results.md").read_text(encoding="utf-8")
    for name in BUILTIN:
        for metric in benchmark_class(name).report.metrics:
            assert f"| `{metric.name}` |" in page, (name, metric.name)


def test_the_python_api_page_names_every_public_name() -> None:
    import deedbench

    page = (DOCS / "python-api.md").read_text(encoding="utf-8")
    assert [n for n in deedbench.__all__ if f"`{n}`" not in page] == []
