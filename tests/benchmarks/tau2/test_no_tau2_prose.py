"""deedbench holds none of τ²'s prose: no sentence of seven plain words or more from the texts τ²
shows its models (its tools' and models' docstrings, its parameter descriptions, its
agent's, solo agent's and judge's prompts, its greeting) appears in deedbench's source or
in this page of its documentation. deedbench reads them from the user's τ² at run time.

What τ²'s tools answer (their error and success messages) is behaviour deedbench
reproduces, not prose it shows as a description: a sentence that τ²'s code also writes
outside a docstring is not counted, even where its docstrings repeat it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from . import _reference

CHECKOUT = Path(__file__).resolve().parents[3]
SOURCE = _reference.SOURCE / "tau2"
TEXT_FILES = [
    "domains/airline/tools.py",
    "domains/airline/data_model.py",
    "domains/retail/tools.py",
    "domains/retail/data_model.py",
    "domains/telecom/tools.py",
    "domains/telecom/user_tools.py",
    "domains/telecom/data_model.py",
    "domains/telecom/user_data_model.py",
    "domains/banking_knowledge/tools.py",
    "domains/banking_knowledge/retrieval_mixins.py",
    "domains/banking_knowledge/data_model.py",
    "environment/toolkit.py",
    "agent/llm_agent.py",
    "orchestrator/orchestrator.py",
    "evaluator/evaluator_nl_assertions.py",
]
WORDS = 7
PAGE = "tau2-what-the-model-sees.md"


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


_WORD = re.compile(r"[a-z]+[,.;:!?)]*")


def _sentences(text: str) -> set[str]:
    """Its sentences (and list items, and argument lines) of `WORDS` plain words or more:
    a list of values or names (``'lost', 'stolen', 'expired'``) is a fact, not prose."""
    parts = re.split(r"(?<=[.!?:;])\s+|\n\s*\n|\n\s*[-*]\s+|\n(?=\s*\w+\s*(?:\([^)]*\))?:)", text)
    found = set()
    for part in parts:
        sentence = _normal(part)
        if sum(bool(_WORD.fullmatch(word)) for word in sentence.split()) >= WORDS:
            found.add(sentence)
    return found


def _prose(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The sentences of what τ² shows as prose in one module, and of its other strings."""
    shown: set[str] = set()
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
                if isinstance(body[0].value.value, str):
                    shown |= _sentences(body[0].value.value)
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Field":
            for keyword in node.keywords:
                if keyword.arg == "description" and isinstance(keyword.value, ast.Constant):
                    shown |= _sentences(str(keyword.value.value))
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if re.search("PROMPT|INSTRUCTION|prompt|MESSAGE", name):
                for part in ast.walk(node.value):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        shown |= _sentences(part.value)
                        docstrings.add(id(part))
    other: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            other |= _sentences(node.value)
    return shown, other


def _ours() -> str:
    """deedbench's source and this page, as one text: whitespace normalised, adjacent
    string literals joined (as Python joins them)."""
    files = [*sorted((CHECKOUT / "src").rglob("*.py")), CHECKOUT / "docs" / PAGE]
    text = _normal("\n".join(path.read_text(encoding="utf-8") for path in files if path.is_file()))
    return re.sub(r"[\"']\s*(?:f|rf|fr|r)?[\"']", "", text)


def test_no_sentence_of_taus_prose_is_in_deedbench() -> None:
    if not SOURCE.is_dir():
        pytest.fail(f"τ²'s source is not at {SOURCE}")
    shown: set[str] = set()
    behaviour: set[str] = set()
    for name in TEXT_FILES:
        found, other = _prose(ast.parse((SOURCE / name).read_text(encoding="utf-8")))
        shown |= found
        behaviour |= other
    prose = shown - behaviour
    assert len(prose) > 500  # the texts are there to be found
    ours = _ours()
    copied = sorted(sentence for sentence in prose if sentence in ours)
    assert copied == [], f"{len(copied)} of τ²'s sentences in deedbench: {copied[:8]}"


def test_the_greeting_and_the_judge_prompt_are_not_in_deedbench() -> None:
    ours = _ours()
    for text in ("Hi! How can I help you today?", "You will be given a list of expected outcomes"):
        assert _normal(text) not in ours
