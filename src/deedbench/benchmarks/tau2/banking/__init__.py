"""τ³'s banking domain (τ²'s ``banking_knowledge``) on deedbench's τ² framework.

`schema.py` holds deedbench's copy of τ²'s database model (``TransactionalDB``),
`db_query.py` τ²'s query helpers over an episode's database, `ids.py` its
deterministic ids and fixed clock, and `tools.py` the two toolkits, the desk's
(`KnowledgeTools`, with its discoverable tools) and the customer's
(`KnowledgeUserTools`), which act on one database. `knowledge.py` reads the
knowledge base (the data folder's ``documents/``, at run time), `retrieval.py`
holds τ²'s retrieval variants: the search tools each gives the agent (``KB_search``
by BM25, ``grep``), their exact answers, and how each assembles the agent's policy
from ``prompts/``. `domain.py` composes the desk's toolkit per variant as τ² does
and declares the domain (`banking_domain`), with its procedure.
"""

from deedbench.benchmarks.tau2.banking.discovery import (
    read_log_allowlist,
    set_read_log_allowlist,
)
from deedbench.benchmarks.tau2.banking.domain import (
    BANKING_PROCEDURE,
    BANKING_PROCEDURE_RULES,
    BankingDomain,
    KnowledgeToolsPlain,
    KnowledgeToolsWithGrep,
    KnowledgeToolsWithKBSearch,
    KnowledgeToolsWithKBSearchAndGrep,
    banking_domain,
    banking_toolkit,
)
from deedbench.benchmarks.tau2.banking.knowledge import Document, KnowledgeBase, knowledge_base
from deedbench.benchmarks.tau2.banking.retrieval import (
    ALL_RETRIEVAL_VARIANTS,
    DEFAULT_RETRIEVAL_VARIANT,
    RETRIEVAL_VARIANTS,
    UNSUPPORTED_VARIANTS,
    GrepMixin,
    KBSearchMixin,
    RetrievalVariant,
    build_policy,
    retrieval_variant,
)
from deedbench.benchmarks.tau2.banking.schema import TABLE_NAMES, DatabaseTable, TransactionalDB
from deedbench.benchmarks.tau2.banking.tools import KnowledgeTools
from deedbench.benchmarks.tau2.banking.user_tools import KnowledgeUserTools

__all__ = [
    "ALL_RETRIEVAL_VARIANTS",
    "BANKING_PROCEDURE",
    "BANKING_PROCEDURE_RULES",
    "DEFAULT_RETRIEVAL_VARIANT",
    "RETRIEVAL_VARIANTS",
    "TABLE_NAMES",
    "UNSUPPORTED_VARIANTS",
    "BankingDomain",
    "DatabaseTable",
    "Document",
    "GrepMixin",
    "KBSearchMixin",
    "KnowledgeBase",
    "KnowledgeTools",
    "KnowledgeToolsPlain",
    "KnowledgeToolsWithGrep",
    "KnowledgeToolsWithKBSearch",
    "KnowledgeToolsWithKBSearchAndGrep",
    "KnowledgeUserTools",
    "RetrievalVariant",
    "TransactionalDB",
    "banking_domain",
    "banking_toolkit",
    "build_policy",
    "knowledge_base",
    "read_log_allowlist",
    "retrieval_variant",
    "set_read_log_allowlist",
]
