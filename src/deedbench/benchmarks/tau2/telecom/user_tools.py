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

from deedbench.benchmarks.tau2.telecom.phone import (
    _SIM_TEXTS,
    _SPEED_ADVICE,
    PhoneToolkit,
    _on_off,
)
from deedbench.benchmarks.tau2.telecom.phone_apps import PhoneAppTools
from deedbench.benchmarks.tau2.telecom.phone_settings import PhoneSettingsTools
from deedbench.benchmarks.tau2.telecom.user_schema import (
    NetworkModePreference,
    NetworkStatus,
    SimStatus,
)
from deedbench.benchmarks.tau2.toolkit import named_as_own
from deedbench.engine import tool

__all__ = ["TelecomUserTools"]


class TelecomUserTools(PhoneSettingsTools, PhoneAppTools, PhoneToolkit):
    """The customer's phone: status checks, toggles, SIM, APN, Wi-Fi, VPN, apps, payment.

    Its own tools come first (status, network, airplane mode, SIM, data and roaming), then
    its settings' and its apps' (τ²'s order, which is the order the tools are shown in)."""

    tau2_module = "tau2.domains.telecom.user_tools"

    @tool(side="user")
    def check_status_bar(self) -> str:
        """Show the icons in the phone's status bar: signal, network type, mobile data
        (on, off, data saver), Wi-Fi, VPN and battery."""
        return f"Status Bar: {self._check_status_bar()}"

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

    @tool(side="user")
    def run_speed_test(self) -> str:
        """Measure the phone's download speed, and say what it is good enough for."""
        speed, description = self._run_speed_test()
        if speed is None:
            return f"Speed test failed: {description or 'Could not determine speed'}."
        advice = _SPEED_ADVICE.get(description or "", "")
        return f"Speed Test Result: {speed:.2f} Mbps ({description}). {advice}"

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

    def turn_airplane_mode_on(self) -> str:
        if not self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now ON."

    def turn_airplane_mode_off(self) -> str:
        if self._toggle_airplane_mode():
            self._toggle_airplane_mode()
        return "Airplane Mode is now OFF."

    @tool(side="user")
    def check_sim_status(self) -> str:
        """Show whether the SIM card works: active, missing, or locked by PIN or PUK."""
        status = self._check_sim_status()
        return _SIM_TEXTS.get(status, f"Unknown SIM status: {status.value}")

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


named_as_own(TelecomUserTools, PhoneSettingsTools, PhoneAppTools, PhoneToolkit)
