"""τ³'s banking domain as deedbench declares it, one `Tau2Domain` per retrieval variant.

The desk's toolkit is τ²'s composition: the banking tools (`KnowledgeTools`) with
the variant's search tools mixed in, as τ²'s ``build_tools`` picks them
(``KnowledgeToolsPlain`` for no_knowledge, full_kb and golden_retrieval, which
search nothing; ``KnowledgeToolsWithKBSearch`` for bm25; ``KnowledgeToolsWithGrep``
for grep_only; ``KnowledgeToolsWithKBSearchAndGrep`` for bm25_grep), so the agent
sees the tools in τ²'s order (the search tools first). The customer's tools act
on the same database (``shares_db``). Loading the database from a data folder also
points the search tools at that folder's knowledge base.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deedbench.benchmarks.servicedesk.procedure import Procedure
from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.benchmarks.tau2.banking.discovery import (
    read_log_allowlist,
    set_read_log_allowlist,
)
from deedbench.benchmarks.tau2.banking.retrieval import (
    DEFAULT_RETRIEVAL_VARIANT,
    RETRIEVAL_VARIANTS,
    GrepMixin,
    KBSearchMixin,
    KnowledgeSearch,
    RetrievalVariant,
    retrieval_variant,
)
from deedbench.benchmarks.tau2.banking.tools import KnowledgeTools
from deedbench.benchmarks.tau2.banking.user_tools import KnowledgeUserTools
from deedbench.benchmarks.tau2.domain import Tau2Domain

if TYPE_CHECKING:
    from deedbench.benchmarks.tau2.tasks import Tau2Task

__all__ = [
    "BANKING_PROCEDURE",
    "BANKING_PROCEDURE_RULES",
    "RETRIEVAL_VARIANTS",
    "BankingDomain",
    "KnowledgeToolsPlain",
    "KnowledgeToolsWithGrep",
    "KnowledgeToolsWithKBSearch",
    "KnowledgeToolsWithKBSearchAndGrep",
    "banking_domain",
    "banking_toolkit",
]


class KnowledgeToolsPlain(KnowledgeTools):
    """The banking tools and no search tool (no_knowledge, full_kb, golden_retrieval)."""

    tau2_module = "tau2.domains.banking_knowledge.retrieval_toolkits"


class KnowledgeToolsWithKBSearch(KBSearchMixin, KnowledgeTools):
    """The banking tools with ``KB_search`` (bm25)."""

    tau2_module = "tau2.domains.banking_knowledge.retrieval_toolkits"


class KnowledgeToolsWithGrep(GrepMixin, KnowledgeTools):
    """The banking tools with ``grep`` (grep_only)."""

    tau2_module = "tau2.domains.banking_knowledge.retrieval_toolkits"


class KnowledgeToolsWithKBSearchAndGrep(KBSearchMixin, GrepMixin, KnowledgeTools):
    """The banking tools with ``KB_search`` and ``grep`` (bm25_grep)."""

    tau2_module = "tau2.domains.banking_knowledge.retrieval_toolkits"


_COMPOSED: dict[tuple[bool, bool], type[KnowledgeTools]] = {
    (False, False): KnowledgeToolsPlain,
    (True, False): KnowledgeToolsWithKBSearch,
    (False, True): KnowledgeToolsWithGrep,
    (True, True): KnowledgeToolsWithKBSearchAndGrep,
}


def banking_toolkit(variant: RetrievalVariant) -> type[KnowledgeTools]:
    """The desk's toolkit class under `variant`, as τ²'s ``build_tools`` composes it."""
    composed = _COMPOSED[(variant.kb_search is not None, variant.grep is not None)]
    if issubclass(composed, KnowledgeSearch):
        # every offline variant's searches use τ²'s default settings, the classes' own
        if variant.kb_search is not None and variant.kb_search != composed.kb_spec:
            raise ValueError(f"{variant.name}: KB_search settings {variant.kb_search}")
        if variant.grep is not None and variant.grep != composed.grep_spec:
            raise ValueError(f"{variant.name}: grep settings {variant.grep}")
    return composed


BANKING_PROCEDURE_RULES: tuple[str, ...] = ()
"""None of the generic rules is what banking's policy demands of every task. It asks
for identity verification (two of four facts, then ``log_verification``) before a
customer's data is touched, but verifying means reading that data first, and many
tasks rightly call discoverable tools (a hand-off tool, a referral link) without
verifying anyone, so `authentication` would fail τ²'s own gold trajectories; no
authentication tool names the user, so `one_user` cannot apply; consent before a
change and one call per turn are not in its policy (the knowledge base asks for
confirmation in particular scenarios only); and a transfer does not end a τ²
episode, so `after_transfer` does not apply."""

BANKING_PROCEDURE = Procedure(
    personal_read_tools=frozenset(
        {
            "get_user_information_by_id",
            "get_user_information_by_name",
            "get_user_information_by_email",
            "get_referrals_by_user",
            "get_credit_card_transactions_by_user",
            "get_credit_card_accounts_by_user",
        }
    ),
    rules=BANKING_PROCEDURE_RULES,
)
"""The policy's roles beside the desk's tools' own (every tool that changes the state
says so, with what a proposal of it would name: τ²'s write tools, and the two generic
ones that record a tool given, in the database, or unlocked, in the episode): the
look-ups of a customer's data. No tool's result is the customer's id (the look-ups
answer with a listing, ``log_verification`` with a sentence), so there are no
`auth_tools`."""


@dataclass(frozen=True)
class BankingDomain(Tau2Domain):
    """τ³'s banking under one retrieval variant: the toolkit with its search tools, and
    the policy the variant assembles."""

    retrieval: str = DEFAULT_RETRIEVAL_VARIANT

    @property
    def variant(self) -> RetrievalVariant:
        return retrieval_variant(self.retrieval)

    def load(self, folder: Path) -> dict[str, Any]:
        """The database of `folder`; the search tools will search its knowledge base."""
        db = super().load(folder)
        if issubclass(self.toolkit, KnowledgeSearch):
            self.toolkit.read_knowledge_from(folder)
        return db

    def policy(self, folder: Path, task: Tau2Task | None = None) -> str:
        """The agent's policy, from `folder`'s prompts (and knowledge base, for full_kb and
        golden_retrieval; only golden_retrieval's depends on the `task`)."""
        return self.variant.policy(folder, task)


@cache
def banking_domain(retrieval: str = DEFAULT_RETRIEVAL_VARIANT) -> BankingDomain:
    """τ³'s banking under the retrieval variant `retrieval` (one of `RETRIEVAL_VARIANTS`;
    a `BenchmarkError` for another), made once per variant."""
    variant = retrieval_variant(retrieval)
    return BankingDomain(
        name="banking",
        tau2_name="banking_knowledge",
        toolkit=banking_toolkit(variant),
        user_toolkit=KnowledgeUserTools,
        shares_db=True,
        db_file="db.json",
        procedure=BANKING_PROCEDURE,
        retrieval=variant.name,
        prepare=_prepare,
    )


def _prepare(world: DeskWorld, task: Tau2Task) -> None:
    """The task's read-log allowlist, given to its environment before anything runs, as
    τ²'s runner passes it to every environment it builds for the task."""
    set_read_log_allowlist(world, read_log_allowlist(task))
