"""The telecom desk's tools (τ²'s ``TelecomTools``), over the network's database.

The database is five lists, kept as values of the episode's world (`DeskWorld.value`):
every look-up scans a list as τ²'s does, so a customer whose line is missing, or a
malformed argument, fails at the same point with the same message. Records are the
models' dumps; new ones (a draft bill, an overdue bill, a line item) are built
through deedbench's copy of τ²'s models, so their layout and types are τ²'s.
"""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Any

from deedbench.benchmarks.servicedesk.world import Record
from deedbench.benchmarks.tau2.convention import Dump
from deedbench.benchmarks.tau2.telecom.schema import (
    Bill,
    BillStatus,
    LineItem,
    LineStatus,
    TelecomDB,
)
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.engine import tool

__all__ = ["TODAY", "TelecomTools"]

TODAY = date(2025, 2, 25)
"""τ²'s fixed "today" for the telecom domain (its policy says 2025-02-25 12:08 EST)."""


class TelecomTools(Toolkit):
    """What a telecom agent can do: find customers, read lines and bills, suspend and
    resume lines, request payments, refuel data, switch roaming, hand over."""

    tau2_module = "tau2.domains.telecom.tools"
    schema = TelecomDB
    tables = frozenset()

    # --- the lists -------------------------------------------------------------------------

    def _list(self, name: str) -> list[Record]:
        """One of the lists as the episode sees it, shared: a tool that changes a record
        of it first takes its own copy (`_own`), so the lists are copied record by record."""
        found: list[Record] = self.db.peek(name)
        return found

    def _own(self, name: str, record: Record) -> Record:
        """This episode's own copy of `record`, found in the list `name`, to change."""
        owned: Record = self.db.own_item(name, record)
        return owned

    # --- customers -------------------------------------------------------------------------

    @tool
    def get_customer_by_phone(self, phone_number: str) -> Dump:
        """Find the customer whose contact number, or one of whose lines, is this number.

        Args:
            phone_number: The phone number to look for.
        """
        for customer in self._list("customers"):
            if customer["phone_number"] == phone_number:
                return Dump(customer)
            for line_id in customer["line_ids"]:
                line = self._get_line_by_id(line_id)
                if line and line["phone_number"] == phone_number:
                    return Dump(customer)
        raise ValueError(f"Customer with phone number {phone_number} not found")

    @tool
    def get_customer_by_id(self, customer_id: str) -> Dump:
        """Get a customer by their customer id.

        Args:
            customer_id: The customer's id.
        """
        return Dump(self._customer(customer_id))

    def _customer(self, customer_id: str) -> Record:
        for customer in self._list("customers"):
            if customer["customer_id"] == customer_id:
                return customer
        raise ValueError(f"Customer with ID {customer_id} not found")

    @tool
    def get_customer_by_name(self, full_name: str, dob: str) -> list[Dump]:
        """Find customers by full name (any case) and date of birth; there may be several.

        Args:
            full_name: The customer's full name.
            dob: The customer's date of birth, YYYY-MM-DD.
        """
        found = []
        for customer in self._list("customers"):
            if customer["full_name"].lower() == full_name.lower() and (
                customer["date_of_birth"] == dob
            ):
                found.append(Dump(customer))
        return found

    # --- look-ups by id (not tools) ---------------------------------------------------------

    def _get_line_by_phone(self, phone_number: str) -> Record:
        for line in self._list("lines"):
            if line["phone_number"] == phone_number:
                return line
        raise ValueError(f"Line with phone number {phone_number} not found")

    def _get_line_by_id(self, line_id: str) -> Record:
        for line in self._list("lines"):
            if line["line_id"] == line_id:
                return line
        raise ValueError(f"Line with ID {line_id} not found")

    def _get_plan_by_id(self, plan_id: str) -> Record:
        for plan in self._list("plans"):
            if plan["plan_id"] == plan_id:
                return plan
        raise ValueError(f"Plan with ID {plan_id} not found")

    def _get_device_by_id(self, device_id: str) -> Record:
        for device in self._list("devices"):
            if device["device_id"] == device_id:
                return device
        raise ValueError(f"Device with ID {device_id} not found")

    def _get_bill_by_id(self, bill_id: str) -> Record:
        for bill in self._list("bills"):
            if bill["bill_id"] == bill_id:
                return bill
        raise ValueError(f"Bill with ID {bill_id} not found")

    def _get_target_line(self, customer_id: str, line_id: str) -> Record:
        customer = self._customer(customer_id)
        if line_id not in customer["line_ids"]:
            raise ValueError(f"Line {line_id} not found for customer {customer_id}")
        return self._get_line_by_id(line_id)

    def get_available_plan_ids(self) -> list[str]:
        """Every plan's id (τ² has it, but not as a tool)."""
        return [plan["plan_id"] for plan in self._list("plans")]

    @tool
    def get_details_by_id(self, id: str) -> Dump:
        """Get a customer, line, device, bill or plan by its id (C..., L..., D..., B..., P...).

        Args:
            id: The id of the customer, line, device, bill or plan.
        """
        if id.startswith("L"):
            return Dump(self._get_line_by_id(id))
        if id.startswith("D"):
            return Dump(self._get_device_by_id(id))
        if id.startswith("B"):
            return Dump(self._get_bill_by_id(id))
        if id.startswith("C"):
            return Dump(self._customer(id))
        if id.startswith("P"):
            return Dump(self._get_plan_by_id(id))
        raise ValueError(f"Unknown ID format or type: {id}")

    # --- lines -----------------------------------------------------------------------------

    @tool(kind="write", keys=("line_id",))
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        """Suspend an active line of a customer (at most 6 months; a monthly holding fee applies).

        Args:
            customer_id: The line's owner (a customer id).
            line_id: Which line to suspend.
            reason: Why the line is suspended.
        """
        line = self._get_target_line(customer_id, line_id)
        if line["status"] != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend")
        line = self._own("lines", line)
        line["status"] = LineStatus.SUSPENDED
        line["suspension_start_date"] = TODAY
        return {
            "message": "Line suspended successfully. $5/month holding fee will apply.",
            "line": Dump(line),
        }

    @tool(kind="write", keys=("line_id",))
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Resume a customer's suspended (or pending activation) line.

        Args:
            customer_id: The line's owner (a customer id).
            line_id: Which line to resume.
        """
        line = self._get_target_line(customer_id, line_id)
        if line["status"] not in [LineStatus.SUSPENDED, LineStatus.PENDING_ACTIVATION]:
            raise ValueError("Line must be suspended to resume")
        line = self._own("lines", line)
        line["status"] = LineStatus.ACTIVE
        line["suspension_start_date"] = None
        return {"message": "Line resumed successfully", "line": Dump(line)}

    # --- bills -----------------------------------------------------------------------------

    @tool
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[Dump]:
        """A customer's bills, newest issue date first.

        Args:
            customer_id: The customer's id.
            limit: How many bills at most.
        """
        customer = self._customer(customer_id)
        bills = [self._get_bill_by_id(bill_id) for bill_id in customer["bill_ids"]]
        newest = sorted(bills, key=lambda bill: bill["issue_date"], reverse=True)
        return [Dump(bill) for bill in newest[:limit]]

    @tool(kind="write", keys=("bill_id",))
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """Ask the customer to pay one of their bills (only one bill may await payment).
        It does not check whether the bill is already paid: check its status first.

        Args:
            customer_id: The bill's owner (a customer id).
            bill_id: The id of the bill to request payment for.
        """
        customer = self._customer(customer_id)
        if not customer:
            raise ValueError(f"Customer {customer_id} not found")
        if len(self._get_bills_awaiting_payment(customer)) != 0:
            raise ValueError("A bill is already awaiting payment for this customer")
        if bill_id not in customer["bill_ids"]:
            raise ValueError(f"Bill {bill_id} not found for customer {customer_id}")
        bill = self._own("bills", self._get_bill_by_id(bill_id))
        bill["status"] = BillStatus.AWAITING_PAYMENT
        return f"Payment request sent to the customer for bill {bill['bill_id']}"

    def _get_bills_awaiting_payment(self, customer: Record) -> list[Record]:
        found = []
        for bill_id in customer["bill_ids"]:
            bill = self._get_bill_by_id(bill_id)
            if bill and bill["status"] == BillStatus.AWAITING_PAYMENT:
                found.append(bill)
        return found

    def _set_bill_to_paid(self, bill_id: str) -> str:
        bill = self._own("bills", self._get_bill_by_id(bill_id))
        bill["status"] = BillStatus.PAID
        return f"Bill {bill_id} set to paid"

    def _apply_one_time_charge(self, customer_id: str, amount: float, description: str) -> None:
        """Add a charge (or credit) to the customer's draft bill, opening one for next
        month (with a random id, as τ²'s) when there is none."""
        customer = self._customer(customer_id)
        draft: Record | None = None
        for bill_id in customer["bill_ids"]:
            bill = self._get_bill_by_id(bill_id)
            if bill and bill["status"] == BillStatus.DRAFT:
                draft = bill
                break
        if not draft:
            next_month = (TODAY.replace(day=1) + timedelta(days=32)).replace(day=1)
            following = next_month.replace(
                month=next_month.month + 1 if next_month.month < 12 else 1,
                year=next_month.year if next_month.month < 12 else next_month.year + 1,
            )
            new_bill_id = f"B{uuid.uuid4().hex[:8]}"
            draft = Bill(
                bill_id=new_bill_id,
                customer_id=customer_id,
                period_start=next_month,
                period_end=following - timedelta(days=1),
                issue_date=next_month,
                total_due=0,
                due_date=next_month + timedelta(days=14),
                status=BillStatus.DRAFT,
            ).model_dump()
            self.db.append_item("bills", draft)
            customer = self._own("customers", customer)
            customer["bill_ids"].append(new_bill_id)
        else:
            draft = self._own("bills", draft)
        item = LineItem(
            description=description,
            amount=amount,
            date=TODAY,
            item_type="Credit" if amount < 0 else "Charge",
        )
        draft["line_items"].append(item.model_dump())
        draft["total_due"] += amount

    # --- usage and roaming -----------------------------------------------------------------

    @tool
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """A line's data use this billing cycle: used, plan limit, refuelled, cycle end.

        Args:
            customer_id: The line's owner (a customer id).
            line_id: The id of the line.
        """
        line = self._get_target_line(customer_id, line_id)
        plan = self._get_plan_by_id(line["plan_id"])
        month = TODAY.month + 1 if TODAY.month < 12 else 1
        cycle_end = date(TODAY.year, month, 1) - timedelta(days=1)
        return {
            "line_id": line_id,
            "data_used_gb": line["data_used_gb"],
            "data_limit_gb": plan["data_limit_gb"],
            "data_refueling_gb": line["data_refueling_gb"],
            "cycle_end_date": cycle_end,
        }

    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Set a line's data used (a task's set-up; not a tool)."""
        line = self._own("lines", self._get_target_line(customer_id, line_id))
        line["data_used_gb"] = data_used_gb
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    @tool(kind="write", keys=("line_id",))
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        """Turn international roaming on for a line.

        Args:
            customer_id: The line's owner (a customer id).
            line_id: The id of the line.
        """
        line = self._get_target_line(customer_id, line_id)
        if line["roaming_enabled"]:
            return "Roaming was already enabled"
        line = self._own("lines", line)
        line["roaming_enabled"] = True
        return "Roaming enabled successfully"

    @tool(kind="write", keys=("line_id",))
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """Turn international roaming off for a line.

        Args:
            customer_id: The line's owner (a customer id).
            line_id: The id of the line.
        """
        line = self._get_target_line(customer_id, line_id)
        if not line["roaming_enabled"]:
            return "Roaming was already disabled"
        line = self._own("lines", line)
        line["roaming_enabled"] = False
        return "Roaming disabled successfully"

    @tool(kind="generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the customer over to a human agent, with a summary of their issue. Only when
        they ask for a human, or when the policy and tools cannot solve their issue.

        Args:
            summary: A summary of the customer's issue.
        """
        return "Transfer successful"

    @tool(kind="write", keys=("line_id", "gb_amount"))
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        """Add data to a customer's line, charged to their bill at the plan's refuelling rate.

        Args:
            customer_id: The line's owner (a customer id).
            line_id: The id of the line.
            gb_amount: How many gigabytes to add.
        """
        line = self._get_target_line(customer_id, line_id)
        if gb_amount <= 0:
            raise ValueError("Refuel amount must be positive")
        plan = self._get_plan_by_id(line["plan_id"])
        if not plan:
            raise ValueError("Plan not found for this line")
        price = plan["data_refueling_price_per_gb"]
        charge = gb_amount * price
        line = self._own("lines", line)
        line["data_refueling_gb"] += gb_amount
        self._apply_one_time_charge(
            customer_id, charge, f"Data refueling: {gb_amount} GB at ${price}/GB"
        )
        return {
            "message": (
                f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}"
            ),
            "new_data_refueling_gb": line["data_refueling_gb"],
            "charge": charge,
        }

    # --- set-up and assertions (tasks' initialization_actions / env_assertions) ----------

    def suspend_line_for_overdue_bill(
        self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
    ) -> str:
        """Suspend a line over a new overdue bill for last month's plan charge."""
        line = self._get_line_by_id(line_id)
        if line["status"] != LineStatus.ACTIVE:
            raise ValueError("Line must be active to suspend for unpaid bill")
        plan = self._get_plan_by_id(line["plan_id"])
        amount = plan["price_per_month"]
        description = f"Charge for line {line['line_id']}"
        if amount <= 0:
            raise ValueError("Amount must be positive for overdue bill")
        customer = self._customer(customer_id)
        if not customer:
            raise ValueError(f"Customer {customer_id} not found")
        overdue = []
        for bill_id in customer["bill_ids"]:
            if self._get_bill_by_id(bill_id)["status"] == BillStatus.OVERDUE:
                overdue.append(bill_id)
        if len(overdue) > 0:
            raise ValueError("Customer already has an overdue bill")
        last_day = TODAY.replace(day=1) - timedelta(days=1)
        first_day = last_day.replace(day=1)
        bill = Bill(
            bill_id=new_bill_id,
            customer_id=customer_id,
            period_start=first_day,
            period_end=last_day,
            issue_date=first_day,
            total_due=0,
            due_date=first_day + timedelta(days=14),
            status=BillStatus.OVERDUE,
        ).model_dump()
        item = LineItem(
            description=description,
            amount=amount,
            date=TODAY,
            item_type="Charge" if amount > 0 else "Credit",
        )
        bill["line_items"].append(item.model_dump())
        bill["total_due"] += amount
        self.db.append_item("bills", bill)
        customer = self._own("customers", customer)
        customer["bill_ids"].append(new_bill_id)
        line = self._own("lines", line)
        line["status"] = LineStatus.SUSPENDED
        line["suspension_start_date"] = TODAY
        if contract_ended:
            line["contract_end_date"] = last_day
        return (
            f"Line {line_id} suspended for unpaid bill {new_bill_id}. "
            f"Contract ended: {contract_ended}"
        )

    def assert_data_refueling_amount(
        self, customer_id: str, line_id: str, expected_amount: float
    ) -> bool:
        line = self._get_target_line(customer_id, line_id)
        return bool(abs(line["data_refueling_gb"] - expected_amount) < 1e-6)

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: str) -> bool:
        line = self._get_target_line(customer_id, line_id)
        return bool(line["status"] == expected_status)

    def assert_overdue_bill_exists(self, customer_id: str, overdue_bill_id: str) -> bool:
        customer = self._customer(customer_id)
        if not customer:
            raise ValueError(f"Customer {customer_id} not found")
        if overdue_bill_id not in customer["bill_ids"]:
            raise ValueError(f"Overdue bill {overdue_bill_id} not found")
        if self._get_bill_by_id(overdue_bill_id)["status"] != BillStatus.OVERDUE:
            raise ValueError(f"Overdue bill {overdue_bill_id} is not overdue")
        return True

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        try:
            if self._get_bill_by_id(overdue_bill_id)["status"] == BillStatus.PAID:
                return True
        except ValueError:
            return True
        return False
