"""deedbench's copy of τ²'s telecom network database: plans, customers, lines, bills, devices.

Every field has τ²'s name, type and default, in τ²'s order, so that a database read
through these models dumps (and hashes) exactly as τ²'s does, and records the tools
build through them (a new bill, a line item) have τ²'s layout. The enums are
``str`` enums as τ²'s are: their members compare equal to their values and are
written as them in JSON.
"""

# τ²'s enums are (str, Enum), not StrEnum: their str(), format() and hashing differ,
# and τ²'s texts and dict look-ups depend on them.
# ruff: noqa: UP042

from __future__ import annotations

import datetime
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_START_DATE",
    "AccountStatus",
    "Address",
    "Bill",
    "BillStatus",
    "Customer",
    "Device",
    "DeviceType",
    "Line",
    "LineItem",
    "LineStatus",
    "PaymentMethod",
    "PaymentMethodType",
    "Plan",
    "TelecomDB",
]

DEFAULT_START_DATE = datetime.date(2025, 1, 1)
"""τ²'s default account creation time: a date (never validated) in a datetime field."""


class _Strict(BaseModel):
    """τ²'s models refuse fields they do not declare."""

    model_config = ConfigDict(extra="forbid")


class Address(_Strict):
    street: str
    city: str
    state: str
    zip_code: str


class Plan(_Strict):
    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


class DeviceType(str, Enum):
    PHONE = "phone"
    ROUTER = "router"
    TABLET = "tablet"
    WATCH = "watch"
    OTHER = "other"


class Device(_Strict):
    device_id: str
    device_type: DeviceType
    model: str
    imei: str | None = None
    is_esim_capable: bool
    activated: bool = False
    activation_date: datetime.datetime | None = None
    last_esim_transfer_date: datetime.datetime | None = None


class LineStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_ACTIVATION = "Pending Activation"
    CLOSED = "Closed"


class Line(_Strict):
    line_id: str
    phone_number: str
    status: LineStatus = LineStatus.PENDING_ACTIVATION
    plan_id: str
    device_id: str | None = None
    data_used_gb: float = 0.0
    data_refueling_gb: float = 0.0
    roaming_enabled: bool = False
    contract_end_date: datetime.date | None = None
    last_plan_change_date: datetime.date | None = None
    last_sim_replacement_date: datetime.date | None = None
    suspension_start_date: datetime.date | None = None


class LineItem(_Strict):
    description: str
    amount: float
    date: datetime.date
    item_type: str


class BillStatus(str, Enum):
    DRAFT = "Draft"
    ISSUED = "Issued"
    AWAITING_PAYMENT = "Awaiting Payment"
    PAID = "Paid"
    OVERDUE = "Overdue"
    DISPUTED = "Disputed"


class Bill(_Strict):
    bill_id: str
    customer_id: str
    period_start: datetime.date
    period_end: datetime.date
    issue_date: datetime.date
    total_due: float
    due_date: datetime.date
    line_items: list[LineItem] = Field(default_factory=list)
    status: BillStatus = BillStatus.DRAFT


class AccountStatus(str, Enum):
    ACTIVE = "Active"
    SUSPENDED = "Suspended"
    PENDING_VERIFICATION = "Pending Verification"
    CLOSED = "Closed"


class PaymentMethodType(str, Enum):
    CREDIT_CARD = "Credit Card"
    DEBIT_CARD = "Debit Card"
    PAYPAL = "PayPal"


class PaymentMethod(_Strict):
    method_type: PaymentMethodType
    account_number_last_4: str
    expiration_date: str


class Customer(_Strict):
    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    account_status: AccountStatus = AccountStatus.PENDING_VERIFICATION
    payment_methods: list[PaymentMethod] = Field(default_factory=list)
    line_ids: list[str] = Field(default_factory=list)
    bill_ids: list[str] = Field(default_factory=list)
    created_at: datetime.datetime = DEFAULT_START_DATE  # type: ignore[assignment]
    last_extension_date: datetime.date | None = None
    goodwill_credit_used_this_year: float = 0.0


class TelecomDB(_Strict):
    """The network's database: five lists (not tables keyed by id), as τ² keeps them."""

    plans: list[Plan] = Field(default_factory=list)
    customers: list[Customer] = Field(default_factory=list)
    lines: list[Line] = Field(default_factory=list)
    bills: list[Bill] = Field(default_factory=list)
    devices: list[Device] = Field(default_factory=list)
