"""The telecom agent's policy as τ²'s environment assembles it, read from τ²'s data folder.

τ² joins a main policy and a technical-support policy, each wrapped in its tag.
The technical support comes as a manual (τ²'s default, domain ``telecom``) or as a
workflow (``telecom-workflow``); in solo mode (the agent works the customer's phone
itself, from a ticket) the main policy and the workflow are their solo versions,
while the manual is the same file. The texts are τ²'s files, read at run time and
never copied into deedbench.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from deedbench.files import read_text

__all__ = ["VARIANTS", "Variant", "policy", "policy_files"]

Variant = Literal["manual", "workflow"]
VARIANTS: tuple[Variant, ...] = ("manual", "workflow")


def policy_files(variant: str = "manual", solo: bool = False) -> tuple[str, str]:
    """The main and technical-support policy files τ² reads for this variant; an unknown
    variant fails with τ²'s message."""
    main = "main_policy_solo.md" if solo else "main_policy.md"
    if variant == "manual":
        return main, "tech_support_manual.md"
    if variant == "workflow":
        return main, "tech_support_workflow_solo.md" if solo else "tech_support_workflow.md"
    raise ValueError(f"Invalid policy type: {variant}")


def policy(folder: Path, variant: str = "manual", solo: bool = False) -> str:
    """The policy text τ²'s telecom environment gives the agent, from the domain's data
    `folder` (``data/tau2/domains/telecom``)."""
    main_file, support_file = policy_files(variant, solo)
    main = read_text(folder / main_file)
    support = read_text(folder / support_file)
    return (
        "<main_policy>\n"
        + main
        + "\n</main_policy>\n"
        + "<tech_support_policy>\n"
        + support
        + "\n</tech_support_policy>"
    )
