"""The customer's phone as τ²'s telecom user toolkit holds it: its state in the user's
world, the customer's set-up, the network search that follows every change, and the
tasks' assertions on it; the phone's tools are `TelecomUserTools` (``user_tools.py``),
with its settings (``phone_settings.py``) and apps (``phone_apps.py``) mixed in.
"""

from __future__ import annotations

from typing import Any

from deedbench.benchmarks.servicedesk.world import Record
from deedbench.benchmarks.tau2.telecom.user_schema import (
    APNNames,
    NetworkModePreference,
    NetworkStatus,
    NetworkTechnology,
    PerformanceLevel,
    SignalStrength,
    SimStatus,
    TelecomUserDB,
    VpnDetails,
)
from deedbench.benchmarks.tau2.toolkit import Toolkit

__all__ = ["PhoneToolkit"]

_SIGNAL_ICONS = {
    SignalStrength.NONE: "📵 No Signal",
    SignalStrength.POOR: "📶¹ Poor",
    SignalStrength.FAIR: "📶² Fair",
    SignalStrength.GOOD: "📶³ Good",
    SignalStrength.EXCELLENT: "📶⁴ Excellent",
}
_SPEED_RANGES = {
    NetworkTechnology.TWO_G: (0.1, 0.4),
    NetworkTechnology.THREE_G: (1.0, 5.0),
    NetworkTechnology.FOUR_G: (10.0, 100.0),
    NetworkTechnology.FIVE_G: (50.0, 500.0),
    NetworkTechnology.NONE: (0.0, 0.0),
}
_SIGNAL_FACTORS = {
    SignalStrength.POOR: 0.2,
    SignalStrength.FAIR: 0.5,
    SignalStrength.GOOD: 0.8,
    SignalStrength.EXCELLENT: 1.0,
    SignalStrength.NONE: 0.0,
}
_SPEED_ADVICE = {
    "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
    "Poor": "Connection is slow. Web browsing may be sluggish, streaming difficult.",
    "Fair": "Connection is okay for web browsing and some standard definition streaming.",
    "Good": "Connection is good for most activities, including HD streaming.",
    "Excellent": "Connection is very fast.",
}
_SIM_TEXTS = {
    SimStatus.ACTIVE: "Your SIM card is active and working.",
    SimStatus.MISSING: "No SIM card detected in the phone.",
    SimStatus.LOCKED_PIN: "The SIM card is locked with a PIN code.",
    SimStatus.LOCKED_PUK: "The SIM card is locked with a PUK code.",
}


def _get(model: Any, name: str) -> Any:
    """A field of a nested model kept as its dump; anything else (a value a malformed
    call left there) is read as τ² reads it, as an attribute."""
    if isinstance(model, dict):
        return model[name]
    return getattr(model, name)


def _put(model: Any, name: str, value: Any) -> None:
    if isinstance(model, dict):
        model[name] = value
    else:
        setattr(model, name, value)


def _on_off(flag: Any) -> str:
    return "ON" if flag else "OFF"


def _vpn_default() -> Record:
    return VpnDetails(
        server_address="192.168.1.1",
        protocol="OpenVPN",
        server_performance=PerformanceLevel.EXCELLENT,
    ).model_dump()


class PhoneToolkit(Toolkit):
    """The phone's state, set-up, network search and assertions (no tools of its own)."""

    schema = TelecomUserDB
    tables = frozenset()

    _DEFAULT = "telecom_vpn_default"
    """Session key: this episode's default VPN details (τ²'s class-wide object)."""
    _SHARED = "telecom_vpn_details_shared"
    """Session key: the phone's VPN details are that default object."""

    @property
    def _vpn_default(self) -> Record:
        found: Record = self.db.session.setdefault(self._DEFAULT, _vpn_default())
        return found

    @property
    def device(self) -> Record:
        found: Record = self.db.value("device")
        return found

    @property
    def surroundings(self) -> Record:
        found: Record = self.db.value("surroundings")
        return found

    def set_user_info(self, name: str, phone_number: str) -> None:
        self.surroundings["name"] = name
        self.surroundings["phone_number"] = phone_number

    def set_user_location(self, abroad: bool) -> None:
        self.surroundings["is_abroad"] = abroad

    def _check_status_bar(self) -> str:
        device = self.device
        shown = []
        if device["airplane_mode"]:
            shown.append("✈️ Airplane Mode")
        else:
            shown.append(_SIGNAL_ICONS.get(device["network_signal_strength"], "📵 No Signal"))
            technology = device["network_technology_connected"]
            if technology != NetworkTechnology.NONE:
                shown.append(technology.value)
            if device["data_enabled"] and technology != NetworkTechnology.NONE:
                shown.append("📱 Data Enabled")
                if device["data_saver_mode"]:
                    shown.append("🔽 Data Saver")
            else:
                shown.append("📵 Data Disabled")
        if device["wifi_enabled"] and device["wifi_connected"]:
            if device["wifi_ssid"]:
                shown.append(f"📡 Connected to {device['wifi_ssid']}")
            else:
                shown.append("📡 Enabled")
        if device["vpn_connected"]:
            shown.append("🔒 VPN Connected")
        shown.append(f"🔋 {device['battery_level']}%")
        return " | ".join(shown)

    def _get_mobile_data_working(self) -> bool:
        device, surroundings = self.device, self.surroundings
        if device["airplane_mode"] or device["network_signal_strength"] == SignalStrength.NONE:
            return False
        if device["network_connection_status"] == NetworkStatus.NO_SERVICE:
            return False
        if surroundings["is_abroad"] and (
            not device["roaming_enabled"] or not surroundings["roaming_allowed"]
        ):
            return False
        if not device["data_enabled"]:
            return False
        return not surroundings["mobile_data_usage_exceeded"]

    def _run_speed_test(self) -> tuple[float | None, str | None]:
        if not self._get_mobile_data_working():
            return None, "No Connection"
        device = self.device
        details = device["vpn_details"]
        if (
            device["vpn_connected"]
            and details
            and _get(details, "server_performance") == PerformanceLevel.POOR
        ):
            factor = 0.1
        else:
            factor = 1.0
        if device["data_saver_mode"]:
            factor *= 0.2
        low, high = _SPEED_RANGES.get(device["network_technology_connected"], (0.0, 0.0))
        signal = _SIGNAL_FACTORS.get(device["network_signal_strength"], 0.0)
        speed = round((low + high) / 2.0 * signal * factor, 2)
        if speed < 1:
            description = "Very Poor"
        elif speed < 5:
            description = "Poor"
        elif speed < 25:
            description = "Fair"
        elif speed < 100:
            description = "Good"
        else:
            description = "Excellent"
        return speed, description

    def _drop_wifi(self) -> None:
        device = self.device
        device["wifi_connected"] = False
        device["wifi_ssid"] = None
        device["wifi_signal_strength"] = SignalStrength.NONE

    def _check_sim_status(self) -> Any:
        if self.device["sim_card_missing"]:
            return SimStatus.MISSING
        return self.device["sim_card_status"]

    def _can_send_mms(self) -> Any:
        device = self.device
        if not self._get_mobile_data_working():
            return False
        if device["network_technology_connected"] == NetworkTechnology.TWO_G:
            return False
        if device["wifi_calling_enabled"] and device["wifi_calling_mms_over_wifi"]:
            return False
        if _get(device["active_apn_settings"], "mmsc_url") is None:
            return False
        app = device["app_statuses"].get("messaging")
        if app is None:
            return False
        return app["permissions"]["storage"] and app["permissions"]["sms"]

    def simulate_network_search(self) -> None:
        """What a network search finds: from the SIM, the preferred mode and the signal
        where the customer is, unless airplane mode, a broken APN or an inactive line
        leaves no service."""
        device, signal = self.device, self.surroundings["signal_strength"]
        sim = self._check_sim_status()
        if sim == SimStatus.ACTIVE:
            device["network_connection_status"] = NetworkStatus.CONNECTED
            preference = device["network_mode_preference"]
            if preference == NetworkModePreference.FOUR_G_5G_PREFERRED:
                five = signal.get(NetworkTechnology.FIVE_G, SignalStrength.NONE)
                if five == SignalStrength.NONE:
                    self._connect(NetworkTechnology.FOUR_G)
                else:
                    device["network_technology_connected"] = NetworkTechnology.FIVE_G
                    device["network_signal_strength"] = five
            elif preference == NetworkModePreference.FOUR_G_ONLY:
                self._connect(NetworkTechnology.FOUR_G)
            elif preference == NetworkModePreference.THREE_G_ONLY:
                self._connect(NetworkTechnology.THREE_G)
            elif preference == NetworkModePreference.TWO_G_ONLY:
                self._connect(NetworkTechnology.TWO_G)
            else:
                self._connect(NetworkTechnology.FOUR_G)
        else:
            self._no_service()
        if device["airplane_mode"]:
            self._no_service()
        if _get(device["active_apn_settings"], "apn_name") == APNNames.BROKEN:
            self._no_service()
        if not self.surroundings["line_active"]:
            self._no_service()

    def _connect(self, technology: NetworkTechnology) -> None:
        device = self.device
        device["network_technology_connected"] = technology
        device["network_signal_strength"] = self.surroundings["signal_strength"].get(
            technology, SignalStrength.NONE
        )

    def _no_service(self) -> None:
        device = self.device
        device["network_connection_status"] = NetworkStatus.NO_SERVICE
        device["network_technology_connected"] = NetworkTechnology.NONE
        device["network_signal_strength"] = SignalStrength.NONE

    def assert_airplane_mode_status(self, expected_status: bool) -> bool:
        return bool(self.device["airplane_mode"] == expected_status)

    def assert_service_status(self, expected_status: str) -> bool:
        return bool(self.device["network_connection_status"] == NetworkStatus(expected_status))

    def assert_mobile_data_status(self, expected_status: bool) -> bool:
        return self._get_mobile_data_working() == expected_status

    def assert_mobile_roaming_status(self, expected_status: bool) -> bool:
        return bool(self.device["roaming_enabled"] == expected_status)

    def assert_mobile_data_saver_mode_status(self, expected_status: bool) -> bool:
        return bool(self.device["data_saver_mode"] == expected_status)

    def assert_internet_speed(
        self, expected_speed: float, expected_desc: str | None = None
    ) -> bool:
        speed, description = self._run_speed_test()
        speed = speed or 0.0
        if expected_desc is None:
            return speed >= expected_speed
        assert description is not None
        return speed >= expected_speed and description.lower() == expected_desc.lower()

    def assert_internet_not_excellent(self) -> bool:
        _, description = self._run_speed_test()
        assert description is not None
        return description.lower() != "excellent"

    def assert_can_send_mms(self, expected_status: bool) -> bool:
        return bool(self._can_send_mms() == expected_status)

    def assert_mobile_data_usage_exceeded(self, expected_status: bool) -> bool:
        return bool(self.surroundings["mobile_data_usage_exceeded"] == expected_status)
