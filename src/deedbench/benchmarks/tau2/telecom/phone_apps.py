"""The phone's apps, MMS, restart and payment requests as τ²'s telecom user toolkit has
them. Mixed into `TelecomUserTools`, after its settings (τ²'s order)."""

from __future__ import annotations

from deedbench.benchmarks.tau2.telecom.phone import (
    PhoneToolkit,
    _get,
)
from deedbench.benchmarks.tau2.telecom.user_schema import (
    APNSettings,
    AppPermissions,
    NetworkStatus,
)
from deedbench.engine import tool

__all__ = ["PhoneAppTools"]


class PhoneAppTools(PhoneToolkit):
    """Apps and their permissions, MMS, restarting the phone, paying a bill."""

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

    @tool(side="user")
    def can_send_mms(self) -> str:
        """Check whether the messaging app can send MMS (picture) messages."""
        if self._can_send_mms():
            return "Your messaging app can send MMS messages."
        return "Your messaging app cannot send MMS messages."

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
