"""τ³ banking's discoverable desk tools: debit cards ordered, activated (first cards,
replacements, reissues) and closed.

Mixed into `KnowledgeTools` (``tools.py``); each tool's docstring is deedbench's own
wording, shown when the agent unlocks it only where the user has no τ² source
(τ²'s docstrings are read from the source otherwise, `shown.discoverable_docs`).
"""

from __future__ import annotations

from typing import Any

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
)
from deedbench.benchmarks.tau2.banking.rules import (
    _DELIVERY_TIMES,
    _activation_problem,
)
from deedbench.benchmarks.tau2.banking.toolkit import BankingToolkit
from deedbench.engine import tool

__all__ = ["DebitCardTools"]


class DebitCardTools(BankingToolkit):
    """Debit cards ordered, activated (first cards, replacements, reissues) and closed."""

    @tool(kind="write", listed=False)
    def order_debit_card_5739(
        self,
        account_id: str,
        user_id: str,
        delivery_option: str,
        delivery_fee: float,
        card_design: str,
        design_fee: float,
        shipping_address: str,
        excess_replacement_fee: float | None = None,
    ) -> str:
        """Order a debit card for a checking account.

        Args:
            account_id (string): The checking account the card draws on
            user_id (string): The customer's user id
            delivery_option (string): STANDARD, EXPEDITED or RUSH
            delivery_fee (number): Dollars charged for delivery
            card_design (string): CLASSIC, PREMIUM or CUSTOM
            design_fee (number): Dollars charged for the design
            shipping_address (string): Where to send the card
            excess_replacement_fee (number, optional): Dollars charged beyond the replacement allowance, if any
        """  # noqa: E501
        excess: Any = excess_replacement_fee or 0
        delivery: Any = delivery_fee
        design: Any = design_fee
        try:
            delivery = float(delivery) if delivery is not None else None
        except (TypeError, ValueError):
            return "Error: delivery_fee must be a number."
        try:
            design = float(design) if design is not None else None
        except (TypeError, ValueError):
            return "Error: design_fee must be a number."
        try:
            excess = float(excess)
        except (TypeError, ValueError):
            excess = 0
        required = [
            account_id, user_id, delivery_option, delivery is not None, card_design,
            design is not None, shipping_address,
        ]  # fmt: skip
        if not all(required):
            return (
                "Error: Missing required parameters. Required: account_id, user_id, "
                "delivery_option, delivery_fee, card_design, design_fee, shipping_address."
            )
        deliveries = ["STANDARD", "EXPEDITED", "RUSH"]
        if delivery_option.upper() not in deliveries:
            return f"Error: Invalid delivery_option. Must be one of: {deliveries}"
        delivery_option = delivery_option.upper()
        designs = ["CLASSIC", "PREMIUM", "CUSTOM"]
        if card_design.upper() not in designs:
            return f"Error: Invalid card_design. Must be one of: {designs}"
        card_design = card_design.upper()
        accounts = self._t("accounts")
        if account_id not in accounts:
            return f"Error: Account '{account_id}' not found."
        account = accounts[account_id]
        if account.get("class") != "checking":
            return (
                "Error: Debit cards can only be ordered for checking accounts. Account "
                f"'{account_id}' is a {account.get('class')} account."
            )
        if account.get("status") != "OPEN":
            return (
                f"Error: Account must be OPEN. Account '{account_id}' has status: "
                f"{account.get('status')}"
            )
        if account.get("user_id") != user_id:
            return f"Error: Account '{account_id}' does not belong to user '{user_id}'."
        try:
            holdings = float(str(account.get("current_holdings", "0")).replace(",", ""))
        except ValueError:
            holdings = 0.0
        if holdings < 25.0:
            return (
                "Error: Account must have a minimum balance of $25. Current balance: "
                f"${holdings:.2f}"
            )
        for order in self._t("debit_card_orders").values():
            if order.get("account_id") == account_id and order.get("status") == "PENDING":
                return (
                    f"Error: There is already a pending debit card order for account "
                    f"'{account_id}'."
                )
        cards = self._t("debit_cards")
        active = sum(
            1
            for card in cards.values()
            if card.get("account_id") == account_id and card.get("status") == "ACTIVE"
        )
        if active >= 1:
            return (
                f"Error: Account '{account_id}' already has an active debit card. Maximum 1 "
                "active card per checking account."
            )
        total_fee = delivery + design + excess
        if total_fee > 0 and holdings < total_fee:
            return (
                f"Error: Insufficient funds for fees. Total fees: ${total_fee:.2f}. Current "
                f"balance: ${holdings:.2f}"
            )
        expected_delivery = _DELIVERY_TIMES[delivery_option]
        order_date = ids.today_str()
        order_id = ids.debit_card_order_id(account_id, user_id, delivery_option)
        order_record = {
            "order_id": order_id,
            "account_id": account_id,
            "user_id": user_id,
            "delivery_option": delivery_option,
            "card_design": card_design,
            "shipping_address": shipping_address,
            "delivery_fee": delivery,
            "design_fee": design,
            "excess_replacement_fee": excess,
            "total_fee": total_fee,
            "order_date": order_date,
            "expected_delivery": expected_delivery,
            "status": "PENDING",
        }
        if not add_to_db("debit_card_orders", order_id, order_record, db=self.db):
            return "Error: Failed to create debit card order. Order may already exist."
        fees = []
        if total_fee > 0:
            accounts[account_id]["current_holdings"] = f"{holdings - total_fee:.2f}"
            parts = []
            if delivery > 0:
                parts.append(f"Delivery ${delivery}")
            if design > 0:
                parts.append(f"Design ${design}")
            if excess > 0:
                parts.append(f"Excess Replacement ${excess:.0f}")
            fee_id = f"btxn_dcfee_{order_id[-8:]}"
            fee_record = {
                "transaction_id": fee_id,
                "account_id": account_id,
                "date": order_date,
                "description": f"DEBIT CARD ORDER FEE - {', '.join(parts)}",
                "amount": -total_fee,
                "type": "debit_card_fee",
                "status": "posted",
            }
            add_to_db("bank_account_transaction_history", fee_id, fee_record, db=self.db)
            if delivery > 0:
                fees.append(f"Delivery: ${delivery}")
            if design > 0:
                fees.append(f"Design: ${design}")
            if excess > 0:
                fees.append(f"Excess Replacement: ${excess:.0f}")
        card_id = ids.debit_card_id(account_id, user_id, order_date)
        last_4_hash = ids.deterministic_id(f"card_details:{card_id}:last4", 8)
        cvv_hash = ids.deterministic_id(f"card_details:{card_id}:cvv", 6)
        cardholder = "CARDHOLDER"
        users = self._t("users")
        if user_id in users:
            cardholder = users[user_id].get("name", "CARDHOLDER").upper()
        month, _, year = order_date.split("/")
        if month in ["01", "03", "05", "07", "08", "10", "12"]:
            last_day = "31"
        elif month == "02":
            last_day = "28"
        else:
            last_day = "30"
        # The new card is not filed yet: these are the account's earlier ones.
        earlier = [card for card in cards.values() if card.get("account_id") == account_id]
        closed = next((card for card in earlier if card.get("status") == "CLOSED"), None)
        if closed:
            closure = closed.get("closure_reason", "first_card")
            if closure in ["lost", "stolen", "fraud", "fraud_suspected"]:
                issue_reason = closure if closure != "fraud_suspected" else "fraud"
            else:
                issue_reason = "first_card"
        elif earlier:
            issue_reason = "first_card"
        else:
            issue_reason = "new_account"
        card_record = {
            "card_id": card_id,
            "account_id": account_id,
            "user_id": user_id,
            "cardholder_name": cardholder,
            "last_4_digits": "".join(c for c in last_4_hash if c.isdigit())[:4].zfill(4),
            "cvv": "".join(c for c in cvv_hash if c.isdigit())[:3].zfill(3),
            "status": "PENDING",
            "issue_date": order_date,
            "expiration_date": f"{month}/{last_day}/{int(year) + 4}",
            "card_design": card_design,
            "issue_reason": issue_reason,
        }
        add_to_db("debit_cards", card_id, card_record, db=self.db)
        lines = [
            "Debit Card Order Confirmed",
            f"Order ID: {order_id}",
            f"Card ID: {card_id}",
            f"Linked Account: {account_id}",
            f"Delivery Option: {delivery_option}",
            f"Card Design: {card_design}",
            f"Shipping Address: {shipping_address}",
            f"Expected Delivery: {expected_delivery}",
            "",
            "Note: Card will arrive with status PENDING. Customer must call to activate after "
            "receiving the card.",
        ]
        if total_fee > 0:
            lines.append(
                f"Total Fees: ${total_fee:.2f} ({', '.join(fees)}) - CHARGED to account "
                f"{account_id}"
            )
            lines.append(f"New Account Balance: ${holdings - total_fee:.2f}")
        else:
            lines.append("Total Fees: $0 (No additional charges)")
        return "\n".join(lines)

    def _activate(self, args: dict[str, Any], allowed: list[str], tool_name: str) -> Any:
        """τ²'s activation checks, then the card made ACTIVE: (error, card, others), where
        `others` are the ids of the account's other ACTIVE cards, for the caller to retire."""
        error, card = _activation_problem(args, self.db, allowed, tool_name)
        if error or card is None:
            return error, None, []
        card["status"] = "ACTIVE"
        card["activated_date"] = ids.today_str()
        others = [
            (other_id, other)
            for other_id, other in self._t("debit_cards").items()
            if other_id != args["card_id"]
            and other.get("account_id") == card.get("account_id")
            and other.get("status") == "ACTIVE"
        ]
        return None, card, others

    @tool(kind="write", listed=False)
    def activate_debit_card_8291(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a debit card issued for the first time on a checking account (issue_reason 'new_account' or 'first_card'); the other activation tools cover replacements and reissues.

        Args:
            card_id (string): The debit card
            last_4_digits (string): The card number's last four digits, to check
            expiration_date (string): Expiry as MM/YY
            cvv (string): The three-digit security code
            pin (string): The four-digit PIN the customer picks
        """  # noqa: E501
        args = {
            "card_id": card_id,
            "last_4_digits": last_4_digits,
            "expiration_date": expiration_date,
            "cvv": cvv,
            "pin": pin,
        }
        error, _, others = self._activate(
            args, ["new_account", "first_card"], "activate_debit_card_8291"
        )
        if error:
            return str(error)
        for _, other in others:
            other["status"] = "DEACTIVATED"
            other["deactivated_date"] = ids.today_str()
            other["deactivation_reason"] = "New card activated"
        lines = [
            "New Debit Card Activation Successful",
            f"Card ID: {card_id}",
            "Status: ACTIVE",
            f"Activation Date: {ids.today_str()}",
            "",
            "Your card is now ready to use at any ATM or point of sale terminal.",
            "For security, please sign the back of your card.",
        ]
        if others:
            retired = ", ".join(other_id for other_id, _ in others)
            lines.append(f"\nNote: Previous card(s) have been deactivated: {retired}")
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def activate_debit_card_8292(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a debit card that replaces a lost, stolen or compromised one (issue_reason 'lost', 'stolen' or 'fraud'); the other activation tools cover first cards and reissues.

        Args:
            card_id (string): The debit card
            last_4_digits (string): The card number's last four digits, to check
            expiration_date (string): Expiry as MM/YY
            cvv (string): The three-digit security code
            pin (string): The four-digit PIN the customer picks
        """  # noqa: E501
        args = {
            "card_id": card_id,
            "last_4_digits": last_4_digits,
            "expiration_date": expiration_date,
            "cvv": cvv,
            "pin": pin,
        }
        error, card, others = self._activate(
            args, ["lost", "stolen", "fraud"], "activate_debit_card_8292"
        )
        if error:
            return str(error)
        issue_reason = card.get("issue_reason", "lost")
        for _, other in others:
            other["status"] = "DEACTIVATED"
            other["deactivated_date"] = ids.today_str()
            other["deactivation_reason"] = f"Replacement card activated ({issue_reason})"
        lines = [
            "Replacement Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Replacement Reason: {issue_reason.replace('_', ' ').title()}",
            "Status: ACTIVE",
            f"Activation Date: {ids.today_str()}",
            "",
            "Your replacement card is now ready to use.",
            "",
            "IMPORTANT SECURITY REMINDERS:",
            "- Please review your recent transactions for any unauthorized charges",
            "- Report any suspicious activity immediately",
        ]
        if issue_reason == "fraud":
            lines.append(
                "- Since fraud was suspected, we recommend changing your online banking password"
            )
        if others:
            retired = ", ".join(other_id for other_id, _ in others)
            lines.append(f"\nPrevious card(s) have been deactivated for security: {retired}")
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def activate_debit_card_8293(
        self, card_id: str, last_4_digits: str, expiration_date: str, cvv: str, pin: str
    ) -> str:
        """Activate a reissued debit card: expired, damaged, upgraded or reissued by the bank (issue_reason 'expired', 'damaged', 'upgrade' or 'bank_reissue'); the other activation tools cover first cards and replacements.

        Args:
            card_id (string): The debit card
            last_4_digits (string): The card number's last four digits, to check
            expiration_date (string): Expiry as MM/YY
            cvv (string): The three-digit security code
            pin (string): The four-digit PIN the customer picks
        """  # noqa: E501
        args = {
            "card_id": card_id,
            "last_4_digits": last_4_digits,
            "expiration_date": expiration_date,
            "cvv": cvv,
            "pin": pin,
        }
        error, card, others = self._activate(
            args, ["expired", "damaged", "upgrade", "bank_reissue"], "activate_debit_card_8293"
        )
        if error:
            return str(error)
        issue_reason = card.get("issue_reason", "expired")
        for _, other in others:
            other["status"] = "GRACE_PERIOD"
            other["grace_period_ends"] = ids.today_str()
            other["deactivation_reason"] = f"Reissued card activated ({issue_reason})"
        lines = [
            "Reissued Debit Card Activation Successful",
            f"Card ID: {card_id}",
            f"Reissue Reason: {issue_reason.replace('_', ' ').title()}",
            "Status: ACTIVE",
            f"Activation Date: {ids.today_str()}",
            "",
            "Your reissued card is now ready to use.",
        ]
        if others:
            kept = ", ".join(other_id for other_id, _ in others)
            lines.append(
                f"\nNote: Your previous card(s) ({kept}) will remain active for 24 hours as a "
                "grace period."
            )
            lines.append("After 24 hours, the old card(s) will be automatically deactivated.")
        if issue_reason in ["expired", "bank_reissue"]:
            lines.append(
                "\nReminder: If your card number changed, please update any recurring payments "
                "with your new card details."
            )
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def close_debit_card_4721(self, card_id: str, reason: str) -> str:
        """Close a debit card for good.

        Args:
            card_id (string): The debit card
            reason (string): lost, stolen, fraud_suspected, damaged, no_longer_needed or account_closing
        """  # noqa: E501
        if not card_id or not reason:
            return "Error: Missing required parameters. Required: card_id, reason."
        reasons = [
            "lost",
            "stolen",
            "fraud_suspected",
            "damaged",
            "no_longer_needed",
            "account_closing",
        ]
        if reason.lower() not in reasons:
            return f"Error: Invalid reason. Must be one of: {reasons}"
        reason = reason.lower()
        cards = self._t("debit_cards")
        if card_id not in cards:
            return f"Error: Debit card '{card_id}' not found."
        card = cards[card_id]
        if card.get("status") not in ["ACTIVE", "PENDING"]:
            return (
                f"Error: Debit card '{card_id}' cannot be closed. Current status: "
                f"{card.get('status')}. Only ACTIVE or PENDING cards can be closed."
            )
        previous = card.get("status")
        card["status"] = "CLOSED"
        card["closed_date"] = ids.today_str()
        card["closure_reason"] = reason
        lines = [
            "Debit Card Closed Successfully",
            f"Card ID: {card_id}",
            f"Previous Status: {previous}",
            "New Status: CLOSED",
            f"Closure Reason: {reason.replace('_', ' ').title()}",
            f"Closure Date: {ids.today_str()}",
            "",
        ]
        if reason in ["lost", "stolen", "fraud_suspected"]:
            lines.append("IMPORTANT: This card has been immediately deactivated for security.")
            lines.append("Any pending transactions may still be processed.")
            if reason == "fraud_suspected":
                lines.append(
                    "Please advise the customer to review recent transactions and file disputes "
                    "for any unauthorized charges."
                )
                lines.append("Also recommend changing their online banking password.")
        lines.append("")
        lines.append(
            "Note: This card cannot be reactivated. If the customer needs a new card, they can "
            "order one through the standard ordering process."
        )
        lines.append(
            "Any recurring payments linked to this card will need to be updated with new "
            "payment information."
        )
        return "\n".join(lines)
