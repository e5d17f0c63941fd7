"""τ³ banking's knowledge base: the documents the agent searches, read from τ²'s data.

The knowledge base is not part of the database (nothing hashes it, no tool changes
it): it is the folder ``documents/`` of the domain's data, one JSON file per
document (``id``, ``title``, ``content``), read at run time and never copied into
deedbench. τ² reads the folder in the order the file system lists it
(``Path.glob``), keyed by id, and that order matters: it breaks ties in the search
rankings and orders the full knowledge base inlined in a prompt. This module reads
it the same way, once per folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ValidationError

from deedbench.errors import BenchmarkError
from deedbench.files import parse_json, read_text

__all__ = ["DOCUMENTS_DIR", "Document", "KnowledgeBase", "knowledge_base"]

DOCUMENTS_DIR = "documents"
"""Where a domain folder keeps its knowledge base."""


class Document(BaseModel):
    """One document, validated as τ²'s ``Document`` is (other fields are ignored)."""

    id: str
    title: str
    content: str


@dataclass(frozen=True)
class KnowledgeBase:
    """The documents of one folder, by id, in the order τ² holds them."""

    documents: dict[str, Document]
    folder: Path

    def all(self) -> list[Document]:
        """Every document, in τ²'s order (``get_all_documents``)."""
        return list(self.documents.values())

    def records(self) -> list[tuple[str, str, str]]:
        """(id, title, text) of every document: what τ²'s search indexes are built from."""
        return [(doc.id, doc.title, doc.content) for doc in self.documents.values()]


def knowledge_base(folder: Path) -> KnowledgeBase:
    """The knowledge base of the domain folder `folder` (read once per folder)."""
    return _read(Path(folder).resolve())


@cache
def _read(folder: Path) -> KnowledgeBase:
    where = folder / DOCUMENTS_DIR
    documents: dict[str, Document] = {}
    if where.is_dir():
        for path in where.glob("*.json"):  # the file system's order, as τ²'s loader
            try:
                raw = parse_json(read_text(path))
                doc = Document.model_validate(raw)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise BenchmarkError(
                    f"knowledge base document {path} cannot be read: {exc}"
                ) from None
            except ValidationError as exc:
                raise BenchmarkError(
                    f"knowledge base document {path} is not a document: {exc}"
                ) from None
            documents[doc.id] = doc  # a repeated id keeps its first place, its last text
    return KnowledgeBase(documents, folder)
