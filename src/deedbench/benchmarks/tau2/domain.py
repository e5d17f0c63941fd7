"""A τ² domain as deedbench declares it, and its data as one benchmark loads it.

`Tau2Domain` is what each domain module (``airline/``, ``retail/``, ``telecom/``,
``banking/``) states once: τ²'s name for it, its toolkits (the desk's and, for
dual control, the customer's, whose tools say they are the user's), whether both
act on one database (banking), the files its databases are read from, how the
sides are kept in step, and its procedure. From it comes the service desk's
`Domain` (`desk`), the framework every desk runs on, as any desk's domain is.

`Tau2Data` is a domain's data read from one folder: the databases as τ² holds
them, the tasks, and each task's start, made once and copied for every episode
and every replay: the task's data updates (read through the schema again), its
set-up calls, the conversation it starts with. So is each task's gold end state,
which every trajectory of the task is compared with: τ²'s tools are deterministic
within an episode (telecom's VPN default included, see ``telecom/user_tools``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from deedbench.benchmarks.servicedesk.domain import Domain, PolicyCheck
from deedbench.benchmarks.servicedesk.procedure import Procedure
from deedbench.benchmarks.servicedesk.world import DeskWorld
from deedbench.benchmarks.tau2.data import load_db, updated
from deedbench.benchmarks.tau2.environment import SkippedGoldAction, Tau2Environment
from deedbench.benchmarks.tau2.tasks import Tau2Task, load_tasks
from deedbench.benchmarks.tau2.toolkit import Toolkit
from deedbench.errors import BenchmarkError
from deedbench.records import Message
from deedbench.scoring.procedure import Violation

__all__ = ["GoldEnd", "Tau2Data", "Tau2Domain"]


@dataclass(frozen=True)
class Tau2Domain:
    """One τ² domain: its toolkits, databases, synchronisation and procedure rules."""

    name: str
    """deedbench's name, as in ``tau2-<name>``."""
    tau2_name: str
    """τ²'s name for it (``banking_knowledge``), as its result files say."""
    toolkit: type[Toolkit]
    procedure: Procedure = field(default_factory=Procedure)
    data_name: str = ""
    """The name of its folder in τ²'s data, where not `tau2_name` (``telecom-workflow``
    reads ``telecom``'s)."""
    user_toolkit: type[Toolkit] | None = None
    shares_db: bool = False
    """Whether the customer's tools act on the desk's database (banking) rather than a
    database of their own (telecom's phone)."""
    db_file: str = "db.json"
    user_db_file: str | None = None
    sync: Callable[[Any, Any], None] | None = None
    policy_check: PolicyCheck | None = None
    transcript_check: Callable[[Sequence[Message]], list[Violation]] | None = None
    """Procedure rules that read the whole transcript, the customer's own tool calls
    included (telecom's device actions), beside the desk's rules, which do not."""
    prepare: Callable[[DeskWorld, Tau2Task], None] | None = None
    """What a task's environment needs to know of the task before anything runs in it
    (τ³'s banking: which read-only calls its log keeps), done for the live episode and
    every replay alike."""

    @property
    def folder_name(self) -> str:
        return self.data_name or self.tau2_name

    @cached_property
    def desk(self) -> Domain:
        """The service desk's view of the domain; a `BenchmarkError` where a toolkit holds a
        tool of the other side (each toolkit binds its own side's database)."""
        user = self.user_toolkit
        tools = self.toolkit.tools()
        user_tools = user.tools() if user is not None else []
        wrong = [f"{self.toolkit.__name__}.{t.name}" for t in tools if t.side != "agent"]
        if user is not None:
            wrong += [f"{user.__name__}.{t.name}" for t in user_tools if t.side != "user"]
        if wrong:
            raise BenchmarkError(
                f"the {self.name} domain: tools of the other side in a toolkit: {', '.join(wrong)}"
            )
        return Domain(
            name=self.name,
            load=self.load,
            tools=[*tools, *user_tools],
            procedure=self.procedure,
            policy_check=self.policy_check,
            load_user=self.load_user if self.user_db_file is not None else None,
            tables=self.toolkit.tables,
            user_tables=user.tables if user is not None else None,
            bind=self.toolkit,
            bind_user=user,
            sync=self.sync,
        )

    def load(self, folder: Path) -> dict[str, Any]:
        what = f"τ² {self.name} database"
        return load_db(folder / self.db_file, self._schema(self.toolkit), what)

    def load_user(self, folder: Path) -> dict[str, Any]:
        assert self.user_toolkit is not None and self.user_db_file is not None
        return load_db(
            folder / self.user_db_file,
            self._schema(self.user_toolkit),
            f"τ² {self.name} user database",
        )

    @staticmethod
    def _schema(toolkit: type[Toolkit]) -> Any:
        if toolkit.schema is None:
            raise TypeError(f"{toolkit.__name__} names no schema for its database")
        return toolkit.schema


@dataclass
class GoldEnd:
    """A task's environment after τ²'s gold replay, made once; never change it."""

    task: Tau2Task
    environment: Tau2Environment
    skipped: list[SkippedGoldAction]
    """The gold actions that raised (τ² skips them)."""
    agent_texts: dict[Any, str] = field(default_factory=dict)
    user_texts: dict[Any, str] = field(default_factory=dict)
    """What `same_db` keeps of each side's entries, as JSON text, between comparisons."""


@dataclass
class Tau2Data:
    """A domain's databases and tasks as read from `folder`, with each task's start."""

    domain: Tau2Domain
    folder: Path
    benchmark: str
    split: str | None = "base"
    session: dict[str, Any] = field(default_factory=dict)
    """What every environment's worlds start their session with: texts their tools show
    that are not in the database (τ³'s discoverable tools' docstrings from the user's τ²
    source, `banking.discovery`)."""
    _starts: dict[tuple[str, bool, bool], tuple[Tau2Task, Tau2Environment]] = field(
        default_factory=dict, repr=False
    )
    _golds: dict[str, GoldEnd] = field(default_factory=dict, repr=False)

    @cached_property
    def base(self) -> dict[str, Any]:
        return self.domain.load(self.folder)

    @cached_property
    def user_base(self) -> dict[str, Any] | None:
        if self.domain.user_toolkit is None or self.domain.shares_db:
            return None
        return self.domain.load_user(self.folder)

    @cached_property
    def tasks(self) -> dict[str, Tau2Task]:
        found = load_tasks(self.folder, self.domain.tau2_name, self.split, self.benchmark)
        return {task.id: task for task in found}

    def before(self) -> DeskWorld:
        """The desk's untouched database as scorers and policy checks read it."""
        return DeskWorld(self.base, self.domain.desk.tables)

    def fresh(self, solo: bool = False) -> Tau2Environment:
        """An environment over the untouched databases (τ²'s freshly built one)."""
        return self._environment(self.base, self.user_base, solo)

    def _environment(
        self, base: dict[str, Any], user_base: dict[str, Any] | None, solo: bool
    ) -> Tau2Environment:
        desk = self.domain.desk
        agent = self._world(base, desk.tables)
        user: DeskWorld | None = None
        if self.domain.user_toolkit is not None:
            shared = self.domain.shares_db
            user = agent if shared else self._world(user_base or {}, desk.user_tables)
        return Tau2Environment(desk, agent, user, solo)

    def _world(self, base: dict[str, Any], tables: Any) -> DeskWorld:
        world = DeskWorld(base, tables)
        world.session.update(self.session)
        return world

    def start(self, task: Tau2Task, solo: bool = False) -> Tau2Environment:
        """The environment as `task` starts, its own copy: τ²'s ``set_state`` with the task's
        initial state (data updates, set-up calls, then the conversation so far)."""
        key = (task.id, solo, True)
        found = self._starts.get(key)
        if found is None or not _same(found[0], task):
            environment = self.initialised(task, solo)
            environment.replay(task.history())
            found = self._starts[key] = (task, environment)
        return found[1].copy()

    def gold_end(self, task: Tau2Task) -> GoldEnd:
        """The task's start (not solo, as τ²'s evaluator builds it) after its gold actions."""
        found = self._golds.get(task.id)
        if found is None or not _same(found.task, task):
            environment = self.start(task, solo=False)
            criteria = task.evaluation_criteria
            actions = (criteria.actions if criteria is not None else None) or []
            found = GoldEnd(task, environment, environment.run_gold(actions))
            self._golds[task.id] = found
        return found

    def initialised(self, task: Tau2Task, solo: bool = False) -> Tau2Environment:
        """The environment after the task's data updates and set-up calls, before any
        message (where τ²'s evaluator replays a whole trajectory from), its own copy."""
        key = (task.id, solo, False)
        found = self._starts.get(key)
        if found is None or not _same(found[0], task):
            found = self._starts[key] = (task, self._initialised(task, solo))
        return found[1].copy()

    def _initialised(self, task: Tau2Task, solo: bool) -> Tau2Environment:
        state = task.initial_state
        data = state.initialization_data if state is not None else None
        environment = self._with_data(data.agent_data, data.user_data, solo) if data else None
        if environment is None:
            environment = self._environment(self.base, self.user_base, solo)
        if self.domain.prepare is not None:
            self.domain.prepare(environment.agent_world, task)
        for action in (state.initialization_actions or []) if state is not None else []:
            environment.run_function(action.env_type, action.func_name, action.arguments)
        return environment

    def _with_data(
        self, agent_data: dict[str, Any] | None, user_data: dict[str, Any] | None, solo: bool
    ) -> Tau2Environment | None:
        """The environment after a task's data updates, as τ²'s ``set_state`` leaves it:
        after an update of the desk's database the customer's tools act on that database
        too, and after an update of the customer's the desk's tools act on theirs (τ²
        points one side at the other's database), whatever the domain."""
        user_kit = self.domain.user_toolkit
        if agent_data is None and (user_data is None or user_kit is None):
            return None
        desk = self.domain.desk
        agent_schema = self.domain._schema(self.domain.toolkit)
        agent_db, own_schema = self.base, agent_schema
        shared = self.domain.shares_db
        if agent_data is not None:
            agent_db = updated(agent_db, agent_data, agent_schema)
            shared = shared or user_kit is not None
        if user_data is not None and user_kit is not None:
            if shared:
                agent_db = updated(agent_db, user_data, agent_schema)
            else:
                agent_schema = self.domain._schema(user_kit)
                agent_db = updated(self.user_base or {}, user_data, agent_schema)
            shared = True
        tables = desk.tables if agent_schema is own_schema else desk.user_tables
        agent = self._world(agent_db, tables)
        return Tau2Environment(desk, agent, agent if shared else None, solo)


def _same(cached: Tau2Task, task: Tau2Task) -> bool:
    """Whether what was made for `cached` holds for `task` (a result file may record a
    task under the id of a current one, changed since)."""
    return cached is task or cached == task
