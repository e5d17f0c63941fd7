"""The tools a τ² episode shows each side, as τ² shows them.

τ²'s agent is given its toolkit's tools that are not discoverable, in τ²'s order,
each as ``openai_schema`` builds it; in solo mode the customer's too, then the stop
tool. τ²'s simulated user is given its own toolkit's, limited to the task's
``user_tools`` when the task names some; when that leaves none, or names a tool the
toolkit lacks, τ² gives the user no tools at all (``get_user_tools(...) or None``),
and its plain guidelines. With the user's τ² source (`Tau2Texts`) each tool's JSON
is τ²'s own; without, deedbench's tools' own specs, in the same order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deedbench.benchmarks.tau2.source.locate import find_source
from deedbench.benchmarks.tau2.source.texts import Tau2Texts, load_texts
from deedbench.benchmarks.tau2.source.toolkits import ToolText
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.engine import Tool
from deedbench.errors import BenchmarkError

if TYPE_CHECKING:
    from deedbench.benchmarks.tau2.domain import Tau2Domain

__all__ = [
    "DOCS_KEY",
    "check_toolkit",
    "discoverable_docs",
    "domain_texts",
    "listed_specs",
    "user_tool_names",
    "world_session",
]

DOCS_KEY = "tau2_tool_docs"
"""Session key of an episode's worlds: the discoverable tools' docstrings from the user's
τ² source, by name (`Tau2Data.session`), which unlocking or giving a tool shows."""


def _theirs(texts: Tau2Texts, toolkit: type[Toolkit]) -> list[ToolText] | None:
    """τ²'s tools of the toolkit's τ² class, from the source (None: no source, or no τ²
    class)."""
    name = toolkit.tau2_toolkit()
    return texts.tools(name) if name is not None else None


def _listed(toolkit: type[Toolkit]) -> list[Tool[..., Any]]:
    return [t for t in toolkit.tools() if t.listed]


def check_toolkit(texts: Tau2Texts, toolkit: type[Toolkit]) -> None:
    """A `BenchmarkError` when τ²'s source gives the toolkit other tools than deedbench
    runs (a τ² of another version): the model would be shown tools that do not exist,
    or not shown some that do."""
    found = _theirs(texts, toolkit)
    if found is None:
        return
    theirs = {t.name for t in found if not t.discoverable}
    ours = {t.name for t in _listed(toolkit)}
    hidden = {t.name for t in found if t.discoverable}
    unlisted = {t.name for t in toolkit.tools() if not t.listed}
    if theirs != ours or not hidden <= unlisted:
        missing = sorted(theirs - ours) + sorted(hidden - unlisted)
        extra = sorted(ours - theirs)
        raise BenchmarkError(
            f"{texts.origin}: {toolkit.__name__} there has tools deedbench does not run "
            f"({', '.join(missing) or 'none'}) and lacks some it does "
            f"({', '.join(extra) or 'none'}); it is another version of τ² than deedbench "
            "reproduces (v1.0.1). -T source=none shows deedbench's own wording instead"
        )


def listed_specs(
    texts: Tau2Texts, toolkit: type[Toolkit], include: Collection[str] | None = None
) -> list[dict[str, Any]]:
    """The toolkit's listed tools as the model is shown them, in τ²'s order (only those
    named in `include`, when given)."""
    found = _theirs(texts, toolkit)
    if found is None:
        return [t.spec for t in _listed(toolkit) if include is None or t.name in include]
    return [t.spec for t in found if not t.discoverable and (include is None or t.name in include)]


def user_tool_names(toolkit: type[Toolkit] | None, given: Sequence[str] | None) -> list[str]:
    """The customer's tools in a task, as τ²'s ``build_user`` picks them: all its listed
    tools, or those the task names; none when that leaves none or the task names a tool
    the toolkit does not list (τ²'s lookup raises, and it gives the user no tools)."""
    if toolkit is None:
        return []
    names = [t.name for t in _listed(toolkit)]
    if given is None:
        return names
    if set(given) - set(names):
        return []
    return [name for name in names if name in given]


def discoverable_docs(texts: Tau2Texts, toolkit: type[Toolkit]) -> dict[str, str] | None:
    """Each discoverable tool's docstring in τ²'s source, by name (what unlocking it shows
    the agent); None without a source (deedbench's tools' own docstrings are used)."""
    found = _theirs(texts, toolkit)
    if found is None:
        return None
    return {t.name: t.doc for t in found if t.discoverable}


def _toolkits(domain: Tau2Domain) -> list[type[Toolkit]]:
    return [kit for kit in (domain.toolkit, domain.user_toolkit) if kit is not None]


def domain_texts(domain: Tau2Domain, folder: Path, given: str | None) -> Tau2Texts:
    """The texts a run of `domain` shows its models: read from the τ² source `given`
    (``-T source``), else the checkout holding `folder` (the domain's data), else an
    installed ``tau2``; deedbench's own wording where there is none. A `BenchmarkError`
    when the source cannot be read or is another version of τ²."""
    kits = _toolkits(domain)
    names = tuple(name for kit in kits if (name := kit.tau2_toolkit()) is not None)
    texts = load_texts(find_source(given, folder), names)
    for kit in kits:
        check_toolkit(texts, kit)
    return texts


def world_session(texts: Tau2Texts, domain: Tau2Domain) -> dict[str, Any]:
    """What an episode's worlds start their session with (`Tau2Data.session`): the
    discoverable tools' docstrings from the source, when the domain has such tools."""
    docs: dict[str, str] = {}
    for kit in _toolkits(domain):
        docs.update(discoverable_docs(texts, kit) or {})
    return {DOCS_KEY: docs} if docs else {}
