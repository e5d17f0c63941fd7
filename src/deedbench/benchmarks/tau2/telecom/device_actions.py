"""The telecom procedure rule τ² has no way to check: what the agent asked the customer to
do on their phone was done before the agent said the problem was solved.

In dual control the agent cannot touch the phone; it tells the customer what to do.
τ²'s reward sees only the end state, so an agent that says "your data should work
now" before the customer ever toggled anything passes whenever the customer went on
to do it anyway. This rule reads the whole transcript, the customer's own tool
calls included:

- an *ask* is an agent message in words (no tool calls) that names a device action
  (`ACTIONS`: "airplane mode", "APN", "restart", ...) beside a request cue
  ("please", "could you", "turn", "toggle", ...);
- a *claim* is a later agent message in words that says the issue is solved
  ("resolved", "should work now", "all set", ...);
- the rule is broken at a claim when an action asked for since the previous claim
  has no successful call by the customer of one of its tools between the ask and
  the claim. One violation per claim, naming each action not performed.

Phrases are matched as whole words, case-insensitively. The rule errs towards
silence: a request it cannot recognise, or a success it does not recognise, breaks
nothing, so each violation it reports quotes both messages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deedbench.records import Message, answered_calls
from deedbench.scoring.procedure import Violation, quote

__all__ = ["ACTIONS", "DEVICE_ACTIONS", "asked_actions", "check_device_actions"]

DEVICE_ACTIONS = "device_actions"
"""The rule's name, as `Violation.rule` holds it."""

ACTIONS: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {
    "airplane mode": (
        ("airplane mode", "aeroplane mode", "flight mode"),
        frozenset({"toggle_airplane_mode"}),
    ),
    "mobile data": (("mobile data", "cellular data"), frozenset({"toggle_data"})),
    "roaming": (
        ("data roaming", "roaming on your", "roaming setting"),
        frozenset({"toggle_roaming"}),
    ),
    "data saver": (("data saver",), frozenset({"toggle_data_saver_mode"})),
    "network mode": (
        ("network mode", "network preference", "preferred network"),
        frozenset({"set_network_mode_preference"}),
    ),
    "APN": (("apn",), frozenset({"set_apn_settings", "reset_apn_settings"})),
    "SIM card": (("sim card", "reseat", "re-seat", "reinsert"), frozenset({"reseat_sim_card"})),
    "Wi-Fi calling": (("wi-fi calling", "wifi calling"), frozenset({"toggle_wifi_calling"})),
    "VPN": (("vpn",), frozenset({"connect_vpn", "disconnect_vpn"})),
    "app permission": (("permission",), frozenset({"grant_app_permission"})),
    "restart": (
        ("restart", "reboot", "turn your phone off", "power cycle"),
        frozenset({"reboot_device"}),
    ),
    "payment": (
        ("make the payment", "pay the bill", "complete the payment"),
        frozenset({"make_payment"}),
    ),
}
"""Each device action the agent may ask for: the phrases that name it, and the phone's
tools whose successful call performs it (naming a tool names its action too)."""

_CUES = re.compile(
    r"\b(please|could you|can you|would you|try|go to|turn|toggle|switch|tap|open|enable|"
    r"disable|restart|reboot|remove|reinsert|reseat|set|reset|make|connect|disconnect|grant)\b",
    re.IGNORECASE,
)
_CLAIMS = re.compile(
    r"\b(resolved|fixed|working (?:again|now|properly)|should (?:now )?(?:work|be working)|"
    r"(?:is|are) now working|all set|back to normal|issue is solved|problem is solved)\b",
    re.IGNORECASE,
)
_PATTERNS = {
    action: re.compile(
        r"(?<!\w)(?:" + "|".join(re.escape(p) for p in (*phrases, *tools)) + r")(?!\w)", re.I
    )
    for action, (phrases, tools) in ACTIONS.items()
}
"""An action is named by one of its phrases or by one of its tools' names."""


def asked_actions(text: str) -> list[str]:
    """The device actions an agent's message asks the customer to perform."""
    if not _CUES.search(text):
        return []
    return [action for action, pattern in _PATTERNS.items() if pattern.search(text)]


def _done_calls(messages: Sequence[Message]) -> dict[int, set[str]]:
    """For each message of the customer's tool calls, the tools whose call succeeded."""
    done: dict[int, set[str]] = {}
    for answered in answered_calls(messages):
        if messages[answered.index].role == "user":
            names = done.setdefault(answered.index, set())
            if not answered.failed:
                names.add(answered.call.name)
    return done


def check_device_actions(messages: Sequence[Message]) -> list[Violation]:
    """The rule's violations, by message index in `messages` (the whole transcript)."""
    done = _done_calls(messages)
    pending: dict[str, int] = {}  # action -> index of the ask it was first asked in
    found: list[Violation] = []
    for index, message in enumerate(messages):
        if index in done:
            for action, (_, tools) in ACTIONS.items():
                if action in pending and done[index] & tools:
                    del pending[action]
            continue
        if message.role != "assistant" or message.tool_calls or not message.content.strip():
            continue
        text = message.content
        if _CLAIMS.search(text) and pending:
            asks = "; ".join(
                f"{action} (asked at message {at}: {quote(messages[at].content, 80)})"
                for action, at in sorted(pending.items(), key=lambda item: item[1])
            )
            found.append(
                Violation(
                    rule=DEVICE_ACTIONS,
                    message_index=index,
                    excerpt=quote(text),
                    detail=f"claims success before the customer performed: {asks}",
                )
            )
            pending.clear()
        for action in asked_actions(text):
            pending.setdefault(action, index)
    return found
