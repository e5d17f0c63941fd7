"""τ³ banking's retrieval variants: the agent's search tools and its policy, per variant.

τ³ runs its banking tasks under one of twenty "retrieval variants": what the agent
has to find things in the knowledge base with (``KB_search``, ranked by BM25 or by
an embedding model, optionally reranked by an LLM; ``grep``; a shell over the
documents as files; nothing) and how its policy is assembled from
``prompts/<template>.md`` (components substituted; for ``full_kb`` the whole
knowledge base inlined; for ``golden_retrieval`` the task's own required
documents). This module holds that registry and the parts deedbench can run
honestly, offline and exactly as τ² does:

- BM25 ranking through ``rank_bm25.BM25Okapi``, τ²'s own package, over the same
  tokens (``text.lower().split()``), keeping τ²'s top 10 with its tie order (the
  knowledge base's order);
- τ²'s grep: a case-insensitive regex (a pattern that does not compile is taken
  literally), documents ranked by number of matches, top 10;
- the search tools' texts, character for character, including the timing line
  τ²'s ``KB_search`` appends (measured here as τ² measures it, so it varies from
  run to run exactly as τ²'s does);
- the policy text of every variant whose prompt needs no model.

Variants that need a paid API (embeddings from OpenAI or OpenRouter, the LLM
reranker) or τ²'s sandbox runtime (the shell tool: Anthropic's ``srt`` with
bubblewrap) are listed in `UNSUPPORTED_VARIANTS` with the reason;
`retrieval_variant` refuses them with a `BenchmarkError` that says so.
"""

from __future__ import annotations

import re
import time
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np
from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

from deedbench.benchmarks.tau2.banking.knowledge import KnowledgeBase, knowledge_base
from deedbench.engine import tool
from deedbench.errors import BenchmarkError
from deedbench.files import read_text

if TYPE_CHECKING:
    from deedbench.benchmarks.tau2.tasks import Tau2Task

__all__ = [
    "ALL_RETRIEVAL_VARIANTS",
    "COMPONENTS_DIR",
    "DEFAULT_RETRIEVAL_VARIANT",
    "PROMPTS_DIR",
    "RETRIEVAL_VARIANTS",
    "UNSUPPORTED_VARIANTS",
    "Bm25Search",
    "GrepMixin",
    "GrepSearch",
    "GrepSpec",
    "KBSearchMixin",
    "KnowledgeSearch",
    "PipelineSpec",
    "PromptKind",
    "Ranked",
    "RetrievalTiming",
    "RetrievalVariant",
    "Search",
    "bm25_search",
    "build_policy",
    "format_full_knowledge_base",
    "grep_search",
    "grep_text",
    "kb_search_text",
    "load_component",
    "load_prompt_template",
    "retrieval_variant",
]

PROMPTS_DIR = "prompts"
COMPONENTS_DIR = "components"

# --- the searches ---------------------------------------------------------------------


@dataclass
class RetrievalTiming:
    """How long a search took, in milliseconds, as τ²'s pipeline times it."""

    input_preprocessing_ms: float = 0.0
    retrieval_ms: float = 0.0
    postprocessing_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return self.input_preprocessing_ms + self.retrieval_ms + self.postprocessing_ms


Ranked = list[tuple[str, float]]


class Search:
    """A search over one knowledge base, run the way τ²'s retrieval pipeline runs one:
    the ranking, merged by document, sorted by score (ties in ranking order), cut to
    `top_k` if asked, each stage timed. Neither offline variant preprocesses the query
    or postprocesses the ranking, but the empty stages are timed too, as τ²'s are:
    their few hundred nanoseconds are why τ²'s timing line always names a reranking."""

    def __init__(self, base: KnowledgeBase) -> None:
        records = base.records()
        if not records:
            raise BenchmarkError(f"the knowledge base in {base.folder} has no documents")
        self.ids = [doc_id for doc_id, _, _ in records]
        self.titles = {doc_id: title for doc_id, title, _ in records}
        self.contents = {doc_id: text or "" for doc_id, _, text in records}

    def rank(self, query: str) -> Ranked:
        """The retriever's ranking of the documents for `query`."""
        raise NotImplementedError

    def retrieve(self, query: str, top_k: int | None = None) -> tuple[Ranked, RetrievalTiming]:
        timing = RetrievalTiming()
        started = time.perf_counter()
        timing.input_preprocessing_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        best: dict[str, float] = {}
        for doc_id, score in self.rank(query):
            if doc_id not in best or score > best[doc_id]:
                best[doc_id] = score
        timing.retrieval_ms = (time.perf_counter() - started) * 1000
        ranked = sorted(best.items(), key=lambda item: item[1], reverse=True)
        if top_k is not None:
            ranked = ranked[:top_k]
        started = time.perf_counter()
        timing.postprocessing_ms = (time.perf_counter() - started) * 1000
        return ranked, timing

    def title(self, doc_id: str) -> str | None:
        return self.titles.get(doc_id)

    def content(self, doc_id: str) -> str | None:
        return self.contents.get(doc_id)


class Bm25Search(Search):
    """τ²'s BM25 retriever: ``BM25Okapi`` over lower-cased whitespace tokens."""

    def __init__(self, base: KnowledgeBase, top_k: int = 10) -> None:
        super().__init__(base)
        self.top_k = top_k
        self.bm25 = BM25Okapi([text.lower().split() for _, _, text in base.records()])

    def rank(self, query: str) -> Ranked:
        if not query or not query.strip():  # τ²'s test, so a falsy non-string finds nothing
            return []
        scores: np.ndarray = self.bm25.get_scores(query.lower().split())
        keep = min(self.top_k, len(self.ids))
        order = sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)[:keep]
        return [(self.ids[i], float(scores[i])) for i in order]


class GrepSearch(Search):
    """τ²'s grep retriever: documents by number of regex matches (the pattern taken
    literally when it does not compile), in knowledge-base order among equals."""

    def __init__(self, base: KnowledgeBase, top_k: int = 10, case_sensitive: bool = False) -> None:
        super().__init__(base)
        self.top_k = top_k
        self.case_sensitive = case_sensitive

    def rank(self, query: str) -> Ranked:
        if not query.strip():
            return []
        flags = 0 if self.case_sensitive else re.IGNORECASE
        with warnings.catch_warnings():  # ("possible nested set"): τ²'s are only printed
            warnings.simplefilter("ignore")
            try:
                pattern = re.compile(query, flags)
            except re.error:
                pattern = re.compile(re.escape(query), flags)
        found: Ranked = []
        for doc_id, text in self.contents.items():
            count = len(pattern.findall(text))
            if count:
                found.append((doc_id, float(count)))
        found.sort(key=lambda item: item[1], reverse=True)
        return found[: self.top_k]


@cache
def bm25_search(folder: Path, top_k: int = 10) -> Bm25Search:
    """The BM25 search over the knowledge base of domain folder `folder` (built once)."""
    return Bm25Search(knowledge_base(folder), top_k)


@cache
def grep_search(folder: Path, top_k: int = 10, case_sensitive: bool = False) -> GrepSearch:
    """The grep search over the knowledge base of domain folder `folder`."""
    return GrepSearch(knowledge_base(folder), top_k, case_sensitive)


def _listing(search: Search, ranked: Ranked) -> str:
    entries = []
    for number, (doc_id, score) in enumerate(ranked, 1):
        title = search.title(doc_id) or "Untitled"
        content = search.content(doc_id) or ""
        entries.append(
            f"{number}. {title}\n   ID: {doc_id}\n   Score: {score:.4f}\n   Content: {content}\n"
        )
    return "\n".join(entries)


def _timing_line(timing: RetrievalTiming) -> str:
    line = f"\n\n[Timing: retrieval={timing.retrieval_ms:.0f}ms"
    if timing.postprocessing_ms > 0:
        line += f", reranking={timing.postprocessing_ms:.0f}ms"
    return line + f", total={timing.total_ms:.0f}ms]"


def kb_search_text(search: Search, query: str, top_k: int | None = None) -> str:
    """What τ²'s ``KB_search`` answers: the documents found, then the timing line."""
    ranked, timing = search.retrieve(query, top_k)
    body = _listing(search, ranked) if ranked else "No relevant documents found."
    return body + _timing_line(timing)


def grep_text(search: Search, pattern: str) -> str:
    """What τ²'s ``grep`` answers (no timing line)."""
    ranked, _ = search.retrieve(pattern)
    if not ranked:
        return f"No matches found for pattern: {pattern}"
    return _listing(search, ranked)


# --- the tools, as mixins of a toolkit ------------------------------------------------


@dataclass(frozen=True)
class PipelineSpec:
    """A ``KB_search`` backend: BM25, or an embedding model; optionally LLM-reranked."""

    type: Literal["embedding", "bm25"]
    embedder_type: str | None = None
    embedder_model: str | None = None
    top_k: int = 10
    reranker: bool = False


@dataclass(frozen=True)
class GrepSpec:
    """The ``grep`` tool's settings."""

    top_k: int = 10
    case_sensitive: bool = False


class KnowledgeSearch:
    """What a toolkit's search tools search: the knowledge base of the domain folder
    its data was read from (`read_knowledge_from`, called as the database is loaded),
    else of ``$TAU2_DATA_DIR``'s. The folder is the class's, as the toolkit is."""

    knowledge_folder: ClassVar[Path | None] = None
    kb_spec: ClassVar[PipelineSpec] = PipelineSpec(type="bm25")
    grep_spec: ClassVar[GrepSpec] = GrepSpec()

    @classmethod
    def read_knowledge_from(cls, folder: Path) -> None:
        cls.knowledge_folder = Path(folder).resolve()

    @classmethod
    def _folder(cls) -> Path:
        if cls.knowledge_folder is None:
            from deedbench.benchmarks.tau2.data import domain_folder

            found = domain_folder(None, "banking_knowledge", "tasks", "tau2-banking")
            cls.knowledge_folder = found.resolve()
        return cls.knowledge_folder

    @property
    def _kb_pipeline(self) -> Search:
        spec = self.kb_spec
        if spec.type != "bm25" or spec.reranker:
            raise BenchmarkError(f"KB_search over {spec} cannot run offline")
        return bm25_search(self._folder(), spec.top_k)

    @property
    def _grep_pipeline(self) -> Search:
        spec = self.grep_spec
        return grep_search(self._folder(), spec.top_k, spec.case_sensitive)


class KBSearchMixin(KnowledgeSearch):
    """Gives a toolkit τ²'s ``KB_search`` (named as τ²'s mixin, so that a call's
    argument errors read ``KBSearchMixin.KB_search() ...`` as τ²'s do)."""

    @tool(kind="read")
    def KB_search(self, query: str) -> str:
        """Search the knowledge base for the documents most relevant to a query.

        Args:
            query: What to search for.
        """
        return kb_search_text(self._kb_pipeline, query)


class GrepMixin(KnowledgeSearch):
    """Gives a toolkit τ²'s ``grep``."""

    @tool(kind="read")
    def grep(self, pattern: str) -> str:
        """Find the knowledge base documents matching a regular expression, those with
        the most matches first, each in full.

        Args:
            pattern: A regular expression, matched ignoring case (e.g. 'late.*fee|waive').
        """
        return grep_text(self._grep_pipeline, pattern)


# --- the policy -----------------------------------------------------------------------

PromptKind = Literal["standard", "full_kb", "golden"]
"""How a variant's policy is assembled: components only; with the whole knowledge base
inlined (``{{full_knowledge_base}}``); with the task's required documents inlined
(``{{required_documents}}``)."""

_COMPONENT = re.compile(r"\{\{component:(\w+)\}\}")
_FULL_KB = re.compile(r"\{\{full_knowledge_base\}\}")


def _prompts(folder: Path) -> Path:
    return Path(folder) / PROMPTS_DIR


def load_component(folder: Path, name: str) -> str:
    """``prompts/components/<name>.md`` of the domain folder `folder`."""
    path = _prompts(folder) / COMPONENTS_DIR / f"{name}.md"
    if not path.exists():
        raise BenchmarkError(f"Component not found: {path}")
    return read_text(path)


def format_full_knowledge_base(base: KnowledgeBase) -> str:
    """Every document as a Markdown section, separated by rules, in τ²'s order."""
    return "\n\n---\n\n".join(f"## {doc.title}\n\n{doc.content}" for doc in base.all())


def load_prompt_template(folder: Path, template: str, base: KnowledgeBase | None = None) -> str:
    """A prompt template with its components substituted (once, not recursively) and,
    given a knowledge base, ``{{full_knowledge_base}}`` replaced by it. τ² makes that
    last replacement with ``re.sub`` and the text as the replacement *template*, so a
    backslash in a document would be read as an escape; so it is here."""
    path = _prompts(folder) / template
    if not path.exists():
        raise BenchmarkError(f"Prompt template not found: {path}")
    content = read_text(path)
    content = _COMPONENT.sub(lambda match: load_component(folder, match.group(1)), content)
    if base is not None and _FULL_KB.search(content):
        content = _FULL_KB.sub(format_full_knowledge_base(base), content)
    return content


def _required_documents(base: KnowledgeBase, task: Tau2Task | None) -> str:
    """The task's required documents (each named by title or else by id), as τ²'s
    golden prompt inlines them; names that match nothing are left out."""
    wanted = (task.required_documents or []) if task is not None else []
    by_title = {doc.title: doc for doc in base.all()}  # a repeated title: the last one
    by_id = {doc.id: doc for doc in base.all()}
    found = []
    for name in wanted:
        doc = by_title.get(name) or by_id.get(name)
        if doc is not None:
            found.append(f"## {doc.title}\n\n{doc.content}")
    return "\n\n---\n\n".join(found) if found else "(No documents provided)"


# --- the variants ---------------------------------------------------------------------


@dataclass(frozen=True)
class RetrievalVariant:
    """One of τ²'s retrieval variants: its prompt and its search tools."""

    name: str
    template: str
    """The file in ``prompts/`` its policy is assembled from."""
    prompt: PromptKind = "standard"
    kb_search: PipelineSpec | None = None
    grep: GrepSpec | None = None
    other_tools: tuple[str, ...] = ()
    """Search tools deedbench does not provide (``shell``, ``KB_search_dense``, ...)."""
    needs: str | None = None
    """Why deedbench cannot run it (None: it can, offline)."""

    @property
    def offline(self) -> bool:
        return self.needs is None

    @property
    def task_specific(self) -> bool:
        """Whether its policy depends on the task (``golden_retrieval``)."""
        return self.prompt == "golden"

    def policy(self, folder: Path, task: Tau2Task | None = None) -> str:
        return build_policy(self, folder, task)


_BM25 = PipelineSpec(type="bm25")
_QWEN = PipelineSpec(
    type="embedding", embedder_type="openrouter", embedder_model="qwen3-embedding-8b"
)
_OPENAI = PipelineSpec(
    type="embedding", embedder_type="openai", embedder_model="text-embedding-3-large"
)

_NEEDS_QWEN = (
    "it ranks by Qwen3-Embedding-8B embeddings of every document and query, computed "
    "through OpenRouter's paid API (OPENROUTER_API_KEY)"
)
_NEEDS_OPENAI = (
    "it ranks by OpenAI text-embedding-3-large embeddings of every document and query, "
    "computed through OpenAI's paid API (OPENAI_API_KEY)"
)
_NEEDS_RERANKER = (
    "its LLM reranker asks OpenAI's gpt-5.2 to score every document found, through "
    "OpenAI's paid API (OPENAI_API_KEY)"
)
_NEEDS_SHELL = (
    "its shell tool runs the agent's commands in τ²'s sandbox, Anthropic's sandbox-runtime "
    "(srt, with ripgrep, bubblewrap and socat), which deedbench does not drive"
)


def _reranked(spec: PipelineSpec) -> PipelineSpec:
    return PipelineSpec(spec.type, spec.embedder_type, spec.embedder_model, spec.top_k, True)


def _variants() -> dict[str, RetrievalVariant]:
    grep = GrepSpec()
    both = " and ".join
    found = [
        RetrievalVariant("no_knowledge", "no_knowledge.md"),
        RetrievalVariant("full_kb", "full_kb.md", prompt="full_kb"),
        RetrievalVariant("golden_retrieval", "required_docs.md", prompt="golden"),
        RetrievalVariant(
            "qwen_embeddings_grep",
            "classic_rag_qwen.md",
            kb_search=_QWEN,
            grep=grep,
            needs=_NEEDS_QWEN,
        ),
        RetrievalVariant(
            "openai_embeddings_grep",
            "classic_rag_openai.md",
            kb_search=_OPENAI,
            grep=grep,
            needs=_NEEDS_OPENAI,
        ),
        RetrievalVariant(
            "qwen_embeddings_reranker_grep",
            "classic_rag_qwen.md",
            kb_search=_reranked(_QWEN),
            grep=grep,
            needs=both([_NEEDS_QWEN, _NEEDS_RERANKER]),
        ),
        RetrievalVariant(
            "openai_embeddings_reranker_grep",
            "classic_rag_openai.md",
            kb_search=_reranked(_OPENAI),
            grep=grep,
            needs=both([_NEEDS_OPENAI, _NEEDS_RERANKER]),
        ),
        RetrievalVariant("bm25_grep", "classic_rag_bm25.md", kb_search=_BM25, grep=grep),
        RetrievalVariant(
            "bm25_reranker_grep",
            "classic_rag_bm25.md",
            kb_search=_reranked(_BM25),
            grep=grep,
            needs=_NEEDS_RERANKER,
        ),
        RetrievalVariant(
            "qwen_embeddings", "classic_rag_qwen_no_grep.md", kb_search=_QWEN, needs=_NEEDS_QWEN
        ),
        RetrievalVariant(
            "openai_embeddings",
            "classic_rag_openai_no_grep.md",
            kb_search=_OPENAI,
            needs=_NEEDS_OPENAI,
        ),
        RetrievalVariant(
            "qwen_embeddings_reranker",
            "classic_rag_qwen_no_grep.md",
            kb_search=_reranked(_QWEN),
            needs=both([_NEEDS_QWEN, _NEEDS_RERANKER]),
        ),
        RetrievalVariant(
            "openai_embeddings_reranker",
            "classic_rag_openai_no_grep.md",
            kb_search=_reranked(_OPENAI),
            needs=both([_NEEDS_OPENAI, _NEEDS_RERANKER]),
        ),
        RetrievalVariant("bm25", "classic_rag_bm25_no_grep.md", kb_search=_BM25),
        RetrievalVariant(
            "bm25_reranker",
            "classic_rag_bm25_no_grep.md",
            kb_search=_reranked(_BM25),
            needs=_NEEDS_RERANKER,
        ),
        RetrievalVariant("grep_only", "grep_only.md", grep=grep),
        RetrievalVariant(
            "terminal_use", "agentic_search.md", other_tools=("shell",), needs=_NEEDS_SHELL
        ),
        RetrievalVariant(
            "terminal_use_write",
            "agentic_search_write.md",
            other_tools=("shell",),
            needs=_NEEDS_SHELL,
        ),
        RetrievalVariant(
            "alltools",
            "all_tools.md",
            other_tools=("KB_search_bm25", "KB_search_dense", "shell"),
            needs=both([_NEEDS_OPENAI, _NEEDS_SHELL]),
        ),
        RetrievalVariant(
            "alltools-qwen",
            "all_tools.md",
            other_tools=("KB_search_bm25", "KB_search_dense", "shell"),
            needs=both([_NEEDS_QWEN, _NEEDS_SHELL]),
        ),
    ]
    return {variant.name: variant for variant in found}


_REGISTRY: dict[str, RetrievalVariant] = _variants()
_ALIASES = {"AllTools": "alltools"}

ALL_RETRIEVAL_VARIANTS: tuple[str, ...] = tuple(_REGISTRY)
"""Every variant τ² defines, in its registry's order."""
RETRIEVAL_VARIANTS: tuple[str, ...] = tuple(n for n, v in _REGISTRY.items() if v.offline)
"""The variants deedbench runs: those that need no model, API or sandbox."""
UNSUPPORTED_VARIANTS: dict[str, str] = {n: v.needs for n, v in _REGISTRY.items() if v.needs}
"""The others, each with what it would need."""
DEFAULT_RETRIEVAL_VARIANT = "bm25"
"""deedbench's default: τ²'s own (``alltools``) needs OpenAI's embeddings and a sandbox;
``bm25`` is the offline variant with τ²'s ``KB_search``."""


def retrieval_variant(name: str) -> RetrievalVariant:
    """The variant named `name` (τ²'s names and alias); a `BenchmarkError` for a name τ²
    does not know, or for a variant deedbench cannot run, saying why."""
    canonical = _ALIASES.get(name, name)
    variant = _REGISTRY.get(canonical)
    if variant is None:
        raise BenchmarkError(
            f"Unknown retrieval variant: {name!r}. Available: {sorted(RETRIEVAL_VARIANTS)}"
        )
    if variant.needs is not None:
        raise BenchmarkError(
            f"the retrieval variant {name!r} cannot run in deedbench: {variant.needs}. "
            f"Offline variants: {', '.join(RETRIEVAL_VARIANTS)}"
        )
    return variant


def build_policy(variant: RetrievalVariant, folder: Path, task: Tau2Task | None = None) -> str:
    """The agent's policy under `variant`, from the domain folder `folder`, as τ²'s
    ``build_policy`` assembles it; `task` matters only to ``golden_retrieval`` (without
    one, its documents read "(No documents provided)", as in τ²)."""
    if variant.prompt == "full_kb":
        policy = load_prompt_template(folder, variant.template, knowledge_base(folder))
    elif variant.prompt == "golden":
        policy = load_prompt_template(folder, variant.template)
        documents = _required_documents(knowledge_base(folder), task)
        policy = policy.replace("{{required_documents}}", documents)
    else:
        policy = load_prompt_template(folder, variant.template)
    if not policy.strip():
        raise BenchmarkError(
            f"Policy is empty for retrieval variant '{variant.name}'. "
            "Ensure the prompt template exists and is properly configured."
        )
    return policy
