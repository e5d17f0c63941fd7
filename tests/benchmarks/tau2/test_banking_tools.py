"""deedbench's τ² banking tools (τ³'s ``banking_knowledge``) against τ²'s own.

Every task's gold actions from its start (both requestors, on the one shared
database), and seeded sequences of generated calls: the listed tools with ids
drawn from the database, unknown ids, missing, extra and wrongly typed arguments,
and the discoverable-tool flows (unlock then call, call without unlock, give to
the customer then the customer calls it, unknown names, malformed argument
texts). τ² runs with the offline ``no_knowledge`` retrieval variant; each task's
read-log allowlist is given to deedbench's world as τ²'s runner gives it.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from deedbench.benchmarks.tau2.banking.tools import (
    KnowledgeTools,
    KnowledgeUserTools,
    read_log_allowlist,
    set_read_log_allowlist,
)
from deedbench.benchmarks.tau2.domain import Tau2Data, Tau2Domain
from deedbench.benchmarks.tau2.environment import db_hash
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.engine import ToolCall
from deedbench.scoring.procedure import ProcedureSpec

from . import _reference
from ._compare import differences
from ._reference import missing

pytestmark = pytest.mark.skipif(
    missing() is not None, reason=f"τ²'s reference cannot run: {missing()}"
)

SEED = 20251114
SEQUENCES = 120
FOLDER = _reference.domain_data("banking_knowledge")
ENV_KWARGS = {"retrieval_variant": "no_knowledge"}

BANKING = Tau2Domain(
    name="banking",
    tau2_name="banking_knowledge",
    toolkit=KnowledgeTools,
    user_toolkit=KnowledgeUserTools,
    shares_db=True,
    procedure=ProcedureSpec(write_tools={}),
)

Call = tuple[str, str, dict[str, Any]]


def _tasks() -> list[dict[str, Any]]:
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((FOLDER / "tasks").glob("task_*.json"))
    ]


def _case(case_id: str, task: dict[str, Any], calls: list[Call]) -> dict[str, Any]:
    return {
        "id": case_id,
        "task": task,
        "solo": False,
        "messages": [
            {
                "role": role,
                "content": None,
                "tool_calls": [{"id": f"{case_id}-{n}", "name": name, "arguments": arguments}],
            }
            for n, (role, name, arguments) in enumerate(calls)
        ],
        "hashes": "every",
        "evaluate": False,
    }


def _ours(data: Tau2Data, case: dict[str, Any]) -> dict[str, Any]:
    """`_compare.deedbench_calls`, with the task's read-log allowlist given to the world."""
    task = Tau2Task.model_validate(case["task"])
    task.raw = case["task"]
    env = data.start(task, False)
    set_read_log_allowlist(env.agent_world, read_log_allowlist(case["task"]))

    def hashes() -> dict[str, Any]:
        user = env.user_world
        return {"agent": db_hash(env.agent_world), "user": db_hash(user) if user else None}

    out: dict[str, Any] = {"id": case["id"], "start": hashes(), "calls": []}
    for message in case["messages"]:
        requestor = "user" if message["role"] == "user" else "assistant"
        for raw in message["tool_calls"]:
            answer = env.respond(
                ToolCall.decoded(raw["id"], raw["name"], raw["arguments"]), requestor
            )
            out["calls"].append({"content": answer.content, "error": answer.error, **hashes()})
    out["end"] = hashes()
    return out


def _gold_cases(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    cases = []
    for task in tasks:
        actions = task["evaluation_criteria"].get("actions") or []
        calls: list[Call] = [
            (
                "user" if action.get("requestor") == "user" else "assistant",
                action["name"],
                action.get("arguments") or {},
            )
            for action in actions
        ]
        cases.append(_case(f"gold-{task['id']}", task, calls))
    return cases


AGENT_READS = (
    "get_user_information_by_id",
    "get_referrals_by_user",
    "get_credit_card_transactions_by_user",
    "get_credit_card_accounts_by_user",
)
PORTED_AGENT = [t.name for t in KnowledgeTools.tools() if not t.listed]
PORTED_USER = [t.name for t in KnowledgeUserTools.tools() if not t.listed]


class Generator:
    """Calls over the banking tools, drawn from the database with one seeded random."""

    def __init__(self, db: dict[str, Any], tasks: list[dict[str, Any]], rng: random.Random):
        self.db = db
        self.rng = rng
        self.users = list(db["users"]["data"])
        self.cards = list(db["credit_card_accounts"]["data"])
        self.txns = list(db["credit_card_transaction_history"]["data"])
        self.gold = [
            (a["name"], a.get("arguments") or {}, a.get("requestor") or "assistant")
            for t in tasks
            for a in t["evaluation_criteria"].get("actions") or []
        ]

    def junk(self) -> Any:
        return self.rng.choice([None, 7, 3.5, ["x"], {"a": 1}, "", "nope", True])

    def user(self) -> str:
        return self.rng.choice([*self.users, "no_such_user"])

    def call(self) -> list[Call]:
        r = self.rng
        kind = r.randrange(14)
        if kind == 0:
            name = r.choice(AGENT_READS)
            return [("assistant", name, {"user_id": self.user()})]
        if kind == 1:
            name = r.choice(AGENT_READS)
            return [("assistant", name, r.choice([{}, {"user_id": self.junk()}, {"x": 1}]))]
        if kind == 2:
            user = self.db["users"]["data"][r.choice(self.users)]
            which = r.choice(["name", "email"])
            arg = "customer_name" if which == "name" else "email"
            value = user.get(which) if r.random() < 0.7 else r.choice(['a"b', "Nobody", 5])
            return [("assistant", f"get_user_information_by_{which}", {arg: value})]
        if kind == 3:
            args = {"user_id": self.user(), "new_email": r.choice(["a@b.c", None, 4])}
            return [("assistant", "change_user_email", args)]
        if kind == 4:
            args = {
                k: r.choice(["x", "2025-11-14 03:40:00 EST"])
                for k in ("name", "user_id", "address", "email", "phone_number", "date_of_birth")
            }
            args["time_verified"] = r.choice(["2025-11-14 03:40:00 EST", "t"])
            if r.random() < 0.2:
                args.pop("email")
            return [
                ("assistant", "log_verification", args),
                ("assistant", "log_verification", args),
            ]
        if kind == 5:
            reason = r.choice(["other", "fraud_or_security_concern", "bogus", None])
            return [("assistant", "transfer_to_human_agents", {"summary": "s", "reason": reason})]
        if kind == 6:
            name, args, _ = r.choice(
                [g for g in self.gold if g[0] == "call_discoverable_agent_tool"]
            )
            tool_name = args["agent_tool_name"]
            calls: list[Call] = []
            if r.random() < 0.8:
                calls.append(
                    ("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": tool_name})
                )
            calls.append(("assistant", name, args))
            if r.random() < 0.5:
                calls.append(("assistant", name, args))
            return calls
        if kind == 7:
            tool_name = r.choice(PORTED_AGENT)
            bad = r.choice(["{", "[1]", "null", '{"zzz": 1}', "{}", 5, '{"user_id": 3}'])
            return [
                ("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": tool_name}),
                (
                    "assistant",
                    "call_discoverable_agent_tool",
                    {"agent_tool_name": tool_name, "arguments": bad},
                ),
            ]
        if kind == 8:
            name = r.choice(["nope_0000", "transfer_to_human_agents", "", "get_current_time"])
            tool = r.choice(["unlock_discoverable_agent_tool", "call_discoverable_agent_tool"])
            return [
                ("assistant", tool, {"agent_tool_name": name}),
                ("assistant", "list_discoverable_agent_tools", {}),
            ]
        if kind == 9:
            name, args, _ = r.choice(
                [g for g in self.gold if g[0] == "call_discoverable_user_tool"]
            )
            tool_name = args["discoverable_tool_name"]
            calls = []
            if r.random() < 0.75:
                give = {
                    "discoverable_tool_name": tool_name,
                    "arguments": args.get("arguments", "{}"),
                }
                calls.append(("assistant", "give_discoverable_user_tool", give))
            calls.append(("user", name, args))
            calls.append(("user", "list_discoverable_user_tools", {}))
            return calls
        if kind == 10:
            tool_name = r.choice([*PORTED_USER, "query_database", "nope", "_check_tool_given"])
            args = r.choice(["{", "[]", '{"bad": 1}', "{}", '{"user_id": "u"}'])
            return [
                (
                    "assistant",
                    "give_discoverable_user_tool",
                    {"discoverable_tool_name": tool_name, "arguments": args},
                ),
                (
                    "user",
                    "call_discoverable_user_tool",
                    {"discoverable_tool_name": tool_name, "arguments": args},
                ),
            ]
        if kind == 11:
            card = r.choice(["Gold Rewards Card", "Silver Rewards Card", "Nope Card"])
            amount = r.choice([127.43, 50, "12", None])
            args = {
                "user_id": self.user(),
                "credit_card_type": card,
                "merchant_name": "M",
                "amount": amount,
                "category": r.choice(["Travel", "Groceries"]),
            }
            return [("user", "submit_transaction", args)]
        if kind == 12:
            args = {
                "card_type": r.choice(["Gold Rewards Card", "Bad"]),
                "customer_name": "A B",
                "annual_income": r.choice([50000, "60000", "lots", None]),
            }
            return [
                ("user", "apply_for_credit_card", args),
                (
                    "user",
                    "submit_referral",
                    {"user_id": self.user(), "account_type": r.choice(["checking", 3])},
                ),
            ]
        return [
            ("user", "request_human_agent_transfer", {}),
            ("user", "request_human_agent_transfer", {}),
            ("assistant", "get_current_time", r.choice([{}, {"x": 1}])),
        ]


def _generated(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    db = json.loads((FOLDER / "db.json").read_text(encoding="utf-8"))
    rng = random.Random(SEED)
    gen = Generator(db, tasks, rng)
    plain = next(t for t in tasks if not (t.get("initial_state") or {}).get("initialization_data"))
    cases = []
    for number in range(SEQUENCES):
        task = rng.choice(tasks) if rng.random() < 0.3 else plain
        calls: list[Call] = []
        for _ in range(rng.randint(1, 3)):
            calls.extend(gen.call())
        cases.append(_case(f"gen-{number}", task, calls))
    return cases


@pytest.fixture(scope="module")
def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]], Tau2Data]:
    tasks = _tasks()
    cases = _gold_cases(tasks) + _generated(tasks)
    theirs = _reference.evaluate("banking_knowledge", cases, ENV_KWARGS)
    return cases, theirs, Tau2Data(BANKING, FOLDER, "tau2-banking", None)


def test_start_hashes_agree(run: Any) -> None:
    cases, theirs, data = run
    for case, other in zip(cases[:5], theirs[:5], strict=True):
        assert _ours(data, {**case, "messages": []})["start"] == other["start"]


@pytest.mark.xfail(
    reason="issue 24, not done: 28 of τ³'s agent discoverable tools (get_atm_deposit_images_8473, "
    "the credit-limit, bank-account and debit-card ones) are not ported yet; every case that "
    "unlocks or calls one differs. The cases using only ported tools agree (569 calls).",
    strict=False,
)
def test_calls_agree_with_tau2(run: Any) -> None:
    cases, theirs, data = run
    assert len(cases) == len(theirs)
    found: list[str] = []
    for case, other in zip(cases, theirs, strict=True):
        found.extend(f"{case['id']}: {d}" for d in differences(_ours(data, case), other))
    calls = sum(len(c["messages"]) for c in cases)
    assert not found, (
        f"{len(found)} differences over {len(cases)} cases / {calls} calls:\n"
        + "\n".join(found[:20])
    )
