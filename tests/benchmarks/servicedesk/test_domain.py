"""A desk's domain: each tool's role stated once, on the tool, and everything else derived
from it; what the procedure and the customers say of the tools checked against them when
the domain is made; a task's customer identified by whatever the domain's ways take."""

from __future__ import annotations

from typing import Any

import pytest

from deedbench.benchmarks.retail import RETAIL, RETAIL_TOOLS, RetailBenchmark, builtin_tasks
from deedbench.benchmarks.servicedesk import (
    Customer,
    DeskWorld,
    Domain,
    Identity,
    Procedure,
    UserInstructions,
    transfer_to_human_agents,
)
from deedbench.benchmarks.tau2.domain import Tau2Domain
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.engine import tool
from deedbench.errors import BenchmarkError


@tool
def find_reader(data: DeskWorld, card: str) -> str:
    """Find a reader by library card.

    Args:
        card: The card number.
    """
    return card


@tool(kind="write", keys=("loan_id",))
def renew_loan(data: DeskWorld, loan_id: str) -> str:
    """Renew a loan.

    Args:
        loan_id: The loan.
    """
    return loan_id


@tool(kind="write", side="user")
def scan_card(data: DeskWorld, card: str) -> str:
    """The reader scans their card at the kiosk.

    Args:
        card: The card number.
    """
    return card


TOOLS = [find_reader, renew_loan, transfer_to_human_agents, scan_card]


def library(**changes: Any) -> Domain:
    fields: dict[str, Any] = {
        "name": "library",
        "load": lambda folder: {},
        "tools": TOOLS,
        "procedure": Procedure(auth_tools=frozenset({"find_reader"})),
        "customer": Customer(
            desk="a library",
            prompt_version="library-1",
            identities={
                "card": Identity("my card is {card}", "your card", "your card", "find_reader")
            },
            verbs={"renew": ("renew",)},
            asks_identity=("card",),
        ),
    }
    return Domain(**{**fields, **changes})


def test_the_procedure_the_rules_read_comes_from_the_tools_and_the_policy() -> None:
    spec = library().procedure_spec
    assert spec.write_tools == {"renew_loan": ("loan_id",)}  # the user's scan is theirs
    assert spec.transfer_tools == frozenset({"transfer_to_human_agents"})  # it ends the episode
    assert spec.auth_tools == frozenset({"find_reader"})


def test_whose_tool_it_is_comes_from_the_tool() -> None:
    domain = library()
    assert [t.name for t in domain.agent_tools] == [
        "find_reader",
        "renew_loan",
        "transfer_to_human_agents",
    ]
    assert [t.name for t in domain.user_tools] == ["scan_card"]


def test_retails_writes_are_its_tools_that_write() -> None:
    assert set(RETAIL.procedure_spec.write_tools) == {t.name for t in RETAIL_TOOLS if t.writes}


@pytest.mark.parametrize(
    ("procedure", "problem"),
    [
        (
            Procedure(auth_tools=frozenset({"find_reader", "find_by_name"})),
            "auth_tools names 'find_by_name', which is none of its tools",
        ),
        (
            Procedure(auth_tools=frozenset({"find_reader", "renew_loan"})),
            "auth_tools names 'renew_loan', which writes",
        ),
        (
            Procedure(
                auth_tools=frozenset({"find_reader"}),
                personal_read_tools=frozenset({"scan_card"}),
            ),
            "personal_read_tools names 'scan_card', which is none of its tools",
        ),
        (
            Procedure(
                auth_tools=frozenset({"find_reader"}),
                once_per_order_tools=frozenset({"find_reader"}),
            ),
            "once_per_order_tools names 'find_reader', which changes nothing",
        ),
        (
            Procedure(auth_tools=frozenset({"find_reader"}), rules=("consent", "politeness")),
            "unknown procedure rules ['politeness']",
        ),
    ],
)
def test_a_procedure_that_disagrees_with_the_tools_is_refused(
    procedure: Procedure, problem: str
) -> None:
    with pytest.raises(
        BenchmarkError, match="the library domain: .*" + problem.replace("[", r"\[")
    ):
        library(procedure=procedure)


def test_an_identity_looked_up_with_no_authentication_tool_is_refused() -> None:
    with pytest.raises(BenchmarkError, match="'find_reader', which is none of the procedure's"):
        library(procedure=Procedure())


def test_two_tools_of_one_name_are_refused() -> None:
    with pytest.raises(BenchmarkError, match="two tools named 'renew_loan'"):
        library(tools=[*TOOLS, renew_loan])


def test_a_customers_identity_is_what_its_way_of_identifying_takes() -> None:
    domain = library()
    ins = UserInstructions(identity={"card": "C-7"}, identify_by="card", wants=[])
    assert domain.introduction(ins) == "my card is C-7"
    assert domain.lookup_arguments(ins) == {"card": "C-7"}
    assert domain.missing_details(ins) == []
    bare = UserInstructions(identity={"email": "x@example.org"}, identify_by="card", wants=[])
    assert domain.missing_details(bare) == ["card"]


def test_a_task_file_writes_the_details_beside_the_other_fields() -> None:
    flat = {"email": "a@example.org", "user_id": "a_1", "identify_by": "email", "wants": []}
    ins = UserInstructions.model_validate(flat)
    assert ins.identity == {"email": "a@example.org", "user_id": "a_1"}
    assert ins.model_dump() == {**flat, "refuses": [], "free_text": None}
    assert UserInstructions.model_validate(ins.model_dump()) == ins


def test_a_task_whose_customer_lacks_a_detail_is_refused_when_the_benchmark_is_built() -> None:
    task = next(t for t in builtin_tasks() if t.instructions.identify_by == "name_zip")
    identity = {k: v for k, v in task.instructions.identity.items() if k != "zip"}
    lacking = task.model_copy(
        update={"instructions": task.instructions.model_copy(update={"identity": identity})}
    )
    with pytest.raises(BenchmarkError, match=f"task {task.id}: the instructions lack zip, "):
        RetailBenchmark(tasks=[lacking])


class _Desk(Toolkit):
    @tool(side="user")
    def peek(self) -> str:
        """Look."""
        return ""


def test_a_toolkit_holding_the_other_sides_tool_is_refused() -> None:
    domain = Tau2Domain(name="odd", tau2_name="odd", toolkit=_Desk)
    with pytest.raises(BenchmarkError, match=r"tools of the other side in a toolkit: _Desk\.peek"):
        _ = domain.desk
