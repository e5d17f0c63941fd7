"""deedbench's τ² banking tools (τ³'s ``banking_knowledge``) against τ²'s own.

Every task's gold actions from its start (both requestors, on the one shared
database), and seeded sequences of generated calls: the listed tools with ids
drawn from the database, unknown ids, missing, extra and wrongly typed arguments,
and the discoverable-tool flows (unlock then call, call without unlock, give to
the customer then the customer calls it, unknown names, malformed argument
texts), and cases centred on each of the desk's discoverable account, credit card
and debit card tools (`DiscoverableCalls`: ids from the task's database, valid and
invalid arguments, several such tools in a row). τ² runs with the offline
``no_knowledge`` retrieval variant; each task's read-log allowlist is given to
deedbench's world as τ²'s runner gives it.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from deedbench.benchmarks.tau2.banking.discovery import read_log_allowlist, set_read_log_allowlist
from deedbench.benchmarks.tau2.banking.rules import _DEFAULT_ATM_LIMITS
from deedbench.benchmarks.tau2.banking.tools import KnowledgeTools
from deedbench.benchmarks.tau2.banking.user_tools import KnowledgeUserTools
from deedbench.benchmarks.tau2.domain import Tau2Data, Tau2Domain
from deedbench.benchmarks.tau2.environment import db_hash
from deedbench.benchmarks.tau2.shown import domain_texts, world_session
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.records import ToolCall

from . import _reference
from ._compare import differences

pytestmark = [
    pytest.mark.reference("tau2"),
    # one worker runs the module, so its τ² fixture is computed once, not once a worker
    pytest.mark.xdist_group("tau2-banking-tools"),
]

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


DISCOVERABLE_ROUNDS = 4
"""How many cases centre on each discoverable tool `DiscoverableCalls` knows."""

DISCOVERABLE_TOOLS = [
    "get_atm_deposit_images_8473",
    "apply_credit_card_account_flag_6147",
    "close_credit_card_account_7834",
    "pay_credit_card_from_checking_9182",
    "submit_credit_limit_increase_request_7392",
    "get_credit_limit_increase_history_4829",
    "get_payment_history_6183",
    "approve_credit_limit_increase_5847",
    "deny_credit_limit_increase_5848",
    "open_bank_account_4821",
    "close_bank_account_7392",
    "get_all_user_accounts_by_user_id_3847",
    "transfer_funds_between_bank_accounts_7291",
    "apply_checking_account_credit_5829",
    "apply_savings_account_credit_6831",
    "submit_interest_discrepancy_report_7294",
    "get_bank_account_transactions_9173",
    "order_debit_card_5739",
    "activate_debit_card_8291",
    "activate_debit_card_8292",
    "activate_debit_card_8293",
    "close_debit_card_4721",
    "freeze_debit_card_3892",
    "unfreeze_debit_card_3893",
    "clear_debit_card_fraud_alert_4892",
    "reset_debit_card_pin_6284",
    "change_debit_card_pin_6285",
    "get_debit_cards_by_account_id_7823",
    "request_temporary_debit_card_limit_increase_8374",
]

ATM_DEPOSITS = {
    "btxn_834027370c20": "RHO-BANK ATM #3921 DEPOSIT",
    "btxn_test_deposit_001": "RhoBank ATM #3921 DEPOSIT",
    "btxn_test_atm_dep_partial": "RHO-BANK ATM #5847 DEPOSIT",
    "btxn_gen_rho_no_images": "RHO-BANK ATM #6172 DEPOSIT",
    "btxn_gen_third_party": "CHASE ATM DEPOSIT",
}
"""ATM deposits: τ²'s deposit-image tool has images for the first three (which no task
of τ³'s has), none for the fourth, and refuses the last."""

EXTRA_CARDS = {
    "dbc_gen_first": ("chk_lj82d4f1a9", "PENDING", "first_card", {}),
    "dbc_gen_fraud": ("chk_lj82d4f1a9", "PENDING", "fraud", {}),
    "dbc_gen_damaged": ("chk_lj82d4f1a9", "PENDING", "damaged", {}),
    "dbc_gen_upgrade": ("chk_gen_closed", "PENDING", "upgrade", {}),
    "dbc_gen_frozen_closed": ("chk_gen_closed", "FROZEN", "new_account", {}),
    "dbc_gen_bank_alert": (
        "chk_538bfb9cba",
        "ACTIVE",
        "expired",
        {"fraud_alert_active": True, "alert_source": "bank_initiated"},
    ),
    "dbc_gen_young": ("chk_gen_young", "ACTIVE", "new_account", {"daily_atm_limit": 500}),
    "dbc_gen_held": ("chk_gen_held", "ACTIVE", "new_account", {"daily_purchase_limit": 1000}),
    "dbc_gen_orphan": ("chk_gen_gone", "ACTIVE", "new_account", {"daily_atm_limit": 400}),
}
"""Debit cards for the cases' own task: (account, status, issue reason, more fields)."""

EXTRA_ACCOUNTS = {
    "chk_gen_closed": ("checking", "Blue Account", "CLOSED", "0.00", "01/02/2020"),
    "chk_gen_young": ("checking", "Blue Account", "OPEN", "$1,250.00", "10/20/2025"),
    "chk_gen_held": ("checking", "Green Account", "FROZEN", "40.00", "01/01/2020"),
    "sav_gen_young": ("savings", "Bronze Account", "OPEN", "20.00", "10/01/2025"),
}
"""Accounts for the cases' own task: (class, level, status, holdings, opening date)."""


def _extra_task(plain: dict[str, Any]) -> dict[str, Any]:
    """A made-up task over the plain one's database with what no task of τ³'s has: the
    ATM deposits above, accounts closed, frozen or young, and cards other ways pending,
    frozen, flagged or limited."""
    history = {
        txn: {
            "transaction_id": txn,
            "account_id": "chk_lj82d4f1a9",
            "date": "11/06/2025",
            "description": description,
            "amount": 385.0,
            "type": "atm_deposit",
            "status": "posted",
        }
        for txn, description in ATM_DEPOSITS.items()
    }
    for txn, day in (("btxn_gen_timed", "11/07/2025 14:30:00"), ("btxn_gen_undated", "soon")):
        history[txn] = {**history["btxn_gen_third_party"], "transaction_id": txn, "date": day}
    accounts = {
        account_id: {
            "account_id": account_id,
            "user_id": "lj82d4f1a9",
            "class": kind,
            "level": level,
            "status": status,
            "current_holdings": holdings,
            "date_opened": opened,
        }
        for account_id, (kind, level, status, holdings, opened) in EXTRA_ACCOUNTS.items()
    }
    cards = {
        card_id: {
            "card_id": card_id,
            "account_id": account,
            "user_id": "lj82d4f1a9",
            "last_4_digits": f"{5000 + n}",
            "status": status,
            "issue_date": "11/01/2025",
            "issue_reason": reason,
            **more,
        }
        for n, (card_id, (account, status, reason, more)) in enumerate(EXTRA_CARDS.items())
    }
    data = {
        "agent_data": {
            "accounts": {"data": accounts},
            "debit_cards": {"data": cards},
            "bank_account_transaction_history": {"data": history},
        }
    }
    return {**plain, "id": "generated_extra", "initial_state": {"initialization_data": data}}


def _task_tables(db: dict[str, Any], task: dict[str, Any]) -> dict[str, Any]:
    """The tables a task starts from, near enough to draw ids from: the base database's
    with the task's agent-side initialization records merged in."""
    tables = {name: dict(table["data"]) for name, table in db.items()}
    init = (task.get("initial_state") or {}).get("initialization_data") or {}
    for name, table in (init.get("agent_data") or {}).items():
        for record_id, record in ((table or {}).get("data") or {}).items():
            if isinstance(record, dict):
                old = tables.setdefault(name, {}).get(record_id, {})
                tables[name][record_id] = {**old, **record}
    return tables


def _fits(name: str, tables: dict[str, Any]) -> bool:
    """Whether a task's tables have what lets `name` get past its first checks."""
    cards = tables["debit_cards"].values()
    if name == "get_atm_deposit_images_8473":
        return any(
            t.get("type") == "atm_deposit"
            for t in tables["bank_account_transaction_history"].values()
        )
    if name == "unfreeze_debit_card_3893":
        return any(c.get("status") == "FROZEN" for c in cards)
    if name == "clear_debit_card_fraud_alert_4892":
        return any(c.get("fraud_alert_active") or c.get("velocity_blocked") for c in cards)
    if name == "request_temporary_debit_card_limit_increase_8374":
        return any(c.get("daily_atm_limit") or c.get("daily_purchase_limit") for c in cards)
    if name.startswith("activate_debit_card_"):
        active = {c.get("account_id") for c in cards if c.get("status") == "ACTIVE"}
        return any(c.get("status") == "PENDING" and c.get("account_id") in active for c in cards)
    return True


def _amount(value: Any) -> float:
    try:
        return float(str(value).replace("$", "").replace(",", ""))
    except ValueError:
        return 0.0


class DiscoverableCalls:
    """Calls to the desk's discoverable account, credit card and debit card tools with ids
    drawn from the task's tables: mostly well formed, to reach the tools' later checks and
    their changes, and a case keeps coming back to the card and account it picked, so that
    one call's change is what the next reads; now and then an unknown id, an invalid
    value, a junk value, a missing or an unexpected argument."""

    def __init__(self, tables: dict[str, Any], rng: random.Random):
        self.rng = rng
        self.users = list(tables["users"])
        self.accounts = tables["accounts"]
        self.cards = tables["credit_card_accounts"]
        self.debit = tables["debit_cards"]
        self.txns = tables["bank_account_transaction_history"]
        self.paid = sorted(
            {str(p.get("credit_card_account_id")) for p in tables["payment_history"].values()}
        )
        self.held: dict[str, str] = {}

    def some(self, valid: list[Any], invalid: list[Any], odds: float = 0.2) -> Any:
        return self.rng.choice(invalid if self.rng.random() < odds else valid)

    def pick(self, pool: Any, nope: str = "no_such_id") -> str:
        items = list(pool)
        return nope if not items or self.rng.random() < 0.08 else str(self.rng.choice(items))

    def held_or(self, what: str, pool: Any, within: bool = False) -> str:
        """The `what` the case picked before, most times (if `within`, only one in `pool`),
        else a new pick from `pool`."""
        held = self.held.get(what)
        if held is not None and (not within or held in pool) and self.rng.random() < 0.6:
            return held
        self.held[what] = self.pick(pool)
        return self.held[what]

    def account(self, *classes: str, poor: bool = False) -> str:
        pool = [
            k
            for k, a in self.accounts.items()
            if (not classes or a.get("class") in classes)
            and (not poor or _amount(a.get("current_holdings", a.get("balance", 0))) <= 150)
        ]
        return self.held_or("account", pool or self.accounts)

    def owner(self, table: dict[str, Any], record_id: str) -> str:
        record = table.get(record_id) or {}
        if self.rng.random() < 0.9 and record.get("user_id"):
            return str(record["user_id"])
        return self.pick(self.users, "no_such_user")

    def card(self, *statuses: str, reasons: tuple[str, ...] = ()) -> str:
        pool = [
            k
            for k, c in self.debit.items()
            if c.get("status") in statuses and (not reasons or c.get("issue_reason") in reasons)
        ]
        return self.held_or("card", pool if pool and self.rng.random() < 0.8 else self.debit)

    def credit_card(self, user: str | None = None) -> str:
        pool = [k for k, c in self.cards.items() if user is None or c.get("user_id") == user]
        return self.held_or("credit_card", pool or self.cards, within=user is not None)

    def last4(self, card_id: str) -> Any:
        real = (self.debit.get(card_id) or {}).get("last_4_digits")
        return real if real and self.rng.random() < 0.85 else self.some(["0000"], ["12a4", 42])

    def pin(self) -> Any:
        return self.some(["1357", "2468", "9042", "8531"], ["1234", "1111", "12a4", "123", 5555])

    def args(self, name: str) -> dict[str, Any]:
        r, some = self.rng, self.some
        if name == "get_atm_deposit_images_8473":
            deposits = [k for k, t in self.txns.items() if t.get("type") == "atm_deposit"]
            return {"transaction_id": self.pick(deposits if r.random() < 0.85 else self.txns)}
        if name == "apply_credit_card_account_flag_6147":
            card = self.credit_card()
            return {
                "credit_card_account_id": card,
                "user_id": self.owner(self.cards, card),
                "flag_type": some(["annual_fee_waived", "promotional_apr", "rewards_bonus"], ["x"]),
                "expiration_date": r.choice(["11/14/2026", "05/01/2026"]),
                "reason": some(["retention_offer", "loyalty_benefit", "promotional"], ["bogus"]),
            }
        if name == "close_credit_card_account_7834":
            card = self.credit_card()
            return {"credit_card_account_id": card, "user_id": self.owner(self.cards, card)}
        if name == "get_credit_limit_increase_history_4829":
            return {"credit_card_account_id": some([self.credit_card()], [""], 0.1)}
        if name == "pay_credit_card_from_checking_9182":
            holders = {c.get("user_id") for c in self.cards.values()}
            rich = [
                k
                for k, a in self.accounts.items()
                if a.get("class") == "checking"
                and _amount(a.get("current_holdings")) >= 100
                and a.get("user_id") in holders
            ]
            checking = self.pick(rich) if r.random() < 0.8 else self.account()
            user = self.owner(self.accounts, checking)
            return {
                "user_id": user,
                "checking_account_id": checking,
                "credit_card_account_id": self.credit_card(user),
                "amount": some([5, 20, 12.34], [0, -5, "abc", 10**7, None]),
            }
        if name in (
            "submit_credit_limit_increase_request_7392",
            "approve_credit_limit_increase_5847",
            "deny_credit_limit_increase_5848",
        ):
            card = self.credit_card()
            args: dict[str, Any] = {
                "credit_card_account_id": card,
                "user_id": self.owner(self.cards, card),
            }
            if name.startswith("submit"):
                args["requested_increase_amount"] = some(
                    [2500, 1000, 750], [2500.5, 0, -100, "x", None]
                )
            elif name.startswith("approve"):
                args["new_credit_limit"] = some([7500, 12000, "9000"], ["lots", None], 0.1)
            else:
                reasons = ["high_utilization", "other", "pending_disputes", "past_due_balance"]
                args["denial_reason"] = some(reasons, ["x"])
            return args
        if name == "get_payment_history_6183":
            card = self.pick(self.paid) if r.random() < 0.7 else self.credit_card()
            return {"credit_card_account_id": card, "months": some([3, 6, 12, 1], [0, "x"])}
        if name == "open_bank_account_4821":
            owners = sorted({str(a.get("user_id")) for a in self.accounts.values()})
            kinds = ["checking", "savings", "business_checking", "business_savings"]
            return {
                "user_id": self.pick(owners if r.random() < 0.85 else self.users),
                "account_type": some(kinds, ["cd"], 0.1),
                "account_class": some(["Blue Account", "Bronze Account", "Navy Blue"], [""], 0.1),
            }
        if name == "close_bank_account_7392":
            args = {"account_id": self.account(poor=r.random() < 0.8)}
            if r.random() < 0.5:
                args["reason"] = r.choice(["Moving away", "Fees"])
            if r.random() < 0.5:
                args["waive_early_closure_fee"] = r.choice([True, False])
            return args
        if name == "get_all_user_accounts_by_user_id_3847":
            return {"user_id": self.pick(self.users, "no_such_user")}
        if name == "transfer_funds_between_bank_accounts_7291":
            source = self.account()
            user = self.owner(self.accounts, source)
            theirs = [k for k, a in self.accounts.items() if a.get("user_id") == user]
            return {
                "source_account_id": source,
                "destination_account_id": self.pick(theirs or self.accounts),
                "amount": some([10, 25.5, 100], [0, -1, "x", 10**8]),
            }
        if name in ("apply_checking_account_credit_5829", "apply_savings_account_credit_6831"):
            checking = name.startswith("apply_checking")
            kinds = ["rebate_credit", "fee_refund"] if checking else ["interest_correction"]
            kinds = [*kinds, "goodwill_credit"] if not checking else kinds
            classes = ("checking",) if checking else ("saving", "savings")
            return {
                "account_id": self.account(*(classes if r.random() < 0.85 else ())),
                "amount": some([15, 2.5, 40], [0, -3, "x", None]),
                "credit_type": some([*kinds, "fee_refund"], ["bogus", "rebate_credit"]),
            }
        if name == "submit_interest_discrepancy_report_7294":
            account = self.account("saving", "savings")
            return {
                "account_id": account,
                "user_id": self.owner(self.accounts, account),
                "expected_apy": some([2.775, 3], ["x"], 0.1),
                "actual_apy": r.choice([2.5, 1.25]),
                "amount_difference": some([12.34, 4], [None], 0.1),
            }
        if name in ("get_bank_account_transactions_9173", "get_debit_cards_by_account_id_7823"):
            return {"account_id": self.account()}
        if name == "order_debit_card_5739":
            carded = {
                c.get("account_id") for c in self.debit.values() if c.get("status") == "ACTIVE"
            }
            bare = [
                k
                for k, a in self.accounts.items()
                if a.get("class") == "checking"
                and k not in carded
                and _amount(a.get("current_holdings")) >= 50
            ]
            account = self.pick(bare) if bare and r.random() < 0.6 else self.account()
            args = {
                "account_id": account,
                "user_id": self.owner(self.accounts, account),
                "delivery_option": some(["STANDARD", "expedited", "RUSH"], ["drone"], 0.05),
                "delivery_fee": some([0, 0, 15, 25.5], ["x", None], 0.05),
                "card_design": some(["CLASSIC", "premium", "CUSTOM"], ["gold"], 0.05),
                "design_fee": some([0, 0, 10], ["y"], 0.05),
                "shipping_address": some(["1 Main St, Austin, TX"], [""], 0.05),
            }
            if r.random() < 0.4:
                args["excess_replacement_fee"] = r.choice([0, 15, "z", None])
            return args
        if name.startswith("activate_debit_card_"):
            suits = {
                "8291": ("new_account", "first_card"),
                "8292": ("lost", "stolen", "fraud"),
                "8293": ("expired", "damaged", "upgrade", "bank_reissue"),
            }[name[-4:]]
            card = self.card("PENDING", reasons=suits if r.random() < 0.75 else ())
            return {
                "card_id": card,
                "last_4_digits": self.last4(card),
                "expiration_date": "11/29",
                "cvv": some(["123", "582"], ["12", "abc"]),
                "pin": self.pin(),
            }
        if name == "close_debit_card_4721":
            reasons = ["lost", "Stolen", "fraud_suspected", "damaged", "no_longer_needed"]
            return {"card_id": self.card("ACTIVE"), "reason": some(reasons, ["x"], 0.1)}
        if name == "freeze_debit_card_3892":
            return {"card_id": self.card("ACTIVE")}
        if name == "unfreeze_debit_card_3893":
            frozen = [k for k, c in self.debit.items() if c.get("status") == "FROZEN"]
            card = self.pick(frozen) if frozen and r.random() < 0.6 else self.card("FROZEN")
            return {"card_id": card}
        if name == "clear_debit_card_fraud_alert_4892":
            flagged = [
                k
                for k, c in self.debit.items()
                if c.get("fraud_alert_active") or c.get("velocity_blocked")
            ]
            card = self.pick(flagged) if flagged and r.random() < 0.7 else self.card("ACTIVE")
            fits = "velocity_clear" if self.debit.get(card, {}).get("velocity_blocked") else None
            reason = fits or "customer_verified"
            if r.random() < 0.25:
                reason = some(["customer_verified", "velocity_clear"], ["because"], 0.3)
            return {"card_id": card, "reason": reason}
        if name == "reset_debit_card_pin_6284":
            card = self.card("ACTIVE")
            return {"card_id": card, "last_4_digits": self.last4(card), "new_pin": self.pin()}
        if name == "change_debit_card_pin_6285":
            current = some(["1357", "7777", "4321"], ["12"], 0.1)
            return {"card_id": self.card("ACTIVE"), "current_pin": current, "new_pin": self.pin()}
        if name == "request_temporary_debit_card_limit_increase_8374":
            card = self.card("ACTIVE")
            kind = some(["atm", "atm", "purchase"], ["cash"], 0.1)
            record = self.debit.get(card) or {}
            level = (self.accounts.get(record.get("account_id")) or {}).get("level", "")
            default = _DEFAULT_ATM_LIMITS.get(str(level).lower(), 500) if kind == "atm" else 2500
            limit = record.get(f"daily_{kind}_limit") or default
            return {
                "card_id": card,
                "limit_type": kind,
                "new_limit": some(
                    [int(limit * 1.2), int(limit * 1.5), 600], [limit * 2, 2.5, 0, "x"], 0.2
                ),
            }
        raise KeyError(name)

    def mutated(self, args: dict[str, Any]) -> dict[str, Any]:
        out = dict(args)
        roll = self.rng.random()
        if roll < 0.04 and out:
            out.pop(self.rng.choice(list(out)))
        elif roll < 0.1 and out:
            out[self.rng.choice(list(out))] = self.rng.choice([None, 7, ["x"], {"a": 1}, ""])
        elif roll < 0.12:
            out["unexpected"] = 1
        return out

    def calls(self, names: list[str]) -> list[Call]:
        return _agent_tool_calls([(name, self.mutated(self.args(name))) for name in names])


def _agent_tool_calls(steps: list[tuple[str, dict[str, Any]]]) -> list[Call]:
    """Each discoverable tool called with its arguments, unlocked before its first call."""
    calls: list[Call] = []
    unlocked: set[str] = set()
    for name, args in steps:
        if name not in unlocked:
            unlocked.add(name)
            calls.append(("assistant", "unlock_discoverable_agent_tool", {"agent_tool_name": name}))
        arguments = {"agent_tool_name": name, "arguments": json.dumps(args)}
        calls.append(("assistant", "call_discoverable_agent_tool", arguments))
    return calls


_ORDER = {
    "delivery_option": "STANDARD",
    "delivery_fee": 0,
    "card_design": "CLASSIC",
    "design_fee": 0,
    "shipping_address": "1 Main St, Austin, TX",
}
SCENARIOS: list[list[tuple[str, dict[str, Any]]]] = [
    [
        (
            "order_debit_card_5739",
            {**_ORDER, "account_id": "chk_gen_young", "user_id": "lj82d4f1a9"},
        ),
        ("order_debit_card_5739", {**_ORDER, "account_id": "03", "user_id": "125"}),
        ("order_debit_card_5739", {**_ORDER, "account_id": "03", "user_id": "125"}),
        ("get_debit_cards_by_account_id_7823", {"account_id": "03"}),
    ],
    [
        (
            "order_debit_card_5739",
            {
                **_ORDER,
                "account_id": "08",
                "user_id": "h1i2j3k4l5",
                "delivery_fee": 25.5,
                "design_fee": 10,
                "excess_replacement_fee": 15,
            },
        ),
        (
            "order_debit_card_5739",
            {**_ORDER, "account_id": "08", "user_id": "h1i2j3k4l5", "delivery_fee": 15},
        ),
        ("get_bank_account_transactions_9173", {"account_id": "08"}),
    ],
    [
        (
            "open_bank_account_4821",
            {"user_id": "lj82d4f1a9", "account_type": "checking", "account_class": "Blue Account"},
        ),
        (
            "open_bank_account_4821",
            {"user_id": "lj82d4f1a9", "account_type": "checking", "account_class": "Blue Account"},
        ),
        (
            "open_bank_account_4821",
            {"user_id": "123", "account_type": "business_savings", "account_class": "Navy"},
        ),
        (
            "open_bank_account_4821",
            {"user_id": "b5e8f2a1c9", "account_type": "business_savings", "account_class": "Navy"},
        ),
        ("get_all_user_accounts_by_user_id_3847", {"user_id": "b5e8f2a1c9"}),
    ],
    [
        (
            "submit_interest_discrepancy_report_7294",
            {
                "account_id": "02",
                "user_id": "nobody",
                "expected_apy": 2.775,
                "actual_apy": 2.5,
                "amount_difference": 3,
            },
        ),
        (
            "request_temporary_debit_card_limit_increase_8374",
            {"card_id": "dbc_lj82d4f1a9_bluest", "limit_type": "purchase", "new_limit": 900},
        ),
        (
            "request_temporary_debit_card_limit_increase_8374",
            {"card_id": "dbc_gen_young", "limit_type": "atm", "new_limit": 600},
        ),
        (
            "request_temporary_debit_card_limit_increase_8374",
            {"card_id": "dbc_gen_held", "limit_type": "purchase", "new_limit": 1200},
        ),
        (
            "request_temporary_debit_card_limit_increase_8374",
            {"card_id": "dbc_gen_orphan", "limit_type": "atm", "new_limit": 500},
        ),
        ("close_bank_account_7392", {"account_id": "sav_gen_young"}),
        (
            "close_bank_account_7392",
            {"account_id": "chk_gen_young", "waive_early_closure_fee": True},
        ),
    ],
]
"""Calls whose branches the random ones seldom reach, on the made-up task."""


def _scenarios(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    plain = next(t for t in tasks if not (t.get("initial_state") or {}).get("initialization_data"))
    task = _extra_task(plain)
    return [
        _case(f"scenario-{n}", task, _agent_tool_calls(steps)) for n, steps in enumerate(SCENARIOS)
    ]


def _discoverable(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cases centred on one discoverable tool each: called three to five times, with up to
    three other such tools among them, on a task whose tables suit it more often than not."""
    assert set(DISCOVERABLE_TOOLS) <= set(PORTED_AGENT)
    db = json.loads((FOLDER / "db.json").read_text(encoding="utf-8"))
    rng = random.Random(SEED + 1)
    plain = next(t for t in tasks if not (t.get("initial_state") or {}).get("initialization_data"))
    pool = [*tasks, _extra_task(plain)]
    tables = {task["id"]: _task_tables(db, task) for task in pool}
    cases = []
    for round_number in range(DISCOVERABLE_ROUNDS):
        for name in DISCOVERABLE_TOOLS:
            suited = [t for t in pool if _fits(name, tables[t["id"]])]
            task = rng.choice(suited if rng.random() < 0.8 else pool)
            if rng.random() < 0.25:
                task = pool[-1]
            gen = DiscoverableCalls(tables[task["id"]], rng)
            names = [name] * rng.randint(3, 5) + rng.sample(DISCOVERABLE_TOOLS, rng.randint(0, 3))
            rng.shuffle(names)
            cases.append(_case(f"disc-{round_number}-{name}", task, gen.calls(names)))
    return cases


@pytest.fixture(scope="module")
def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]], Tau2Data]:
    tasks = _tasks()
    cases = _gold_cases(tasks) + _generated(tasks) + _discoverable(tasks) + _scenarios(tasks)
    theirs = _reference.evaluate("banking_knowledge", cases, ENV_KWARGS)
    # what unlocking shows is τ²'s docstring, read from the source beside the data
    session = world_session(domain_texts(BANKING, FOLDER, None), BANKING)
    return cases, theirs, Tau2Data(BANKING, FOLDER, "tau2-banking", None, session)


def test_start_hashes_agree(run: Any) -> None:
    cases, theirs, data = run
    for case, other in zip(cases[:5], theirs[:5], strict=True):
        assert _ours(data, {**case, "messages": []})["start"] == other["start"]


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
