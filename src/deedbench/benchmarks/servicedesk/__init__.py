"""The service desk: the machinery of a τ-style customer-service benchmark, for any domain.

A domain (`retail/`, `airline/`) supplies its tools, data, procedure, policy rules
and how its customers talk, as a `Domain`; everything else is here and knows no
domain:

- `world.py`: the copy-on-write database of one episode (`DeskWorld`, read by
  τ-bench-style tools as ``data[table]``) and the loading of JSON tables;
- `task.py`: the task schema (`DeskTask`, `UserInstructions`, `Want`, `Action`);
- `procedure.py`: what a policy says of the tools beyond their own roles (`Procedure`);
- `domain.py`: `Domain`, with the customers' wording, identities, verbs and
  answers (`Customer`, `Identity`, `Answer`);
- `benchmark.py`: `ServiceDeskBenchmark`, a benchmark over a domain;
- `user.py` and `llm_user.py`: the scripted and the model-played customer;
- `baselines.py`: the oracle, reckless and idle agents;
- `tau_toolbox.py`: a turn run as τ-bench's environment and agent run it;
- `replay.py`: one replay loop, for gold actions and for recorded turns;
- `scorer.py`: outcome, outputs and procedure, with evidence;
- `validate.py`: checking tasks before they ship;
- `neutral_tools.py` and `arithmetic.py`: the tools every desk has (`calculate`
  without ``eval``, `think`, `transfer_to_human_agents`).
"""

from deedbench.benchmarks.servicedesk.baselines import IdleAgent, OracleAgent
from deedbench.benchmarks.servicedesk.benchmark import ServiceDeskBenchmark
from deedbench.benchmarks.servicedesk.domain import Answer, Customer, Domain, Identity, PolicyCheck
from deedbench.benchmarks.servicedesk.llm_user import STOP, LLMUser, user_prompt
from deedbench.benchmarks.servicedesk.neutral_tools import (
    calculate,
    taubench_named,
    think,
    transfer_to_human_agents,
)
from deedbench.benchmarks.servicedesk.procedure import Procedure, procedure_spec
from deedbench.benchmarks.servicedesk.replay import (
    FailedGoldAction,
    replay,
    replay_transcript,
    replay_turns,
)
from deedbench.benchmarks.servicedesk.scorer import TAU_ENDINGS, DeskScorer
from deedbench.benchmarks.servicedesk.task import (
    CHANGE,
    FORBIDDEN,
    INFO,
    TRANSFER,
    Action,
    DeskTask,
    UserInstructions,
    Want,
)
from deedbench.benchmarks.servicedesk.tau_toolbox import (
    RESPOND,
    TRANSFER_TOOL,
    TauToolBox,
    agent_replies,
    conversation,
)
from deedbench.benchmarks.servicedesk.user import MAX_REPEATS, ScriptedUser, action_done
from deedbench.benchmarks.servicedesk.validate import Desk, TaskCheck, check_task, run_baseline
from deedbench.benchmarks.servicedesk.world import (
    DeskWorld,
    Record,
    Table,
    Tables,
    copy_json,
    load_tables,
    read_table,
)

__all__ = [
    "CHANGE",
    "FORBIDDEN",
    "INFO",
    "MAX_REPEATS",
    "RESPOND",
    "STOP",
    "TAU_ENDINGS",
    "TRANSFER",
    "TRANSFER_TOOL",
    "Action",
    "Answer",
    "Customer",
    "Desk",
    "DeskScorer",
    "DeskTask",
    "DeskWorld",
    "Domain",
    "FailedGoldAction",
    "Identity",
    "IdleAgent",
    "LLMUser",
    "OracleAgent",
    "PolicyCheck",
    "Procedure",
    "Record",
    "ScriptedUser",
    "ServiceDeskBenchmark",
    "Table",
    "Tables",
    "TaskCheck",
    "TauToolBox",
    "UserInstructions",
    "Want",
    "action_done",
    "agent_replies",
    "calculate",
    "check_task",
    "conversation",
    "copy_json",
    "load_tables",
    "procedure_spec",
    "read_table",
    "replay",
    "replay_transcript",
    "replay_turns",
    "run_baseline",
    "taubench_named",
    "think",
    "transfer_to_human_agents",
    "user_prompt",
]
