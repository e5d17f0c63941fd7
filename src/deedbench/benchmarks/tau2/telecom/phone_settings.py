"""The phone's network settings as τ²'s telecom user toolkit has them: APN, Wi-Fi and
Wi-Fi calling, VPN. Mixed into `TelecomUserTools`, after its own tools (τ²'s order)."""

from __future__ import annotations

from typing import Any

from deedbench.benchmarks.tau2.telecom.phone import (
    PhoneToolkit,
    _get,
    _on_off,
    _put,
)
from deedbench.benchmarks.tau2.telecom.user_schema import (
    APNNames,
    APNSettings,
    NetworkStatus,
    PerformanceLevel,
)
from deedbench.engine import tool

__all__ = ["PhoneSettingsTools"]


class PhoneSettingsTools(PhoneToolkit):
    """APN settings, Wi-Fi, Wi-Fi calling and the VPN."""

    @tool(side="user")
    def check_apn_settings(self) -> str:
        """Show the APN settings the phone uses for mobile data: the APN name and the MMSC
        URL used for picture messages."""
        settings = self.device["active_apn_settings"]
        if not isinstance(settings, dict):
            settings.model_copy  # noqa: B018  (fails as τ²'s copy of the settings fails)
        name = _get(settings, "apn_name").value or "Not Set"
        mmsc = _get(settings, "mmsc_url") or "Not Set"
        return (
            f"Current APN Name: {name}\nMMSC URL (for picture messages): {mmsc}\n"
            "(These are technical settings, usually best left unchanged.)"
        )

    @tool(kind="write", side="user")
    def set_apn_settings(self, apn_settings: APNSettings | dict[str, Any]) -> str:
        """Set the phone's APN settings.

        Args:
            apn_settings: The new settings: apn_name, reset_at_reboot, mms_apn, mmsc_url,
                mms_proxy, mms_port.
        """
        settings: Any = apn_settings
        if isinstance(settings, dict):
            settings = APNSettings(**settings).model_dump()
        self.device["active_apn_settings"] = settings
        update = f"APN settings set to: {_get(settings, 'apn_name').value}"
        self.simulate_network_search()
        return f"{update}\nStatus Bar: {self._check_status_bar()}"

    @tool(kind="write", side="user")
    def reset_apn_settings(self) -> str:
        """Reset the APN settings to the defaults (applied at the next reboot)."""
        _put(self.device["active_apn_settings"], "reset_at_reboot", True)
        self.simulate_network_search()
        return f"APN settings will reset at reboot.\nStatus Bar: {self._check_status_bar()}"

    def break_apn_settings(self) -> str:
        _put(self.device["active_apn_settings"], "apn_name", APNNames.BROKEN)
        self.simulate_network_search()
        if self.device["network_connection_status"] != NetworkStatus.NO_SERVICE:
            raise AssertionError
        return "APN settings broken. Please call reset_apn_settings() to fix."

    def break_apn_mms_setting(self) -> str:
        _put(self.device["active_apn_settings"], "mmsc_url", None)
        if self._can_send_mms():
            raise AssertionError
        return "APN MMS setting broken. Please call reset_apn_settings() to fix."

    @tool(side="user")
    def check_wifi_status(self) -> str:
        """Show whether Wi-Fi is on, which network it is connected to and how strong it is."""
        device = self.device
        if not device["wifi_enabled"]:
            return "Wi-Fi is turned OFF."
        if device["wifi_connected"]:
            return (
                f"Wi-Fi is ON and connected to '{device['wifi_ssid']}'. "
                f"Signal strength: {device['wifi_signal_strength'].value}."
            )
        return "Wi-Fi is ON but not connected to any network."

    @tool(kind="write", side="user")
    def toggle_wifi(self) -> str:
        """Turn the Wi-Fi radio on or off."""
        device = self.device
        if device["airplane_mode"]:
            return (
                "Cannot change Wi-Fi settings while Airplane Mode is ON.\n"
                f"Status Bar: {self._check_status_bar()}"
            )
        state = not device["wifi_enabled"]
        device["wifi_enabled"] = state
        if not state:
            self._drop_wifi()
        return f"Wi-Fi is now {_on_off(state)}.\nStatus Bar: {self._check_status_bar()}"

    @tool(side="user")
    def check_wifi_calling_status(self) -> str:
        """Show whether Wi-Fi Calling (calls over Wi-Fi instead of cellular) is on."""
        return f"Wi-Fi Calling is currently turned {_on_off(self.device['wifi_calling_enabled'])}."

    @tool(kind="write", side="user")
    def toggle_wifi_calling(self) -> str:
        """Turn Wi-Fi Calling on or off (calls over Wi-Fi, useful where cellular is weak)."""
        state = self._toggle_wifi_calling()
        return f"Wi-Fi Calling is now {_on_off(state)}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_wifi_calling(self) -> bool:
        state = not self.device["wifi_calling_enabled"]
        self.device["wifi_calling_enabled"] = state
        return state

    def set_wifi_calling(self, enabled: bool, mms_over_wifi: bool | None = None) -> str:
        if self.device["wifi_calling_enabled"] != enabled:
            self._toggle_wifi_calling()
        message = f"Wi-Fi Calling is now {_on_off(enabled)}."
        if mms_over_wifi is not None:
            self.device["wifi_calling_mms_over_wifi"] = mms_over_wifi
            message += f"\nMMS over Wi-Fi is now {_on_off(mms_over_wifi)}."
        return message

    @tool(side="user")
    def check_vpn_status(self) -> str:
        """Show whether a VPN is set up and connected, with its details when connected."""
        device = self.device
        details = device["vpn_details"]
        if device["vpn_connected"]:
            shown = dict(details) if details and device["vpn_connected"] else None
            if shown:
                return f"VPN is ON and connected. Details: {shown}"
            return "VPN is ON and connected (no specific details available)."
        if device["vpn_enabled_setting"]:
            return "VPN is turned ON in settings, but currently not connected."
        return "VPN is turned OFF."

    @tool(kind="write", side="user")
    def connect_vpn(self) -> str:
        """Connect the phone's VPN."""
        device = self.device
        if device["vpn_connected"]:
            return "VPN already connected."
        device["vpn_connected"] = True
        device["vpn_details"] = dict(self._vpn_default)
        self.db.session[self._SHARED] = True
        return f"VPN connected successfully.\nStatus Bar: {self._check_status_bar()}"

    @tool(kind="write", side="user")
    def disconnect_vpn(self) -> str:
        """Disconnect the VPN, which stops routing traffic through a VPN server."""
        if self._disconnect_vpn():
            update = "VPN disconnected successfully."
        else:
            update = "No active VPN connection to disconnect."
        return f"{update}\nStatus Bar: {self._check_status_bar()}"

    def _disconnect_vpn(self) -> bool:
        device = self.device
        if not device["vpn_connected"]:
            return False
        device["vpn_connected"] = False
        device["vpn_details"] = None
        self.db.session.pop(self._SHARED, None)
        return True

    def break_vpn(self) -> str:
        """Connect the VPN and make it slow (τ²: through its default details, for the episode)."""
        PhoneSettingsTools.connect_vpn(self)
        _put(self.device["vpn_details"], "server_performance", PerformanceLevel.POOR)
        if self.db.session.get(self._SHARED):
            self._vpn_default["server_performance"] = PerformanceLevel.POOR
        return "VPN connection broken."
