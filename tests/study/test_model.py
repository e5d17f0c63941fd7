"""A study file's problems, each once and on its own line, before anything is planned."""

from __future__ import annotations

from pathlib import Path

import pytest

from deedbench.study import StudyError, load_study
from deedbench.study.model import locate

BROKEN = """\
name = "broken"
concurrency = 0

[[benchmarks]]
name = "tac"
epochs = 0

[[agents]]
spec = "baseline/random"

[[agents]]
name = "typo"
sepc = "openai/gpt-4o"

[[agents]]
spec = "openai/gpt-4o"
price = { input = "cheap", output = 1.0 }
"""


def problems_of(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "study.toml"
    path.write_text(text)
    with pytest.raises(StudyError) as raised:
        load_study(path)
    return [p.render(path).removeprefix(f"{path}:") for p in raised.value.problems]


def test_every_problem_is_one_message_on_its_line(tmp_path: Path) -> None:
    assert problems_of(tmp_path, BROKEN) == [
        "2: concurrency: Input should be greater than or equal to 1",
        "6: benchmarks[1].epochs: Input should be greater than or equal to 1",
        "11: agents[2].spec: required, missing",  # a missing key: its table's header
        "13: agents[2].sepc: unknown key (a typo? did you mean 'spec'?)",
        "17: agents[3].price.input: Input should be a valid number, unable to parse string "
        "as a number",
    ]


def test_a_file_that_is_not_toml_names_the_line(tmp_path: Path) -> None:
    assert problems_of(tmp_path, 'name = "x"\n\n[[agents]\nspec = 1\n') == [
        "3: not TOML: Expected ']]' at the end of an array declaration"
    ]


def test_a_missing_top_level_key_has_no_line_and_a_bad_name_is_on_its_own(
    tmp_path: Path,
) -> None:
    text = 'name = "no spaces allowed"\n\n[[agents]]\nspec = "baseline/random"\n'
    found = problems_of(tmp_path, text)
    assert found == [
        " benchmarks: required, missing",
        "1: name: a study name is 1 to 64 letters, digits, '.', '_' or '-', starting with a "
        "letter or a digit",
    ]


def test_locate_follows_arrays_of_tables_dotted_keys_and_skips_multiline_strings() -> None:
    text = (
        'description = """\n'
        "[[agents]]\n"  # inside the string: no table
        'spec = "no"\n'
        '"""\n'
        "[[agents]]\n"
        'spec = "a"\n'
        "[[agents]]\n"
        "price.input = 1\n"
        "[agents.extra]\n"  # a sub-table of the last agent
        "top_k = 3\n"
    )
    assert locate(text, ("description",)) == 1
    assert locate(text, ("agents", 0, "spec")) == 6
    assert locate(text, ("agents", 1, "price", "input")) == 8
    assert locate(text, ("agents", 1, "extra", "top_k")) == 10
    assert locate(text, ("agents", 1, "spec")) == 7
    assert locate(text, ("benchmarks",)) is None


def test_a_file_nested_too_deeply_is_one_problem_not_a_recursion_error(tmp_path: Path) -> None:
    text = 'name = "deep"\nx = ' + "[" * 5000 + "]" * 5000 + "\n"
    assert problems_of(tmp_path, text) == [" not a study file: tables or arrays nested too deeply"]


def test_an_unknown_key_names_the_nearest_key_of_its_table(tmp_path: Path) -> None:
    text = (
        'name = "typos"\nconcurrenc = 3\n\n[[benchmarks]]\nname = "tac"\nepoch = 1\n\n'
        '[[agents]]\nspec = "openai/gpt-4o"\ntemprature = 0.2\nxyzzy = 1\n\n'
        '[user]\nspec = "openai/gpt-4o"\ntimeuot = 5\n'
    )
    assert problems_of(tmp_path, text) == [
        "2: concurrenc: unknown key (a typo? did you mean 'concurrency'?)",
        "6: benchmarks[1].epoch: unknown key (a typo? did you mean 'epochs'?)",
        "10: agents[1].temprature: unknown key (a typo? did you mean 'temperature'?)",
        "11: agents[1].xyzzy: unknown key",
        "15: user.timeuot: unknown key (a typo? did you mean 'timeout'?)",
    ]
