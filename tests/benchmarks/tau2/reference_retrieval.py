"""Run τ³ banking's own retrieval on search calls and assemble its policies, for the
differential tests of deedbench's banking retrieval (``test_banking_retrieval.py``).

Like ``reference_driver.py``, this runs in τ²'s Python (3.12, τ²'s source and the
import-only stubs on the path, ``TAU2_DATA_DIR`` set), never in deedbench's. It
reads a JSON spec and writes, per retrieval variant, what τ²'s environment for that
variant makes: the agent's tools (names, in order), the policy (without a task, and
per task for golden_retrieval), and every search call's result as ``get_response``
gives it (content and error flag; a tool the variant lacks is an error too):

    {"variants": ["bm25", ...], "tasks": [<τ² task>, ...],
     "calls": {"bm25": {"KB_search": [{...arguments...}, ...]}, "grep_only": {"grep": [...]}}}

Usage: python reference_retrieval.py SPEC.json OUT.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from loguru import logger

logger.remove()
from tau2.data_model.message import ToolCall  # noqa: E402
from tau2.data_model.tasks import Task  # noqa: E402
from tau2.domains.banking_knowledge.environment import (  # noqa: E402
    get_db,
    get_environment,
    get_knowledge_base,
)
from tau2.domains.banking_knowledge.retrieval import (  # noqa: E402
    build_policy,
    resolve_variant,
)


def run_variant(name: str, spec: dict[str, Any], db: Any, base: Any) -> dict[str, Any]:
    env = get_environment(db=db.model_copy(deep=True), retrieval_variant=name)
    tools = [t.name for t in env.get_tools()]
    out: dict[str, Any] = {"tools": tools, "policy": env.policy, "calls": {}}
    variant = resolve_variant(name)
    if name == "golden_retrieval":
        out["golden"] = {
            raw["id"]: build_policy(variant, base, Task.model_validate(raw))
            for raw in spec.get("tasks", [])
        }
    for tool_name, calls in spec.get("calls", {}).get(name, {}).items():
        rows = []
        for number, arguments in enumerate(calls):
            call = ToolCall(
                id=f"call_{number}", name=tool_name, arguments=arguments, requestor="assistant"
            )
            answer = env.get_response(call)
            rows.append({"content": answer.content, "error": answer.error})
        out["calls"][tool_name] = rows
    return out


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as handle:
        spec = json.load(handle)
    db, base = get_db(), get_knowledge_base()
    results = {name: run_variant(name, spec, db, base) for name in spec["variants"]}
    with open(target, "w", encoding="utf-8") as handle:
        json.dump(results, handle)


if __name__ == "__main__":
    main()
