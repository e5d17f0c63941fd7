"""deedbench's copy of τ²'s telecom user database: the customer's phone and surroundings.

Field names, types, defaults (and which defaults are validated) are τ²'s, in its
order, so the phone dumps and hashes as τ²'s does and a model built here (new APN
settings, a payment request) fails validation with τ²'s pydantic message.
"""

# τ²'s enums are (str, Enum), not StrEnum: their str(), format() and hashing differ,
# and τ²'s texts and dict look-ups depend on them.
# ruff: noqa: UP042

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "APNNames",
    "APNSettings",
    "AppPermissions",
    "AppStatus",
    "MockPhoneAttributes",
    "NetworkModePreference",
    "NetworkStatus",
    "NetworkTechnology",
    "PaymentRequest",
    "PerformanceLevel",
    "SignalStrength",
    "SimStatus",
    "TelecomUserDB",
    "UserSurroundings",
    "VpnDetails",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SimStatus(str, Enum):
    ACTIVE = "active"
    MISSING = "missing"
    LOCKED_PIN = "locked_pin"
    LOCKED_PUK = "locked_puk"


class NetworkTechnology(str, Enum):
    NONE = "none"
    TWO_G = "2G"
    THREE_G = "3G"
    FOUR_G = "4G"
    FIVE_G = "5G"


class NetworkModePreference(str, Enum):
    FOUR_G_5G_PREFERRED = "4g_5g_preferred"
    FOUR_G_ONLY = "4g_only"
    THREE_G_ONLY = "3g_only"
    TWO_G_ONLY = "2g_only"


class SignalStrength(str, Enum):
    NONE = "none"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class PerformanceLevel(str, Enum):
    UNKNOWN = "unknown"
    POOR = "poor"
    FAIR = "fair"
    GOOD = "good"
    EXCELLENT = "excellent"


class NetworkStatus(str, Enum):
    CONNECTED = "connected"
    SEARCHING = "searching"
    NO_SERVICE = "no_service"
    EMERGENCY_ONLY = "emergency_only"


class APNNames(str, Enum):
    INTERNET = "internet"
    BROKEN = "broken"


class APNSettings(_Strict):
    apn_name: APNNames = APNNames.INTERNET
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: str | None = None
    mms_port: int | None = None


class VpnDetails(_Strict):
    server_address: str | None = None
    protocol: str | None = None
    server_performance: PerformanceLevel = Field(
        default=PerformanceLevel.UNKNOWN, validate_default=True
    )


class AppPermissions(_Strict):
    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


class AppStatus(_Strict):
    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions)


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus(
            app_name="messaging",
            permissions=AppPermissions(sms=True, storage=True, phone=True),
        ),
        "browser": AppStatus(
            app_name="browser", permissions=AppPermissions(network=True, storage=True)
        ),
    }


class MockPhoneAttributes(_Strict):
    """The phone: SIM, radios, data settings, APN, Wi-Fi, VPN and apps."""

    sim_card_status: SimStatus = Field(default=SimStatus.ACTIVE, validate_default=True)
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: SignalStrength = Field(
        default=SignalStrength.GOOD, validate_default=True
    )
    network_technology_connected: NetworkTechnology = Field(
        default=NetworkTechnology.FIVE_G, validate_default=True
    )
    network_connection_status: NetworkStatus = Field(
        default=NetworkStatus.CONNECTED, validate_default=True
    )
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: NetworkModePreference = Field(
        default=NetworkModePreference.FOUR_G_5G_PREFERRED, validate_default=True
    )
    active_apn_settings: APNSettings = Field(default_factory=APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: SignalStrength = Field(default=SignalStrength.NONE, validate_default=True)
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: VpnDetails | None = None
    app_statuses: dict[str, AppStatus] = Field(default_factory=_default_apps)


class PaymentRequest(_Strict):
    bill_id: str
    amount_due: float
    paid: bool = False


def _default_signal() -> dict[NetworkTechnology, SignalStrength]:
    return {
        NetworkTechnology.TWO_G: SignalStrength.POOR,
        NetworkTechnology.THREE_G: SignalStrength.FAIR,
        NetworkTechnology.FOUR_G: SignalStrength.GOOD,
        NetworkTechnology.FIVE_G: SignalStrength.EXCELLENT,
    }


class UserSurroundings(_Strict):
    """Where the customer is: who they are, abroad or not, the signal there, and what
    the network lets their line do (kept in step by the domain's sync)."""

    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[NetworkTechnology, SignalStrength] = Field(
        default_factory=_default_signal
    )
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


class TelecomUserDB(_Strict):
    """The customer's side: one phone and its surroundings (two values, no tables)."""

    device: MockPhoneAttributes = Field(default_factory=MockPhoneAttributes)
    surroundings: UserSurroundings = Field(default_factory=UserSurroundings)
