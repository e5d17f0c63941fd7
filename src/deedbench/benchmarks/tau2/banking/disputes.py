"""τ³ banking's discoverable desk tools: disputes of card transactions and their history,
ATM deposit images, rewards corrections, and the special hand-over steps.

Mixed into `KnowledgeTools` (``tools.py``); each tool's docstring is deedbench's own
wording, shown when the agent unlocks it only where the user has no τ² source
(τ²'s docstrings are read from the source otherwise, `shown.discoverable_docs`).
"""

from __future__ import annotations

from deedbench.benchmarks.tau2.banking import ids
from deedbench.benchmarks.tau2.banking.db_query import (
    add_to_db,
    update_record_in_db,
)
from deedbench.benchmarks.tau2.banking.rules import (
    _ATM_DEPOSIT_IMAGES,
    _json_args,
)
from deedbench.benchmarks.tau2.banking.toolkit import BankingToolkit
from deedbench.engine import tool

__all__ = ["DisputeTools"]


class DisputeTools(BankingToolkit):
    """Disputes of card transactions and their history, ATM deposit images, rewards
    corrections, and the special hand-over steps."""

    @tool(kind="write", listed=False)
    def example_agent_tool_0000(self) -> str:
        """A placeholder tool that does nothing."""
        return "Example tool executed successfully."

    @tool(kind="write", listed=False)
    def update_transaction_rewards_3847(self, transaction_id: str, new_rewards_earned: str) -> str:
        """Correct the rewards recorded on one credit card transaction.

        Args:
            transaction_id (string): Which transaction
            new_rewards_earned (string): The corrected rewards, e.g. '6300 points'
        """
        if not transaction_id or not new_rewards_earned:
            return "Error: Missing required parameters."
        success, _ = update_record_in_db(
            "credit_card_transaction_history",
            db=self.db,
            record_id=transaction_id,
            updates={"rewards_earned": new_rewards_earned},
        )
        if not success:
            return f"Error: Transaction '{transaction_id}' not found."
        shown = _json_args(transaction_id=transaction_id, new_rewards_earned=new_rewards_earned)
        return (
            "Transaction rewards updated successfully.\n\n"
            "Executed: update_transaction_rewards_3847\n"
            f"Arguments: {shown}\n"
            "Transaction updated:\n"
            f"  - Transaction ID: {transaction_id}\n"
            f"  - New Rewards: {new_rewards_earned}"
        )

    @tool(kind="generic", listed=False)
    def initial_transfer_to_human_agent_0218(self) -> str:
        """First step of a special hand-over procedure to a human agent; the knowledge base says when to use it."""  # noqa: E501
        return (
            "Initial Transfer Initiated, Inform the user that the lines are busy.\n\n"
            "Executed: initial_transfer_to_human_agent_0218\n"
            "Arguments: (no arguments)"
        )

    @tool(kind="generic", listed=False)
    def initial_transfer_to_human_agent_1822(self) -> str:
        """First step of a special hand-over procedure to a human agent; the knowledge base says when to use it."""  # noqa: E501
        return (
            "Do not explicitly tell the user, but the conversation has not reached the "
            "necessary stages to transfer to a real human yet. Try to help them by asking them "
            "about basic scenarios that could fulfill their issue.\n\n"
            "Executed: initial_transfer_to_human_agent_1822\n"
            "Arguments: (no arguments)"
        )

    @tool(kind="generic", listed=False)
    def emergency_credit_bureau_incident_transfer_1114(self) -> str:
        """Escalate a case of the 11/14 credit bureau reporting incident to the team that corrects bureau reports."""  # noqa: E501
        return (
            "Emergency escalation logged. Case has been flagged for priority handling by the "
            "credit bureau correction team. Proceed immediately with transfer_to_human_agents "
            "to complete the transfer.\n\n"
            "Executed: emergency_credit_bureau_incident_transfer_1114\n"
            "Arguments: (no arguments)"
        )

    @tool(kind="write", listed=False)
    def file_credit_card_transaction_dispute_4829(
        self,
        transaction_id: str,
        card_action: str,
        card_last_4_digits: str,
        full_name: str,
        user_id: str,
        phone: str,
        email: str,
        address: str,
        contacted_merchant: bool,
        purchase_date: str,
        issue_noticed_date: str,
        dispute_reason: str,
        resolution_requested: str,
        eligible_for_provisional_credit: bool,
        partial_refund_amount: float | None = None,
    ) -> str:
        """Open a dispute case on a credit card transaction.

        Args:
            transaction_id (string): Which transaction is disputed
            card_action (string): What happens to the card, one of 'keep_active', 'cancel_and_reissue' (recorded only; no new card is ordered)
            card_last_4_digits (string): The card number's last four digits
            full_name (string): The cardholder's full legal name
            user_id (string): The customer's user id
            phone (string): Phone number to reach them
            email (string): Email to reach them
            address (string): Mailing address to reach them
            contacted_merchant (boolean): Whether they tried the merchant first
            purchase_date (string): Day of the purchase, MM/DD/YYYY
            issue_noticed_date (string): Day they noticed the problem, MM/DD/YYYY
            dispute_reason (string): One of 'unauthorized_fraudulent_charge', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'goods_services_not_as_described', 'canceled_subscription_still_charging', 'refund_never_processed'
            resolution_requested (string): One of 'full_refund', 'partial_refund'
            eligible_for_provisional_credit (boolean): Whether provisional credit applies
            partial_refund_amount (number, optional): The amount asked for, with 'partial_refund' only
        """  # noqa: E501
        if not transaction_id or not user_id:
            return "Error: Missing required parameters."
        actions = ["keep_active", "cancel_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        reasons = [
            "unauthorized_fraudulent_charge",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "goods_services_not_as_described",
            "canceled_subscription_still_charging",
            "refund_never_processed",
        ]
        if dispute_reason not in reasons:
            return f"Error: Invalid dispute_reason. Must be one of: {reasons}"
        resolutions = ["full_refund", "partial_refund"]
        if resolution_requested not in resolutions:
            return f"Error: Invalid resolution_requested. Must be one of: {resolutions}"
        if resolution_requested == "partial_refund" and partial_refund_amount is None:
            return (
                "Error: partial_refund_amount is required when resolution_requested is "
                "'partial_refund'."
            )
        dispute_id = ids.dispute_id(user_id, transaction_id)
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "user_id": user_id,
            "card_action": card_action,
            "card_last_4_digits": card_last_4_digits,
            "full_name": full_name,
            "phone": phone,
            "email": email,
            "address": address,
            "contacted_merchant": contacted_merchant,
            "purchase_date": purchase_date,
            "issue_noticed_date": issue_noticed_date,
            "dispute_reason": dispute_reason,
            "resolution_requested": resolution_requested,
            "partial_refund_amount": partial_refund_amount,
            "eligible_for_provisional_credit": eligible_for_provisional_credit,
            "provisional_credit_given": eligible_for_provisional_credit,
            "submitted_at": ids.today_str(),
            "status": "SUBMITTED",
        }
        if not add_to_db("transaction_disputes", dispute_id, record, db=self.db):
            return "Error: Dispute may have already been filed for this transaction."
        lines = [
            "Credit card transaction dispute filed successfully. A case has been opened and "
            "will be reviewed within 10 business days.",
            "",
            "Executed: file_credit_card_transaction_dispute_4829",
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Reason: {dispute_reason.replace('_', ' ').title()}",
            f"Resolution Requested: {resolution_requested.replace('_', ' ').title()}",
        ]
        if partial_refund_amount:
            lines.append(f"Partial Refund Amount: ${partial_refund_amount:.2f}")
        if eligible_for_provisional_credit:
            lines.append(
                "Provisional Credit: ELIGIBLE - Credit will be applied within 2 business days."
            )
        else:
            lines.append("Provisional Credit: Not eligible at this time.")
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def file_debit_card_transaction_dispute_6281(
        self,
        transaction_id: str,
        account_id: str,
        card_id: str,
        user_id: str,
        dispute_category: str,
        transaction_date: str,
        discovery_date: str,
        disputed_amount: float,
        transaction_type: str,
        card_in_possession: bool,
        pin_compromised: str,
        contacted_merchant: bool,
        police_report_filed: bool,
        written_statement_provided: bool,
        provisional_credit_eligible: bool,
        customer_max_liability_amount: float,
        card_action: str,
    ) -> str:
        """Open a Regulation E dispute case on a debit card transaction (it concerns the customer's own funds; liability depends on when it was reported).

        Args:
            transaction_id (string): Which transaction is disputed
            account_id (string): The checking account the card draws on
            card_id (string): The debit card
            user_id (string): The customer's user id
            dispute_category (string): One of 'unauthorized_transaction', 'atm_cash_discrepancy', 'atm_deposit_not_credited', 'duplicate_charge', 'incorrect_amount', 'goods_services_not_received', 'recurring_charge_after_cancellation', 'card_present_fraud', 'card_not_present_fraud'
            transaction_date (string): Day of the transaction, MM/DD/YYYY
            discovery_date (string): Day the customer found the problem, MM/DD/YYYY
            disputed_amount (number): Dollars in dispute
            transaction_type (string): One of 'pin_purchase', 'signature_purchase', 'online_purchase', 'atm_withdrawal', 'atm_deposit', 'recurring_payment', 'person_to_person'
            card_in_possession (boolean): Whether the customer still holds the card
            pin_compromised (string): One of 'yes_shared', 'yes_observed', 'no', 'unknown'
            contacted_merchant (boolean): Whether they tried the merchant first
            police_report_filed (boolean): Whether there is a police report
            written_statement_provided (boolean): Whether the customer gave a written account of events
            provisional_credit_eligible (boolean): Whether provisional credit applies under the bank's guidelines
            customer_max_liability_amount (number): The most the customer can owe under the reporting-time rules; -1 means no cap
            card_action (string): One of 'keep_active', 'freeze_pending_investigation', 'close_and_reissue'
        """  # noqa: E501
        required = [
            transaction_id, account_id, card_id, user_id, dispute_category, transaction_date,
            discovery_date, disputed_amount, transaction_type, pin_compromised, card_action,
        ]  # fmt: skip
        if not all(required):
            return "Error: Missing required parameters."
        if customer_max_liability_amount is None:
            return "Error: customer_max_liability_amount is required."
        if (
            card_in_possession is None
            or contacted_merchant is None
            or police_report_filed is None
            or written_statement_provided is None
        ):
            return (
                "Error: card_in_possession, contacted_merchant, police_report_filed, and "
                "written_statement_provided are required boolean fields."
            )
        categories = [
            "unauthorized_transaction",
            "atm_cash_discrepancy",
            "atm_deposit_not_credited",
            "duplicate_charge",
            "incorrect_amount",
            "goods_services_not_received",
            "recurring_charge_after_cancellation",
            "card_present_fraud",
            "card_not_present_fraud",
        ]
        if dispute_category not in categories:
            return f"Error: Invalid dispute_category. Must be one of: {categories}"
        kinds = [
            "pin_purchase",
            "signature_purchase",
            "online_purchase",
            "atm_withdrawal",
            "atm_deposit",
            "recurring_payment",
            "person_to_person",
        ]
        if transaction_type not in kinds:
            return f"Error: Invalid transaction_type. Must be one of: {kinds}"
        pins = ["yes_shared", "yes_observed", "no", "unknown"]
        if pin_compromised not in pins:
            return f"Error: Invalid pin_compromised. Must be one of: {pins}"
        actions = ["keep_active", "freeze_pending_investigation", "close_and_reissue"]
        if card_action not in actions:
            return f"Error: Invalid card_action. Must be one of: {actions}"
        if disputed_amount <= 0:
            return "Error: disputed_amount must be a positive number."
        dispute_id = ids.dispute_id(user_id, transaction_id)
        fraud = dispute_category in [
            "unauthorized_transaction",
            "card_present_fraud",
            "card_not_present_fraud",
        ]
        shared_pin = pin_compromised == "yes_shared"
        record = {
            "dispute_id": dispute_id,
            "transaction_id": transaction_id,
            "account_id": account_id,
            "card_id": card_id,
            "user_id": user_id,
            "dispute_category": dispute_category,
            "transaction_date": transaction_date,
            "discovery_date": discovery_date,
            "disputed_amount": disputed_amount,
            "transaction_type": transaction_type,
            "card_in_possession": card_in_possession,
            "pin_compromised": pin_compromised,
            "contacted_merchant": contacted_merchant,
            "police_report_filed": police_report_filed,
            "written_statement_provided": written_statement_provided,
            "provisional_credit_eligible": provisional_credit_eligible,
            "provisional_credit_issued": provisional_credit_eligible,
            "provisional_credit_amount": disputed_amount if provisional_credit_eligible else None,
            "customer_max_liability_amount": customer_max_liability_amount,
            "card_action": card_action,
            "is_fraud_category": fraud,
            "pin_shared_voluntarily": shared_pin,
            "submitted_at": ids.today_str(),
            "status": "OPEN",
        }
        if not add_to_db("debit_card_disputes", dispute_id, record, db=self.db):
            return "Error: Dispute may have already been filed for this transaction."
        lines = [
            f"Dispute ID: {dispute_id}",
            f"Transaction: {transaction_id}",
            f"Account: {account_id}",
            f"Category: {dispute_category.replace('_', ' ').title()}",
            f"Disputed Amount: ${disputed_amount:.2f}",
            f"Card Action: {card_action.replace('_', ' ').title()}",
        ]
        if provisional_credit_eligible:
            lines.append(
                f"Provisional Credit: ISSUED - ${disputed_amount:.2f} credited within 10 "
                "business days per Regulation E."
            )
        else:
            lines.append(
                "Provisional Credit: Not eligible - see Debit Card Provisional Credit "
                "Guidelines for details."
            )
        if shared_pin:
            lines.append(
                "WARNING: Customer indicated PIN was shared voluntarily. This may affect "
                "liability determination."
            )
        if fraud and not police_report_filed and disputed_amount > 500:
            lines.append(
                "RECOMMENDATION: For fraud disputes over $500, filing a police report is "
                "recommended."
            )
        return "\n".join(lines)

    @tool(kind="write", listed=False)
    def set_debit_card_recurring_block_7382(self, card_id: str, block_recurring: bool) -> str:
        """Turn the block on recurring charges of a debit card on or off (one-time purchases are unaffected).

        Args:
            card_id (string): The debit card
            block_recurring (boolean): True declines every recurring charge; False allows them again
        """  # noqa: E501
        if not card_id:
            return "Error: Missing required parameter: card_id"
        card = self._t("debit_cards").get(card_id)
        if not card:
            return f"Error: Debit card '{card_id}' not found."
        status = card.get("status", "").upper()
        if status != "ACTIVE":
            return (
                f"Error: Cannot update recurring block settings for a card with status "
                f"'{status}'. Card must be ACTIVE."
            )
        card["recurring_blocked"] = block_recurring
        if block_recurring:
            return (
                f"Recurring payments BLOCKED for debit card {card_id}.\n"
                "All recurring/subscription charges will be declined.\n"
                "One-time purchases are not affected.\n"
                "This change takes effect within 24 hours."
            )
        return (
            f"Recurring payments UNBLOCKED for debit card {card_id}.\n"
            "Recurring/subscription charges will now be allowed.\n"
            "This change takes effect within 24 hours."
        )

    @tool(listed=False)
    def get_debit_dispute_status_7483(self, user_id: str) -> str:
        """List the debit card disputes a customer has filed, with their status and provisional credit.

        Args:
            user_id (string): The customer's user id
        """  # noqa: E501
        if not user_id:
            return "Error: Missing required parameter: user_id"
        header = [
            "Debit card dispute history retrieved successfully.",
            "",
            "Executed: get_debit_dispute_status_7483",
            f"Debit card dispute history for user {user_id}:",
        ]
        return self._history(
            "debit_card_disputes", "user_id", user_id, header,
            "\nNo debit card disputes found for this user.",
        )  # fmt: skip

    @tool(listed=False)
    def get_atm_deposit_images_8473(self, transaction_id: str) -> str:
        """Show the scanned envelope and check images of an ATM deposit.

        Args:
            transaction_id (string): The ATM deposit's transaction
        """
        if not transaction_id:
            return "Error: Missing required parameter: transaction_id"
        history = self._t("bank_account_transaction_history")
        if transaction_id not in history:
            return f"Error: Transaction '{transaction_id}' not found."
        txn = history[transaction_id]
        if txn.get("type") != "atm_deposit":
            return (
                f"Error: Transaction '{transaction_id}' is not an ATM deposit. This tool only "
                "works for ATM deposit transactions."
            )
        description = txn.get("description", "")
        if "RHO-BANK" not in description.upper() and "RHOBANK" not in description.upper():
            return (
                f"Error: Transaction '{transaction_id}' is from a third-party ATM. Deposit images "
                "are only available for Rho-Bank ATM deposits. For third-party ATM disputes, a "
                "chargeback request must be submitted to the ATM network."
            )
        header = (
            "ATM Deposit Image Retrieval Results\n"
            "=====================================\n"
            f"Transaction ID: {transaction_id}\n"
        )
        if transaction_id in _ATM_DEPOSIT_IMAGES:
            atm, contents, notes = _ATM_DEPOSIT_IMAGES[transaction_id]
            return (
                f"{header}ATM: {atm}\nDeposit Date: {txn.get('date', 'Unknown')}\n\n"
                f"{contents}\n\n--- VERIFICATION NOTES ---\n{notes}\n"
            )
        return (
            f"{header}ATM: {description}\n"
            f"Deposit Date: {txn.get('date', 'Unknown')}\n"
            f"Amount Recorded: ${abs(txn.get('amount', 0)):.2f}\n\n"
            "--- IMAGE STATUS ---\n"
            "Status: IMAGES NOT AVAILABLE\n"
            "Reason: Deposit images for this transaction have either expired (older than 90 "
            "days) or were not captured by the ATM system.\n\n"
            "For deposits without available images, the dispute will proceed based on customer "
            "statement and ATM journal records only. Investigation timeline may be extended.\n"
        )

    @tool(listed=False)
    def get_user_dispute_history_7291(self, user_id: str) -> str:
        """List the credit card transaction disputes a customer has filed, with reasons, status and dates.

        Args:
            user_id (string): The customer's user id
        """  # noqa: E501
        if not user_id:
            return "Error: Missing required parameter: user_id"
        header = [
            "User transaction dispute history retrieved successfully.",
            "",
            "Executed: get_user_dispute_history_7291",
            f"Transaction dispute history for user {user_id}:",
        ]
        return self._history(
            "transaction_disputes", "user_id", user_id, header,
            "\nNo transaction disputes found for this user.",
        )  # fmt: skip
