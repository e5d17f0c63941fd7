"""τ³ banking's discoverable desk tools: a debit card's controls: freeze, fraud alerts,
PINs, limits; the cards of an account.

Mixed into `KnowledgeTools` (``tools.py``); each tool's docstring is deedbench's own
wording, shown when the agent unlocks it only where the user has no τ² source
(τ²'s docstrings are read from the source otherwise, `shown.discoverable_docs`).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.rules import (
    _DEFAULT_ATM_LIMITS,
    _age_days,
    _pin_problem,
)
from deedbench.benchmarks.tau2.banking.toolkit import BankingToolkit
from deedbench.engine import tool

__all__ = ["DebitCardControlTools"]


class DebitCardControlTools(BankingToolkit):
    """A debit card's controls: freeze, fraud alerts, PINs, limits; the cards of an account."""

    @tool(kind="write", listed=False)
    def freeze_debit_card_3892(self, card_id: str) -> str:
        """Freeze a debit card for now; it can be unfrozen.

        Args:
            card_id (string): The debit card
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") == "FROZEN":
            return f"Error: Debit card '{card_id}' is already frozen."
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' cannot be frozen. Current status: "
                f"{card.get('status')}. Only ACTIVE cards can be frozen."
            )
        card["status"] = "FROZEN"
        card["frozen_date"] = ids.today_str()
        return "\n".join(
            [
                "Debit Card Frozen Successfully",
                f"Card ID: {card_id}",
                "Status: FROZEN",
                f"Frozen Date: {ids.today_str()}",
                "",
                "While frozen:",
                "- All new purchase transactions will be declined",
                "- Recurring payments and subscriptions will be declined",
                "- Pending transactions already authorized may still process",
                "",
                "To unfreeze, the customer can call customer service or use the mobile app.",
                "If the card is confirmed lost or stolen, recommend closing the card permanently "
                "instead.",
            ]
        )

    @tool(kind="write", listed=False)
    def unfreeze_debit_card_3893(self, card_id: str) -> str:
        """Lift the freeze on a debit card.

        Args:
            card_id (string): The debit card
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") == "ACTIVE":
            return f"Error: Debit card '{card_id}' is already active."
        if card.get("status") != "FROZEN":
            return (
                f"Error: Debit card '{card_id}' cannot be unfrozen. Current status: "
                f"{card.get('status')}. Only FROZEN cards can be unfrozen."
            )
        account_id = card.get("account_id")
        accounts = self._t("accounts")
        if account_id and account_id in accounts and accounts[account_id].get("status") != "OPEN":
            return (
                f"Error: The linked checking account '{account_id}' is no longer open. Card "
                "cannot be unfrozen."
            )
        card["status"] = "ACTIVE"
        card["unfrozen_date"] = ids.today_str()
        return "\n".join(
            [
                "Debit Card Unfrozen Successfully",
                f"Card ID: {card_id}",
                "Status: ACTIVE",
                f"Unfrozen Date: {ids.today_str()}",
                "",
                "The card is now active and ready to use immediately.",
                "All transactions will process normally.",
            ]
        )

    @tool(kind="write", listed=False)
    def clear_debit_card_fraud_alert_4892(self, card_id: str, reason: str) -> str:
        """Remove a fraud alert or a velocity block from a debit card.

        Args:
            card_id (string): The debit card
            reason (string): 'customer_verified' (a fraud alert, once the customer confirmed the activity) or 'velocity_clear' (a velocity block, once their identity was checked)
        """  # noqa: E501
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not reason:
            return "Error: Missing required parameter: reason."
        reasons = ["customer_verified", "velocity_clear"]
        if reason not in reasons:
            return f"Error: Invalid reason '{reason}'. Must be one of: {', '.join(reasons)}"
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if reason == "velocity_clear":
            if not card.get("velocity_blocked", False):
                return f"Error: Debit card '{card_id}' does not have an active velocity block."
            card["velocity_blocked"] = False
            card["velocity_cleared_date"] = ids.today_str()
            return "\n".join(
                [
                    "Velocity Block Cleared Successfully",
                    f"Card ID: {card_id}",
                    f"Cleared Date: {ids.today_str()}",
                    "",
                    "The card is now unblocked and ready for normal use.",
                    "The velocity monitoring will continue - if the same unusual patterns recur,",
                    "the card may be blocked again automatically.",
                ]
            )
        if not card.get("fraud_alert_active", False):
            return f"Error: Debit card '{card_id}' does not have an active fraud alert."
        if card.get("alert_source") == "bank_initiated":
            return (
                "Error: BANK_INITIATED_ALERT - This fraud alert was initiated by the bank's fraud "
                "detection system and cannot be cleared by customer service agents. Please "
                "transfer the customer to the security team using transfer_to_human_agents."
            )
        card["fraud_alert_active"] = False
        card["alert_source"] = None
        card["fraud_alert_cleared_date"] = ids.today_str()
        return "\n".join(
            [
                "Fraud Alert Cleared Successfully",
                f"Card ID: {card_id}",
                f"Cleared Date: {ids.today_str()}",
                "",
                "The fraud alert has been removed from the card.",
                "All transactions will process normally.",
                "",
                "Remind the customer to review recent transactions and report any unauthorized "
                "charges.",
            ]
        )

    @tool(kind="write", listed=False)
    def reset_debit_card_pin_6284(self, card_id: str, last_4_digits: str, new_pin: str) -> str:
        """Set a new PIN on a debit card whose PIN the customer forgot.

        Args:
            card_id (string): The debit card
            last_4_digits (string): The card number's last four digits, to check
            new_pin (string): The new four-digit PIN
        """
        if not all([card_id, last_4_digits, new_pin]):
            return "Error: Missing required parameters. Required: card_id, last_4_digits, new_pin."
        if not last_4_digits.isdigit() or len(last_4_digits) != 4:
            return "Error: Last 4 digits must be exactly 4 digits."
        pin_error = _pin_problem(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("last_4_digits") != last_4_digits:
            return "Error: Card verification failed. The last 4 digits do not match our records."
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Cannot reset PIN. Card status is {card.get('status')}. Only ACTIVE "
                "cards can have their PIN reset."
            )
        card["pin_last_changed"] = ids.today_str()
        card["pin_locked"] = False
        card["pin_attempts_remaining"] = 3
        return "\n".join(
            [
                "Debit Card PIN Reset Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {ids.today_str()}",
                "",
                "The new PIN is effective immediately.",
                "Your card has been unlocked and is ready to use.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @tool(kind="write", listed=False)
    def change_debit_card_pin_6285(self, card_id: str, current_pin: str, new_pin: str) -> str:
        """Replace a debit card's PIN, given the current one.

        Args:
            card_id (string): The debit card
            current_pin (string): The PIN in use now
            new_pin (string): The new four-digit PIN
        """
        if not all([card_id, current_pin, new_pin]):
            return "Error: Missing required parameters. Required: card_id, current_pin, new_pin."
        if not current_pin.isdigit() or len(current_pin) != 4:
            return "Error: Current PIN must be exactly 4 digits."
        pin_error = _pin_problem(new_pin)
        if pin_error:
            return f"Error: {pin_error}"
        if current_pin == new_pin:
            return "Error: New PIN must be different from current PIN."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Cannot change PIN. Card status is {card.get('status')}. Only ACTIVE "
                "cards can have their PIN changed."
            )
        card["pin_last_changed"] = ids.today_str()
        return "\n".join(
            [
                "Debit Card PIN Changed Successfully",
                f"Card ID: {card_id}",
                f"PIN Changed: {ids.today_str()}",
                "",
                "The new PIN is effective immediately.",
                "Customer can use the new PIN for ATM withdrawals and point-of-sale transactions.",
                "",
                "Security reminder: Never share your PIN with anyone.",
            ]
        )

    @tool(listed=False)
    def get_debit_cards_by_account_id_7823(self, account_id: str) -> str:
        """List the debit cards of a checking account, with status, issue reason and expiry.

        Args:
            account_id (string): The checking account
        """
        if not account_id:
            return "Error: Missing required parameter 'account_id'."
        accounts = self._t("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        if accounts[account_id].get("class", "").lower() not in ["checking", "business_checking"]:
            return (
                f"Error: Account '{account_id}' is not a checking account. Debit cards are only "
                "available for checking accounts."
            )
        found = []
        for card_id, card in self._t("debit_cards").items():
            if card.get("account_id") != account_id:
                continue
            info: dict[str, Any] = {"card_id": card_id}
            info.update(card)
            # τ²'s field names for the agent
            if "last_4_digits" in info and "card_number_last_4" not in info:
                info["card_number_last_4"] = info.pop("last_4_digits")
            if "issue_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("issue_date")
            elif "created_date" in info and "date_issued" not in info:
                info["date_issued"] = info.pop("created_date")
            found.append(info)
        if not found:
            return f"No debit cards found for account '{account_id}'."
        found.sort(key=lambda x: x.get("date_issued") or "", reverse=True)
        return json.dumps(found, indent=2)

    @tool(kind="write", listed=False)
    def request_temporary_debit_card_limit_increase_8374(
        self, card_id: str, limit_type: str, new_limit: int
    ) -> str:
        """Raise a debit card's daily ATM or purchase limit for 24 hours.

        Args:
            card_id (string): The debit card
            limit_type (string): 'atm' (cash withdrawals) or 'purchase' (purchases)
            new_limit (integer): The limit asked for, in dollars
        """
        if not card_id:
            return "Error: Missing required parameter: card_id."
        if not limit_type:
            return "Error: Missing required parameter: limit_type."
        if limit_type not in ["atm", "purchase"]:
            return f"Error: Invalid limit_type '{limit_type}'. Must be 'atm' or 'purchase'."
        if new_limit is None:
            return "Error: Missing required parameter: new_limit."
        try:
            asked = float(new_limit)
        except (ValueError, TypeError):
            return f"Error: new_limit must be an integer, got '{new_limit}'."
        if not asked.is_integer():
            return f"Error: new_limit must be an integer, got '{asked}'."
        limit = int(asked)
        if limit <= 0:
            return "Error: new_limit must be a positive amount."
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") != "ACTIVE":
            return (
                f"Error: Debit card '{card_id}' is not active. Current status: "
                f"{card.get('status')}. Only ACTIVE cards can have limit increases."
            )
        account_id = card.get("account_id")
        accounts = self._t("accounts")
        if not account_id or account_id not in accounts:
            return f"Error: Could not find linked account for debit card '{card_id}'."
        account = accounts[account_id]
        if account.get("status") != "OPEN":
            return (
                f"Error: The linked account '{account_id}' is not in good standing. Account "
                f"status: {account.get('status')}."
            )
        date_opened = account.get("date_opened")
        if date_opened:
            try:
                age = _age_days(date_opened, datetime.strptime(ids.today_str(), "%m/%d/%Y"))
                if age < 60:
                    return (
                        "Error: Account must be at least 60 days old for a temporary limit "
                        f"increase. Account age: {age} days."
                    )
            except ValueError:
                pass
        current: Any
        if limit_type == "atm":
            current = card.get("daily_atm_limit")
            field = "daily_atm_limit"
            name = "Daily ATM Withdrawal Limit"
            if current is None:
                level = account.get("level", "").lower()
                if "light green" in level:
                    return (
                        "Error: Light Green Account (teen checking) cards have policy-based "
                        "limits that cannot be modified. The daily ATM withdrawal limit of $150 "
                        "is fixed by account policy for safety reasons. The customer may request "
                        "the parent/guardian to withdraw cash from their own account if needed."
                    )
                current = _DEFAULT_ATM_LIMITS.get(level)
                if current is None:
                    return (
                        "Error: Could not determine the default ATM limit for account type "
                        f"'{account.get('level')}'. Please verify the account type."
                    )
        else:
            current = card.get("daily_purchase_limit")
            field = "daily_purchase_limit"
            name = "Daily Purchase Limit"
        if current is None:
            return (
                f"Error: The card does not have a {name.lower()} configured. This may be a "
                "restricted account type where limits are set by account policy and cannot be "
                "modified."
            )
        max_allowed = int(current * 1.5)
        if limit > max_allowed:
            return (
                f"Error: Requested limit ${limit} exceeds the maximum allowed temporary "
                f"increase. Maximum temporary limit is ${max_allowed} (150% of current "
                f"${current} limit)."
            )
        if limit <= current:
            return (
                f"Error: Requested limit ${limit} is not higher than the current limit of "
                f"${current}."
            )
        card[field] = limit
        card[f"temporary_{limit_type}_limit_increase"] = True
        card[f"original_{limit_type}_limit"] = current
        card[f"temporary_{limit_type}_limit_expires"] = ids.today_str()
        return "\n".join(
            [
                f"Temporary {name} Increase Granted Successfully",
                f"Card ID: {card_id}",
                f"Previous Limit: ${current}",
                f"New Temporary Limit: ${limit}",
                f"Increase Amount: ${limit - current}",
                "",
                "Important Information:",
                "- This temporary increase expires in 24 hours",
                f"- After expiration, the limit will revert to ${current}",
                "- Only one temporary increase is allowed per 24-hour period",
                "",
                "Note: If the customer is at a third-party (non-Rho-Bank) ATM, that ATM may have "
                "its own",
                "per-transaction or daily limits that Rho-Bank cannot override. The customer may "
                "need to",
                "use a Rho-Bank ATM or make multiple smaller withdrawals at third-party ATMs.",
            ]
        )
