"""τ³ banking's retrieval against τ²'s own: search results and policies, variant by variant.

For every offline retrieval variant, τ²'s environment for it (``reference_retrieval.py``,
run in τ²'s venv) and deedbench's (`banking_domain`) answer the same search calls:
queries made of words from the documents, sentences from the tasks, titles, regexes,
empty and odd ones, wrong types, missing and extra arguments. Every answer must be
the same text with the same error flag, except the milliseconds of ``KB_search``'s
timing line, which τ² measures on every call (the line itself must be there, shaped
the same). The agent's tool names, in order, and the policy each variant assembles
(per task for golden_retrieval) must be τ²'s, character for character.
"""

from __future__ import annotations

import json
import random
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from deedbench.benchmarks.tau2.banking import (
    RETRIEVAL_VARIANTS,
    UNSUPPORTED_VARIANTS,
    banking_domain,
)
from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.errors import BenchmarkError
from deedbench.records import ToolCall

from . import _reference
from ._reference import domain_data

pytestmark = pytest.mark.reference("tau2")

FOLDER = domain_data("banking_knowledge")
SCRIPT = Path(__file__).with_name("reference_retrieval.py")
SEED = 20251114
TIMING = re.compile(r"=\d+ms")


def _timeless(text: Any) -> Any:
    return TIMING.sub("=<n>ms", text) if isinstance(text, str) else text


def _documents() -> list[dict[str, Any]]:
    found = []
    for path in sorted((FOLDER / "documents").glob("*.json")):
        found.append(json.loads(path.read_text(encoding="utf-8")))
    return found


def _task_dicts() -> list[dict[str, Any]]:
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((FOLDER / "tasks").glob("task_*.json"))
    ]


def _task_sentences(tasks: list[dict[str, Any]]) -> list[str]:
    sentences: list[str] = []
    for task in tasks:
        scenario = task.get("user_scenario") or {}
        texts = [str(scenario.get("instructions") or "")]
        criteria = task.get("evaluation_criteria") or {}
        texts += [str(a) for a in criteria.get("nl_assertions") or []]
        for text in texts:
            sentences += [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    return sentences


ODD_QUERIES: list[Any] = [
    "",
    " ",
    "   \t\n ",
    "\n",
    None,
    0,
    1,
    -3,
    1.5,
    True,
    False,
    [],
    ["credit card"],
    {},
    {"query": "fee"},
    "ÉCLAIR Straße İstanbul",
    "ﬁnance",
    "💳 card",
    "CREDIT CARD",
    "credit-card",
    "credit\u00a0card",
    "a" * 300,
    "the the the the",
    "of",
    "Rho-Bank",
    "rho-bank+",
    "$100,000",
    "APR?",
    "(fee)",
    "zzzqqqxxy",
    "doc_credit_cards_crypto-cash_back_009",
]

ODD_PATTERNS: list[Any] = [
    "",
    "   ",
    "\n",
    None,
    0,
    7,
    True,
    [],
    ["fee"],
    {},
    "(",
    ")",
    "[",
    "[a-",
    "*",
    "+fee",
    "x**",
    "\\",
    "a{2,}",
    "a{99999}",
    ".*",
    "a*",
    "^",
    "$",
    "\\b",
    "\\d+",
    "\\$\\d+",
    "fee|charge",
    "late.*fee",
    "(?i)FEE",
    "(?-i:Fee)",
    "(?L)fee",
    "(?a)fee",
    "(?P<w>e)(?P=w)",
    "(?<=late )fee",
    "(?<!no )annual fee",
    "(a)(b)?",
    "[[:alpha:]]",
    "\\p{L}",
    "ÉCLAIR",
    "ﬁ",
    "İ",
    "straße",
    "Rho-Bank+",
    "rho.bank",
    "doc_credit_cards",
    "zzzqqqxxy",
]


def _calls() -> dict[str, list[dict[str, Any]]]:
    """Several hundred arguments for KB_search and for grep, seeded."""
    rng = random.Random(SEED)
    documents = _documents()
    tasks = _task_dicts()
    sentences = _task_sentences(tasks)
    words = [w for doc in documents for w in doc["content"].split()]
    titles = [doc["title"] for doc in documents]
    queries: list[Any] = list(ODD_QUERIES)
    for _ in range(120):
        size = rng.randint(1, 6)
        picked = rng.sample(words, size)
        if rng.random() < 0.3:
            picked = [w.upper() if rng.random() < 0.5 else w.capitalize() for w in picked]
        queries.append(" ".join(picked))
    queries += rng.sample(titles, 40)
    queries += [" ".join(t.split()[: rng.randint(1, 3)]) for t in rng.sample(titles, 30)]
    queries += rng.sample(sentences, 70)
    queries.append(documents[0]["content"])
    queries.append(" \n ".join(rng.sample(words, 40)))
    kb = [{"query": q} for q in queries]
    kb += [
        {},
        {"query": "fee", "k": 3},
        {"query": "fee", "top_k": 5},
        {"q": "fee"},
        {"query": "fee", "extra": None},
    ]
    patterns: list[Any] = list(ODD_PATTERNS)
    for _ in range(80):
        patterns.append(rng.choice(words))
    for _ in range(40):
        first, second = rng.sample(words, 2)
        patterns.append(f"{re.escape(first)}|{re.escape(second)}")
    for _ in range(30):
        patterns.append(f"{rng.choice(words)}.*{rng.choice(words)}")
    patterns += rng.sample(titles, 20)
    patterns += [s[:40] for s in rng.sample(sentences, 30)]
    grep = [{"pattern": p} for p in patterns]
    grep += [{}, {"pattern": "fee", "k": 2}, {"query": "fee"}, {"pattern": "fee", "x": 1}]
    return {"KB_search": kb, "grep": grep}


def _plan() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The calls each variant answers: every generated call where a variant has the tool
    alone, a seeded sample where bm25_grep has both (the same searches, composed)."""
    calls = _calls()
    rng = random.Random(SEED + 1)
    both = {tool: rng.sample(found, 60) for tool, found in calls.items()}
    return {
        "bm25": {"KB_search": calls["KB_search"]},
        "grep_only": {"grep": calls["grep"]},
        "bm25_grep": both,
        "no_knowledge": {"KB_search": calls["KB_search"][:5], "grep": calls["grep"][:5]},
    }


@cache
def _theirs() -> dict[str, Any]:
    """What τ²'s own environments make of every call, per variant (one τ² process)."""
    spec = {"variants": list(RETRIEVAL_VARIANTS), "tasks": _task_dicts(), "calls": _plan()}
    result: dict[str, Any] = _reference.run_script(SCRIPT, spec)
    return result


@pytest.fixture(scope="module")
def theirs() -> dict[str, Any]:
    return _theirs()


def _ours(variant: str, tool: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    data = Tau2Data(banking_domain(variant), FOLDER, "tau2-banking")
    environment = data.fresh()
    rows = []
    for number, arguments in enumerate(calls):
        call = ToolCall.decoded(f"call_{number}", tool, arguments)
        answer = environment.respond(call, "assistant")
        rows.append({"content": answer.content, "error": answer.error})
    return rows


def test_search_results_are_tau2s(theirs: dict[str, Any]) -> None:
    found: list[str] = []
    compared = 0
    for variant, tools in _plan().items():
        for tool, calls in tools.items():
            rows = theirs[variant]["calls"][tool]
            mine = _ours(variant, tool, calls)
            assert len(mine) == len(rows)
            for arguments, ours, other in zip(calls, mine, rows, strict=True):
                compared += 1
                if ours["error"] != other["error"] or _timeless(ours["content"]) != _timeless(
                    other["content"]
                ):
                    found.append(
                        f"{variant} {tool}({arguments!r}): deedbench "
                        f"{ours['content'][:300]!r} ({ours['error']}) τ² "
                        f"{other['content'][:300]!r} ({other['error']})"
                    )
    print(f"{compared} search calls compared, {len(found)} differences")
    assert compared > 600
    assert not found, "\n".join(found[:20])


def test_kb_search_has_tau2s_timing_line(theirs: dict[str, Any]) -> None:
    line = re.compile(r"\n\n\[Timing: retrieval=\d+ms, reranking=\d+ms, total=\d+ms\]$")
    answered = [r for r in theirs["bm25"]["calls"]["KB_search"] if not r["error"]]
    assert answered and all(line.search(r["content"]) for r in answered)
    mine = _ours("bm25", "KB_search", [{"query": "late fee"}, {"query": ""}])
    assert all(line.search(r["content"]) for r in mine)


def test_tools_are_tau2s(theirs: dict[str, Any]) -> None:
    for variant in RETRIEVAL_VARIANTS:
        tools = [t.name for t in banking_domain(variant).desk.agent_tools if t.listed]
        assert tools == theirs[variant]["tools"], variant


def test_policies_are_tau2s(theirs: dict[str, Any]) -> None:
    for variant in RETRIEVAL_VARIANTS:
        policy = banking_domain(variant).policy(FOLDER)
        assert policy == theirs[variant]["policy"], variant


def test_golden_policies_are_tau2s(theirs: dict[str, Any]) -> None:
    domain = banking_domain("golden_retrieval")
    golden = theirs["golden_retrieval"]["golden"]
    tasks = _task_dicts()
    assert len(golden) == len(tasks)
    for raw in tasks:
        task = Tau2Task.model_validate(raw)
        assert domain.policy(FOLDER, task) == golden[raw["id"]], raw["id"]


def test_unsupported_variants_say_why() -> None:
    assert "bm25" in RETRIEVAL_VARIANTS
    for name, reason in UNSUPPORTED_VARIANTS.items():
        with pytest.raises(BenchmarkError, match="cannot run in deedbench"):
            banking_domain(name)
        assert reason
    with pytest.raises(BenchmarkError, match="Unknown retrieval variant"):
        banking_domain("bm26")
