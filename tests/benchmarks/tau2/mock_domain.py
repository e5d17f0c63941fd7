"""τ²'s mock domain (a task list and a notification inbox), written on deedbench's τ²
framework: the smallest dual-control domain, for testing the framework against τ²."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deedbench.benchmarks.servicedesk import Procedure
from deedbench.benchmarks.tau2.convention import Dump
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.engine import tool
from deedbench.scoring.procedure import CONSENT

TaskStatus = Literal["pending", "completed"]


class Task(BaseModel):
    task_id: str
    title: str
    description: str | None = None
    status: TaskStatus


class User(BaseModel):
    user_id: str
    name: str
    tasks: list[str]


class MockDB(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tasks: dict[str, Task]
    users: dict[str, User]


class Notification(BaseModel):
    model_config = ConfigDict(extra="forbid")
    notification_id: str
    message: str
    status: Literal["unread", "read"] = "unread"
    task_id: str | None = None


class MockUserDB(BaseModel):
    model_config = ConfigDict(extra="forbid")
    notifications: dict[str, Notification] = Field(default_factory=dict)


class MockTools(Toolkit):
    tau2_module = "tau2.domains.mock.tools"
    schema = MockDB

    @tool(kind="write", keys=("user_id",))
    def create_task(self, user_id: str, title: str, description: str | None = None) -> Dump:
        """Create a task for a user.

        Args:
            user_id: The user's id.
            title: The task's title.
            description: What the task is about.
        """
        users = self.db["users"]
        if user_id not in users:
            raise ValueError(f"User {user_id} not found")
        task_id = f"task_{len(self.db['tasks']) + 1}"
        task = Task(task_id=task_id, title=title, description=description, status="pending")
        record = task.model_dump()
        self.db["tasks"][task_id] = record
        users[user_id]["tasks"].append(task_id)
        return Dump(record)

    @tool
    def get_users(self) -> list[Dump]:
        """Every user."""
        return [Dump(user) for user in self.db["users"].values()]

    @tool(kind="write", keys=("task_id",))
    def update_task_status(self, task_id: str, status: TaskStatus) -> Dump:
        """Set a task's status.

        Args:
            task_id: The task's id.
            status: pending or completed.
        """
        if task_id not in self.db["tasks"]:
            raise ValueError(f"Task {task_id} not found")
        task = self.db["tasks"][task_id]
        task["status"] = status
        return Dump(task)

    def assert_number_of_tasks(self, user_id: str, expected_number: int) -> bool:
        if user_id not in self.db["users"]:
            raise ValueError(f"User {user_id} not found")
        return len(self.db["users"][user_id]["tasks"]) == expected_number

    def assert_task_status(self, task_id: str, expected_status: TaskStatus) -> bool:
        if task_id not in self.db["tasks"]:
            raise ValueError(f"Task {task_id} not found")
        return bool(self.db["tasks"][task_id]["status"] == expected_status)

    @tool(kind="generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the user over to a human agent.

        Args:
            summary: The user's issue.
        """
        return "Transfer successful"


class MockUserTools(Toolkit):
    tau2_module = "tau2.domains.mock.user_tools"
    schema = MockUserDB

    @tool(side="user")
    def check_notifications(self) -> list[Dump]:
        """Every notification in the inbox."""
        return [Dump(n) for n in self.db["notifications"].values()]

    @tool(kind="write", side="user")
    def dismiss_notification(self, notification_id: str) -> str:
        """Mark a notification read.

        Args:
            notification_id: The notification's id.
        """
        if notification_id not in self.db["notifications"]:
            raise ValueError(f"Notification {notification_id} not found")
        self.db["notifications"][notification_id]["status"] = "read"
        return f"Notification {notification_id} dismissed"

    def add_notification(
        self, notification_id: str, message: str, task_id: str | None = None
    ) -> Dump:
        record = Notification(
            notification_id=notification_id, message=message, task_id=task_id
        ).model_dump()
        self.db["notifications"][notification_id] = record
        return Dump(record)

    def assert_notification_status(self, notification_id: str, expected_status: str) -> bool:
        if notification_id not in self.db["notifications"]:
            raise ValueError(f"Notification {notification_id} not found")
        return bool(self.db["notifications"][notification_id]["status"] == expected_status)


MOCK = Tau2Domain(
    name="mock",
    tau2_name="mock",
    toolkit=MockTools,
    user_toolkit=MockUserTools,
    user_db_file="user_db.json",
    procedure=Procedure(rules=(CONSENT,)),  # the mock's users never identify themselves
)
