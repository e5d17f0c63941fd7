"""The customer's phone (τ²'s ``TelecomUserTools``): what the user, or a solo agent, can do.

The phone and the customer's surroundings are two values of the user's world, each
the dump of its model. τ²'s phone is a pydantic model mutated without validation,
so a malformed argument can leave, say, a number where the network mode belongs,
and later calls then fail on it. The same happens here: fields are written as
given, and a nested settings object that is no longer a model (`_get`, `_put`)
fails on attribute access with Python's own message, as τ²'s does.

One τ² quirk is kept within an episode and stopped at its edge: connecting a VPN
gives τ²'s phone the class-wide default VPN details object itself, and ``break_vpn``
degrades that object, so in τ² every VPN connected later *in the same process* is
poor, whichever simulation connects it: a τ² run's telecom results depend on the
order its simulations ran in. Here each episode has its own default (in its world's
session), degraded as τ²'s is within the episode, fresh for the next one: what a τ²
process running that one simulation does.
"""

from __future__ import annotations

from typing import Any

from deedbench.benchmarks.servicedesk.world import Record
from deedbench.benchmarks.tau2.telecom.user_schema import (
    APNNames,
    APNSettings,
    AppPermissions,
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
from deedbench.engine import tool

__all__ = ["TelecomUserTools"]


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


class TelecomUserTools(Toolkit):
    """The customer's phone: status checks, toggles, SIM, APN, Wi-Fi, VPN, apps, payment."""

    tau2_module = "tau2.domains.telecom.user_tools"
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

    # --- set-up: who and where the customer is ---------------------------------------------

    def set_user_info(self, name: str, phone_number: str) -> None:
        self.surroundings["name"] = name
        self.surroundings["phone_number"] = phone_number

    def set_user_location(self, abroad: bool) -> None:
        self.surroundings["is_abroad"] = abroad

    # --- status bar and network ------------------------------------------------------------

    @tool(side="user")
    def check_status_bar(self) -> str:
        """Show the icons in the phone's status bar: signal, network type, mobile data
        (on, off, data saver), Wi-Fi, VPN and battery."""
        return f"Status Bar: {self._check_status_bar()}"

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

    @tool(side="user")
    def check_network_status(self) -> str:
        """Show the phone's cellular and Wi-Fi connection: airplane mode, SIM, signal,
        network type, mobile data and data roaming."""
        device = self.device
        sim = self._check_sim_status()
        lines = [
            f"Airplane Mode: {_on_off(device['airplane_mode'])}",
            f"SIM Card Status: {sim.value}",
            f"Cellular Connection: {device['network_connection_status'].value}",
            f"Cellular Signal: {device['network_signal_strength'].value}",
            f"Cellular Network Type: {device['network_technology_connected'].value}",
            f"Mobile Data Enabled: {'Yes' if device['data_enabled'] else 'No'}",
            f"Data Roaming Enabled: {'Yes' if device['roaming_enabled'] else 'No'}",
            f"Wi-Fi Radio: {_on_off(device['wifi_enabled'])}",
            f"Wi-Fi Connected: {'Yes' if device['wifi_connected'] else 'No'}",
        ]
        if device["wifi_connected"]:
            lines.append(f"Connected Wi-Fi Network: {device['wifi_ssid']}")
        return "\n".join(lines)

    @tool(side="user")
    def check_network_mode_preference(self) -> str:
        """Show which cellular network types the phone prefers."""
        return f"Network Mode Preference: {self.device['network_mode_preference'].value}"

    @tool(kind="write", side="user")
    def set_network_mode_preference(self, mode: NetworkModePreference | str) -> str:
        """Choose which cellular network types the phone prefers (faster 4G/5G, or 3G or
        2G only); the phone then searches for a network.

        Args:
            mode: One of 4g_5g_preferred, 4g_only, 3g_only, 2g_only.
        """
        chosen = self._set_network_mode_preference(mode)
        if chosen is None:
            options = ", ".join([m.value for m in NetworkModePreference])
            return (
                f"Failed to set network mode: '{mode}' is not a valid option. "
                f"Please use one of: {options}\nStatus Bar: {self._check_status_bar()}"
            )
        return (
            f"Preferred Network Mode set to: {chosen.value}\nStatus Bar: {self._check_status_bar()}"
        )

    def _set_network_mode_preference(self, mode: Any) -> Any:
        try:
            if isinstance(mode, str):
                mode = NetworkModePreference(mode)
            self.device["network_mode_preference"] = mode
            self.simulate_network_search()
            return mode
        except ValueError:
            return None

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

    @tool(side="user")
    def run_speed_test(self) -> str:
        """Measure the phone's download speed, and say what it is good enough for."""
        speed, description = self._run_speed_test()
        if speed is None:
            return f"Speed test failed: {description or 'Could not determine speed'}."
        advice = _SPEED_ADVICE.get(description or "", "")
        return f"Speed Test Result: {speed:.2f} Mbps ({description}). {advice}"

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

    # --- airplane mode ---------------------------------------------------------------------

    @tool(kind="write", side="user")
    def toggle_airplane_mode(self) -> str:
        """Turn airplane mode on or off (on cuts cellular, Wi-Fi and Bluetooth)."""
        state = self._toggle_airplane_mode()
        return f"Airplane Mode is now {_on_off(state)}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_airplane_mode(self) -> Any:
        device = self.device
        was_on = device["airplane_mode"]
        device["airplane_mode"] = not was_on
        if was_on:
            device["network_connection_status"] = NetworkStatus.SEARCHING
            if device["wifi_enabled"]:
                self._drop_wifi()
        else:
            self._drop_wifi()
            if device["vpn_connected"]:
                self._disconnect_vpn()
        self.simulate_network_search()
        return device["airplane_mode"]

    def _drop_wifi(self) -> None:
        device = self.device
        device["wifi_connected"] = False
        device["wifi_ssid"] = None
        device["wifi_signal_strength"] = SignalStrength.NONE

    def turn_airplane_mode_on(self) -> str:
        if not self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        if self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    # --- SIM card --------------------------------------------------------------------------

    @tool(side="user")
    def check_sim_status(self) -> str:
        """Show whether the SIM card works: active, missing, or locked by PIN or PUK."""
        status = self._check_sim_status()
        return _SIM_TEXTS.get(status, f"Unknown SIM status: {status.value}")

    def _check_sim_status(self) -> Any:
        if self.device["sim_card_missing"]:
            return SimStatus.MISSING
        return self.device["sim_card_status"]

    @tool(kind="write", side="user")
    def reseat_sim_card(self) -> str:
        """Take the SIM card out and put it back, which can fix a SIM that is not recognised."""
        self.device["sim_card_missing"] = False
        self.simulate_network_search()
        if self.device["sim_card_missing"] or self._check_sim_status() == SimStatus.MISSING:
            raise AssertionError
        return f"SIM card re-seated successfully.\nStatus Bar: {self._check_status_bar()}"

    def unseat_sim_card(self) -> str:
        self.device["sim_card_missing"] = True
        self.simulate_network_search()
        if not self.device["sim_card_missing"] or self._check_sim_status() != SimStatus.MISSING:
            raise AssertionError
        return "SIM card un-seated successfully."

    def lock_sim_card(self, mode: str) -> str:
        device = self.device
        if mode == "pin":
            device["sim_card_status"] = SimStatus.LOCKED_PIN
        elif mode == "puk":
            device["sim_card_status"] = SimStatus.LOCKED_PUK
        self.simulate_network_search()
        if mode == "pin" and device["sim_card_status"] != SimStatus.LOCKED_PIN:
            raise AssertionError
        if mode == "puk" and device["sim_card_status"] != SimStatus.LOCKED_PUK:
            raise AssertionError
        return f"SIM card locked successfully in {mode} mode."

    # --- mobile data and roaming -----------------------------------------------------------

    @tool(kind="write", side="user")
    def toggle_data(self) -> str:
        """Turn mobile data on or off (cellular internet when there is no Wi-Fi)."""
        state = self._toggle_data()
        return f"Mobile Data is now {_on_off(state)}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_data(self) -> bool:
        state = not self.device["data_enabled"]
        self.device["data_enabled"] = state
        self.simulate_network_search()
        return state

    def turn_data_on(self) -> str:
        self.device["data_enabled"] = True
        return "Data connection restored."

    def turn_data_off(self) -> str:
        if self._toggle_data():
            self._toggle_data()
        return "Data connection broken."

    @tool(kind="write", side="user")
    def toggle_roaming(self) -> str:
        """Turn data roaming on or off (data on networks outside the carrier's coverage)."""
        state = self._toggle_roaming()
        return f"Data Roaming is now {_on_off(state)}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_roaming(self) -> bool:
        state = not self.device["roaming_enabled"]
        self.device["roaming_enabled"] = state
        self.simulate_network_search()
        return state

    def turn_roaming_on(self) -> str:
        if not self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now ON."

    def turn_roaming_off(self) -> str:
        if self._toggle_roaming():
            self._toggle_roaming()
        return "Data Roaming is now OFF."

    @tool(side="user")
    def check_data_restriction_status(self) -> str:
        """Show whether a data-limiting feature (Data Saver mode) is on."""
        if self.device["data_saver_mode"]:
            return "Data Saver mode is ON (limits data usage)."
        return "Data Saver mode is OFF."

    @tool(kind="write", side="user")
    def toggle_data_saver_mode(self) -> str:
        """Turn Data Saver mode on or off (on uses less data, and data may be slower)."""
        state = self._toggle_data_saver_mode()
        return f"Data Saver Mode is now {_on_off(state)}.\nStatus Bar: {self._check_status_bar()}"

    def _toggle_data_saver_mode(self) -> bool:
        state = not self.device["data_saver_mode"]
        self.device["data_saver_mode"] = state
        return state

    def turn_data_saver_mode_on(self) -> str:
        if not self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now ON."

    def turn_data_saver_mode_off(self) -> str:
        if self._toggle_data_saver_mode():
            self._toggle_data_saver_mode()
        return "Data Saver Mode is now OFF."

    # --- APN settings ----------------------------------------------------------------------

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

    # --- Wi-Fi -----------------------------------------------------------------------------

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

    # --- VPN -------------------------------------------------------------------------------

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
        TelecomUserTools.connect_vpn(self)
        _put(self.device["vpn_details"], "server_performance", PerformanceLevel.POOR)
        if self.db.session.get(self._SHARED):
            self._vpn_default["server_performance"] = PerformanceLevel.POOR
        return "VPN connection broken."

    # --- apps ------------------------------------------------------------------------------

    @tool(side="user")
    def check_installed_apps(self) -> str:
        """List the apps installed on the phone."""
        names = ", ".join(list(self.device["app_statuses"].keys()))
        return f"The following apps are installed on the phone: {names}"

    @tool(side="user")
    def check_app_status(self, app_name: str) -> str:
        """Show an app's details, such as the permissions it has.

        Args:
            app_name: The app's name.
        """
        app = self.device["app_statuses"].get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        lines = [f"Status for App: {app_name}"]
        granted = [n.replace("_", " ").lower() for n, on in app["permissions"].items() if on]
        if not granted:
            lines.append(" - Permissions: None granted.")
        else:
            lines.append(" - Permissions Granted:")
            for permission in granted:
                lines.append(f"   - {permission}")
        return "\n".join(lines)

    @tool(side="user")
    def check_app_permissions(self, app_name: str) -> str:
        """Show which permissions an app has (such as storage or SMS).

        Args:
            app_name: The app's name.
        """
        app = self.device["app_statuses"].get(app_name)
        if not app:
            return f"App '{app_name}' not found on this phone."
        granted = [n.replace("_", " ").lower() for n, on in app["permissions"].items() if on]
        if not granted:
            return f"App '{app_name}' currently has no permissions granted."
        return f"App '{app_name}' has permission for: {', '.join(granted)}."

    @tool(kind="write", side="user")
    def grant_app_permission(self, app_name: str, permission: str) -> str:
        """Give an app a permission (such as storage or SMS) that some of its features need.

        Args:
            app_name: The app's name.
            permission: The permission, in lowercase.
        """
        success, message = self._grant_app_permission(app_name, permission)
        result = "Success. " if success else "Error. "
        return f"{result}{message}\nStatus Bar: {self._check_status_bar()}"

    def _grant_app_permission(self, app_name: str, permission: str) -> tuple[bool, str]:
        app = self.device["app_statuses"].get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot grant permission."
        available = list(app["permissions"].keys())
        if permission not in available:
            return (
                False,
                f"Permission '{permission}' not tracked for app '{app_name}', "
                f"available permissions: {available}",
            )
        app["permissions"][permission] = True
        return True, f"Permission '{permission}' granted to app '{app_name}'."

    def remove_app_permission(self, app_name: str, permission: str) -> tuple[bool, str]:
        app = self.device["app_statuses"].get(app_name)
        permission = permission.lower()
        if not app:
            return False, f"App '{app_name}' not found. Cannot remove permission."
        if permission not in app["permissions"]:
            if not hasattr(AppPermissions, permission):
                return False, f"Permission '{permission}' not tracked for app '{app_name}'."
            raise ValueError(f'"AppPermissions" object has no field "{permission}"')
        app["permissions"][permission] = False
        return True, f"Permission '{permission}' removed from app '{app_name}'."

    # --- MMS -------------------------------------------------------------------------------

    @tool(side="user")
    def can_send_mms(self) -> str:
        """Check whether the messaging app can send MMS (picture) messages."""
        if self._can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

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

    # --- the whole phone -------------------------------------------------------------------

    @tool(kind="write", side="user")
    def reboot_device(self) -> str:
        """Restart the phone, which refreshes its services and connections."""
        device = self.device
        lines = []
        if _get(device["active_apn_settings"], "reset_at_reboot"):
            lines.append("Resetting APN settings...")
            device["active_apn_settings"] = APNSettings().model_dump()
        lines.append("Restarting network services...")
        device["network_connection_status"] = NetworkStatus.SEARCHING
        self.simulate_network_search()
        return "\n".join(lines) + f"\nStatus Bar: {self._check_status_bar()}"

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

    # --- payment ---------------------------------------------------------------------------

    @tool(side="user")
    def check_payment_request(self) -> str:
        """Check whether the agent has sent a payment request."""
        request = self.surroundings["payment_request"]
        if request is None:
            return "No payment request has been made."
        return (
            f"You have a payment request for bill {request['bill_id']} "
            f"of {request['amount_due']} USD."
        )

    @tool(kind="write", side="user")
    def make_payment(self) -> str:
        """Pay the bill the agent sent a payment request for."""
        request = self.surroundings["payment_request"]
        if request is None:
            return "You do not have a payment request."
        request["paid"] = True
        return (
            f"Payment of {request['amount_due']} USD has been made for bill {request['bill_id']}."
        )

    # --- assertions (tasks' env_assertions) ------------------------------------------------

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
