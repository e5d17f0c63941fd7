"""deedbench's telecom tools against τ²'s own, call for call (dual control and solo).

Every case starts at a task's start (its set-up calls run on both sides) and runs
tool calls through τ²'s ``get_response`` and deedbench's `Tau2Environment.respond`:
each call's text, its error flag and both databases' hashes after it must agree.

- gold actions of every task of the base split and of a seeded sample of the full
  split, each by its own requestor (the customer's on their phone);
- the same gold actions in solo mode, where the agent works the phone itself;
- seeded generated sequences mixing both sides: valid calls drawn from the database,
  unknown ids, missing and extra arguments, wrong types, malformed settings that
  leave the phone in a state later calls fail on, payments that the sync settles;
- the env assertions of the base tasks after their gold actions, against τ²'s
  evaluator (``evaluate: true`` for those cases);
- the policy text of each variant against τ²'s environment (`POLICY_SCRIPT`).

All τ² cases run through one `_reference.evaluate` call.
"""

from __future__ import annotations

import json
import random
from functools import cache
from typing import Any

import pytest

from deedbench.benchmarks.tau2.domain import Tau2Data
from deedbench.benchmarks.tau2.tasks import Tau2Task
from deedbench.benchmarks.tau2.telecom import TELECOM, policy
from deedbench.records import ToolCall

from . import _reference
from ._compare import deedbench_calls, differences

pytestmark = [
    pytest.mark.reference("tau2"),
    # one worker runs the module, so its τ² fixture is computed once, not once a worker
    pytest.mark.xdist_group("tau2-telecom-tools"),
]

FOLDER = _reference.domain_data("telecom")
SEED = 20250225
FULL_SAMPLE = 200
GENERATED = 160
SOLO_GOLD = 40
SOLO_GENERATED = 40

AGENT_TOOLS = [t.name for t in TELECOM.toolkit.tools()]
USER_TOOLS = [t.name for t in TELECOM.user_toolkit.tools()] if TELECOM.user_toolkit else []
NO_ARGUMENT_USER_TOOLS = (
    [t.name for t in TELECOM.user_toolkit.tools() if not t.parameters.get("properties")]
    if TELECOM.user_toolkit
    else []
)

WRONG = [1, 2.5, None, True, ["L1001"], {"id": "C1001"}, ""]


@cache
def _tasks() -> dict[str, dict[str, Any]]:
    """tasks.json (14 MB), read once for the module."""
    raw = json.loads((FOLDER / "tasks.json").read_text(encoding="utf-8"))
    return {task["id"]: task for task in raw}


@cache
def _splits() -> dict[str, list[str]]:
    found: dict[str, list[str]] = json.loads(
        (FOLDER / "split_tasks.json").read_text(encoding="utf-8")
    )
    return found


@cache
def _data() -> Tau2Data:
    return Tau2Data(TELECOM, FOLDER, "tau2-telecom", None)


def _message(role: str, name: str, arguments: Any, ident: str) -> dict[str, Any]:
    return {
        "role": role,
        "content": None,
        "tool_calls": [{"id": ident, "name": name, "arguments": arguments}],
    }


def _gold_case(task: dict[str, Any], tag: str, solo: bool = False) -> dict[str, Any]:
    actions = (task.get("evaluation_criteria") or {}).get("actions") or []
    messages = [
        _message(
            "assistant" if solo or action.get("requestor") == "assistant" else "user",
            action["name"],
            action["arguments"],
            f"{tag}-{index}",
        )
        for index, action in enumerate(actions)
    ]
    return {
        "id": f"{tag}:{task['id']}",
        "task": task,
        "solo": solo,
        "messages": messages,
        "hashes": "every",
        "evaluate": False,
    }


# --- generated calls -------------------------------------------------------------------


def _world() -> dict[str, Any]:
    base = _data().base
    customers = {c["customer_id"]: c for c in base["customers"]}
    return {
        "customers": customers,
        "names": [(c["full_name"], c["date_of_birth"]) for c in base["customers"]],
        "phones": [c["phone_number"] for c in base["customers"]]
        + [line["phone_number"] for line in base["lines"]],
        "ids": [c["customer_id"] for c in base["customers"]]
        + [x["line_id"] for x in base["lines"]]
        + [x["bill_id"] for x in base["bills"]]
        + [x["device_id"] for x in base["devices"]]
        + [x["plan_id"] for x in base["plans"]],
        "drafts": {b["bill_id"] for b in base["bills"] if b["status"] == "Draft"},
        # τ² opens a bill with a random id for a customer without a draft bill: only a
        # customer who has one can be refuelled reproducibly.
        "refuelable": [
            c["customer_id"]
            for c in base["customers"]
            if any(
                b["customer_id"] == c["customer_id"] and b["status"] == "Draft"
                for b in base["bills"]
            )
        ],
    }


def _agent_valid(rng: random.Random, world: dict[str, Any], name: str) -> dict[str, Any]:
    customers = world["customers"]
    owner = rng.choice([c for c in customers.values() if c["line_ids"]])
    line = rng.choice(owner["line_ids"])
    if name == "get_customer_by_phone":
        return {"phone_number": rng.choice(world["phones"])}
    if name == "get_customer_by_id":
        return {"customer_id": rng.choice(list(customers))}
    if name == "get_customer_by_name":
        full, dob = rng.choice(world["names"])
        return {"full_name": rng.choice([full, full.upper(), full.lower()]), "dob": dob}
    if name == "get_details_by_id":
        return {"id": rng.choice(world["ids"])}
    if name == "suspend_line":
        return {"customer_id": owner["customer_id"], "line_id": line, "reason": "travel"}
    if name == "get_bills_for_customer":
        arguments: dict[str, Any] = {"customer_id": rng.choice(list(customers))}
        if rng.random() < 0.5:
            arguments["limit"] = rng.choice([1, 2, 0, -1, 12, None])
        return arguments
    if name == "send_payment_request":
        # Not the draft bill: once it awaits payment, a refuel opens a bill with τ²'s
        # random id, which no two runs share.
        payer = rng.choice([c for c in customers.values() if c["bill_ids"]])
        bills = [b for b in payer["bill_ids"] if b not in world["drafts"]] or ["B9999"]
        return {"customer_id": payer["customer_id"], "bill_id": rng.choice(bills)}
    if name == "transfer_to_human_agents":
        return {"summary": "The customer wants a human."}
    if name == "refuel_data":
        payer = customers[rng.choice(world["refuelable"])]
        return {
            "customer_id": payer["customer_id"],
            "line_id": rng.choice(payer["line_ids"]),
            "gb_amount": rng.choice([1, 2.0, 0.5, 3.25, 10, True]),
        }
    return {"customer_id": owner["customer_id"], "line_id": line}


APN_VALUES = [
    {},
    {"apn_name": "internet"},
    {"apn_name": "broken"},
    {"apn_name": "internet", "mmsc_url": None},
    {"reset_at_reboot": True},
    {"apn_name": "bogus"},
    {"mms_port": "8080"},
    {"mms_port": "port"},
    {"unknown": 1},
    "internet",
    5,
    None,
    ["internet"],
]
MODES = ["4g_5g_preferred", "4g_only", "3g_only", "2g_only", "5g_only", "", 3, None, ["4g_only"]]
APPS = ["messaging", "browser", "camera", 1, None, ["messaging"]]
PERMISSIONS = ["sms", "storage", "network", "phone", "STORAGE", "camera", 1, None]


def _user_valid(rng: random.Random, name: str) -> dict[str, Any]:
    if name == "set_network_mode_preference":
        return {"mode": rng.choice(MODES)}
    if name == "set_apn_settings":
        return {"apn_settings": rng.choice(APN_VALUES)}
    if name in ("check_app_status", "check_app_permissions"):
        return {"app_name": rng.choice(APPS)}
    if name == "grant_app_permission":
        return {"app_name": rng.choice(APPS), "permission": rng.choice(PERMISSIONS)}
    return {}


def _malformed(rng: random.Random, arguments: dict[str, Any]) -> dict[str, Any]:
    changed = dict(arguments)
    how = rng.choice(["unknown", "missing", "wrong", "extra"])
    keys = list(changed)
    if how == "extra" or not keys:
        changed[rng.choice(["unexpected", "force", "customer"])] = 1
    elif how == "missing":
        del changed[rng.choice(keys)]
    elif how == "wrong":
        changed[rng.choice(keys)] = rng.choice(WRONG)
    else:
        key = rng.choice(keys)
        changed[key] = rng.choice(["C9999", "L9999", "B9999", "P9999", "D9999", "X1", "555-000"])
    return changed


def _call(rng: random.Random, world: dict[str, Any], solo: bool) -> tuple[str, str, Any]:
    """One generated call: (role, tool, arguments)."""
    roll = rng.random()
    if roll < 0.45:
        name = rng.choice(AGENT_TOOLS)
        arguments = _agent_valid(rng, world, name)
        if rng.random() < 0.4:
            arguments = _malformed(rng, arguments)
            if name == "refuel_data" and arguments.get("customer_id") not in world["refuelable"]:
                arguments["gb_amount"] = rng.choice([0, -1, "2", None])
        role = "assistant"
    elif roll < 0.97:
        name = rng.choice(USER_TOOLS)
        arguments = _user_valid(rng, name)
        if rng.random() < 0.2:
            arguments = _malformed(rng, arguments)
        role = "assistant" if solo else "user"
    else:
        # the wrong side's tool, or none at all
        name = rng.choice(["check_status_bar", "get_customer_by_id", "no_such_tool"])
        arguments = {}
        role = rng.choice(["assistant", "user"])
    if solo and rng.random() < 0.03:
        role = "user"  # τ² refuses the customer's calls in solo mode
    return role, name, arguments


# Sequences that leave the phone or the bills in states later calls trip over.
SCRIPTS: list[list[tuple[str, str, Any]]] = [
    [
        ("user", "set_apn_settings", {"apn_settings": "internet"}),
        ("user", "check_apn_settings", {}),
        ("user", "reboot_device", {}),
        ("user", "reset_apn_settings", {}),
        ("user", "can_send_mms", {}),
        ("user", "toggle_data", {}),
    ],
    [
        ("user", "set_apn_settings", {"apn_settings": None}),
        ("user", "run_speed_test", {}),
        ("user", "set_apn_settings", {"apn_settings": {"apn_name": "broken"}}),
        ("user", "check_network_status", {}),
        ("user", "reset_apn_settings", {}),
        ("user", "reboot_device", {}),
        ("user", "check_apn_settings", {}),
    ],
    [
        ("user", "set_network_mode_preference", {"mode": 5}),
        ("user", "check_network_mode_preference", {}),
        ("user", "toggle_airplane_mode", {}),
        ("user", "toggle_airplane_mode", {}),
        ("user", "set_network_mode_preference", {"mode": None}),
        ("user", "check_network_mode_preference", {}),
        ("user", "set_network_mode_preference", {"mode": "3g_only"}),
        ("user", "run_speed_test", {}),
    ],
    [
        ("assistant", "send_payment_request", {"customer_id": "C1001", "bill_id": "B1002"}),
        ("user", "check_payment_request", {}),
        ("assistant", "send_payment_request", {"customer_id": "C1001", "bill_id": "B1001"}),
        ("user", "make_payment", {}),
        ("user", "check_payment_request", {}),
        ("assistant", "get_bills_for_customer", {"customer_id": "C1001"}),
        ("user", "make_payment", {}),
    ],
    [
        ("assistant", "suspend_line", {"customer_id": "C1001", "line_id": "L1002", "reason": "x"}),
        ("user", "check_status_bar", {}),
        ("user", "reboot_device", {}),
        ("user", "run_speed_test", {}),
        ("assistant", "suspend_line", {"customer_id": "C1001", "line_id": "L1002", "reason": "x"}),
        ("assistant", "resume_line", {"customer_id": "C1001", "line_id": "L1002"}),
        ("user", "reboot_device", {}),
        ("assistant", "resume_line", {"customer_id": "C1001", "line_id": "L1002"}),
    ],
    [
        ("user", "connect_vpn", {}),
        ("user", "check_vpn_status", {}),
        ("user", "run_speed_test", {}),
        ("user", "connect_vpn", {}),
        ("user", "disconnect_vpn", {}),
        ("user", "disconnect_vpn", {}),
        ("user", "check_vpn_status", {}),
    ],
    [
        ("user", "toggle_wifi", {}),
        ("user", "check_wifi_status", {}),
        ("user", "toggle_airplane_mode", {}),
        ("user", "toggle_wifi", {}),
        ("user", "toggle_airplane_mode", {}),
        ("user", "toggle_wifi_calling", {}),
        ("user", "check_wifi_calling_status", {}),
        ("user", "toggle_wifi", {}),
        ("user", "check_wifi_status", {}),
    ],
    [
        ("assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2}),
        (
            "assistant",
            "refuel_data",
            {"customer_id": "C1001", "line_id": "L1001", "gb_amount": 0.1},
        ),
        ("assistant", "get_details_by_id", {"id": "B1003"}),
        ("assistant", "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}),
        (
            "assistant",
            "refuel_data",
            {"customer_id": "C1001", "line_id": "L1002", "gb_amount": "2"},
        ),
        ("assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1003", "gb_amount": -1}),
    ],
    [
        ("user", "check_app_status", {"app_name": ["messaging"]}),
        ("user", "grant_app_permission", {"app_name": {"a": 1}, "permission": "sms"}),
        ("user", "grant_app_permission", {"app_name": "messaging", "permission": "Network"}),
        ("user", "check_app_permissions", {"app_name": "messaging"}),
        ("user", "grant_app_permission", {"app_name": "browser", "permission": "sms"}),
        ("user", "check_app_status", {"app_name": "browser"}),
        ("user", "grant_app_permission", {"app_name": "browser", "permission": 3}),
        ("user", "check_installed_apps", {}),
    ],
    [
        ("assistant", "get_details_by_id", {"id": 5}),
        ("assistant", "get_details_by_id", {"id": "X1"}),
        ("assistant", "get_details_by_id", {"id": "P1003"}),
        ("assistant", "get_details_by_id", {"id": "D1002"}),
        ("assistant", "get_bills_for_customer", {"customer_id": "C1001", "limit": "2"}),
        ("assistant", "get_bills_for_customer", {"customer_id": "C1001", "limit": 2.5}),
        ("assistant", "get_bills_for_customer", {"customer_id": "C1002", "limit": True}),
        ("assistant", "get_customer_by_name", {"full_name": 1, "dob": "1985-06-15"}),
        ("assistant", "get_customer_by_phone", {"phone_number": 5551232002}),
        ("assistant", "get_customer_by_name", {"full_name": "JOHN SMITH", "dob": "1985-06-15"}),
    ],
    [
        ("user", "set_apn_settings", {"apn_settings": {"apn_name": "bogus"}}),
        ("user", "set_apn_settings", {"apn_settings": {"unknown": 1}}),
        ("user", "set_apn_settings", {"apn_settings": {"apn_name": "internet", "mms_port": "80"}}),
        ("user", "check_apn_settings", {}),
        ("user", "set_apn_settings", {"apn_settings": {"apn_name": "broken", "mmsc_url": None}}),
        ("user", "can_send_mms", {}),
        ("user", "check_network_status", {}),
        ("user", "reboot_device", {}),
        ("user", "reset_apn_settings", {}),
        ("user", "reboot_device", {}),
        ("user", "can_send_mms", {}),
    ],
]


def _generated_cases(
    tasks: list[dict[str, Any]], rng: random.Random, solo: bool, count: int, tag: str
) -> list[dict[str, Any]]:
    world = _world()
    cases = []
    for number in range(count):
        task = rng.choice(tasks)
        if not solo and number < len(SCRIPTS) * 3:
            script = SCRIPTS[number % len(SCRIPTS)]
        else:
            script = [_call(rng, world, solo) for _ in range(rng.randint(3, 8))]
        messages = [
            _message(
                "assistant" if solo and role == "user" and number % 2 else role,
                name,
                arguments,
                f"{tag}{number}-{index}",
            )
            for index, (role, name, arguments) in enumerate(script)
        ]
        cases.append(
            {
                "id": f"{tag}{number}:{task['id']}",
                "task": task,
                "solo": solo,
                "messages": messages,
                "hashes": "every",
                "evaluate": False,
            }
        )
    return cases


@cache
def _cases() -> list[dict[str, Any]]:
    tasks, splits = _tasks(), _splits()
    rng = random.Random(SEED)
    base = [tasks[i] for i in splits["base"]]
    others = sorted(set(splits["full"]) - set(splits["base"]))
    sample = [tasks[i] for i in rng.sample(others, FULL_SAMPLE)]
    cases = [_gold_case(task, "base") for task in base]
    for case in cases:
        case["evaluate"] = True  # for the env assertions
    cases += [_gold_case(task, "full") for task in sample]
    cases += [_gold_case(task, "solo", solo=True) for task in rng.sample(base + sample, SOLO_GOLD)]
    pool = base + sample
    cases += _generated_cases(pool, rng, False, GENERATED, "gen")
    cases += _generated_cases(pool, rng, True, SOLO_GENERATED, "sologen")
    return cases


@pytest.fixture(scope="module")
def compared() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """τ²'s results and deedbench's, case by case (the driver gives τ²'s class-wide VPN
    default back to each case, as deedbench keeps it per episode)."""
    cases = _cases()
    theirs = _reference.evaluate("telecom", cases)
    ours = [deedbench_calls(_data(), case) for case in cases]
    return cases, ours, theirs


def test_calls_agree_with_tau2(
    compared: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    cases, ours, theirs = compared
    calls = sum(len(result.get("calls", [])) for result in theirs)
    assert len(cases) >= 114 + FULL_SAMPLE and calls >= 1000
    found = []
    for case, mine, other in zip(cases, ours, theirs, strict=True):
        found += [f"{case['id']}: {d}" for d in differences(mine, other)]
    print(f"{len(cases)} cases, {calls} calls compared, {len(found)} differences")
    assert not found, "\n".join(found[:20])


def test_start_hashes_agree(
    compared: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """The databases as read, after each task's set-up calls, hash as τ²'s."""
    cases, ours, theirs = compared
    wrong = [
        f"{case['id']}: {mine['start']} != {other.get('start')}"
        for case, mine, other in zip(cases, ours, theirs, strict=True)
        if mine["start"] != other.get("start")
    ]
    assert not wrong, "\n".join(wrong[:20])


def test_env_assertions_agree(
    compared: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """After the gold actions of each base task, its env assertions come out as τ²'s."""
    cases, _, theirs = compared
    checked, wrong = 0, []
    for case, other in zip(cases, theirs, strict=True):
        if not case.get("evaluate"):
            continue
        task = Tau2Task.model_validate(case["task"])
        env = _data().start(task, bool(case.get("solo")))
        for message in case["messages"]:
            for raw in message["tool_calls"]:
                call = ToolCall.decoded(raw["id"], raw["name"], raw["arguments"])
                env.respond(call, "user" if message["role"] == "user" else "assistant")
        expected = other["reward_info"]["env_assertions"] or []
        assertions = (case["task"].get("evaluation_criteria") or {}).get("env_assertions") or []
        assert len(expected) == len(assertions), case["id"]
        for assertion, check in zip(assertions, expected, strict=True):
            met = env.assertion(
                assertion["env_type"],
                assertion["func_name"],
                assertion.get("arguments") or {},
                assertion.get("assert_value", True),
            )
            checked += 1
            if met != check["met"]:
                wrong.append(f"{case['id']}: {assertion['func_name']} {met} != {check['met']}")
    assert checked > 0
    assert not wrong, "\n".join(wrong[:20])


# Run in τ²'s Python: each variant's policy as τ²'s telecom environment gives it.
POLICY_SCRIPT = """
import json, sys
from loguru import logger
logger.remove()
from tau2.domains.telecom.environment import get_environment
out = {}
for variant in ("manual", "workflow"):
    for solo in (False, True):
        env = get_environment(solo_mode=solo, policy_type=variant)
        out[variant + ("/solo" if solo else "/normal")] = env.get_policy()
with open(sys.argv[2], "w", encoding="utf-8") as handle:
    json.dump(out, handle)
"""


def _reference_policies() -> dict[str, str]:
    """τ²'s policy texts, from `POLICY_SCRIPT` run in τ²'s Python as `_reference.evaluate`
    runs its driver (same interpreter, path and data folder)."""
    found: dict[str, str] = _reference.run_script(POLICY_SCRIPT, {})
    return found


def test_policy_matches_tau2() -> None:
    theirs = _reference_policies()
    assert sorted(theirs) == ["manual/normal", "manual/solo", "workflow/normal", "workflow/solo"]
    for key, text in theirs.items():
        variant, mode = key.split("/")
        assert policy(FOLDER, variant, solo=mode == "solo") == text, key


def test_a_broken_vpn_degrades_its_own_episode_only() -> None:
    """τ²'s ``break_vpn`` degrades a class-wide default, so in one τ² process every later
    simulation's VPN is poor; here the next episode's VPN connects excellent again,
    while within the broken episode a reconnected VPN stays poor, as in τ²."""
    data = _data()
    tasks = list(data.tasks.values())
    broken = next(
        t
        for t in tasks
        if t.initial_state is not None
        and any(a.func_name == "break_vpn" for a in t.initial_state.initialization_actions or [])
    )
    clean = next(t for t in tasks if t is not broken and "vpn" not in t.id.lower())

    def status(env: Any) -> str:
        return str(env.make_tool_call("check_vpn_status", "user", {}))

    first = data.start(broken)
    assert "poor" in status(first)
    first.make_tool_call("disconnect_vpn", "user", {})
    first.make_tool_call("connect_vpn", "user", {})
    assert "poor" in status(first)  # within the episode: τ²'s degraded default
    second = data.start(clean)
    second.make_tool_call("connect_vpn", "user", {})
    assert "excellent" in status(second)
    assert "poor" in status(data.start(broken).copy())  # and the broken task still breaks


def test_the_calls_leave_the_shared_databases_as_read(
    compared: tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    """Every case's calls ran over one loaded database, copying the records they change
    (`DeskWorld.own_item`): a write that reached the shared lists would show here."""
    data, fresh = _data(), Tau2Data(TELECOM, FOLDER, "tau2-telecom", None)
    assert compared[1]  # the cases ran
    assert json.dumps(data.base, default=str) == json.dumps(fresh.base, default=str)
    assert json.dumps(data.user_base, default=str) == json.dumps(fresh.user_base, default=str)
