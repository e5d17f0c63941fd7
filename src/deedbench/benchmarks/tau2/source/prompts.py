"""The prompts τ² gives its models, read from its source; and deedbench's own stand-ins.

τ²'s agent reads an instruction and the policy (``agent/llm_agent.py``:
``AGENT_INSTRUCTION`` in ``SYSTEM_PROMPT``; the solo agent's ``AGENT_SOLO_INSTRUCTION``
in ``SYSTEM_PROMPT_SOLO``, with its stop tool ``done``), the conversation opens with
a fixed greeting (``orchestrator/orchestrator.py``), and the NL judge is asked with
a system and a user prompt (``evaluator/evaluator_nl_assertions.py``). `read_prompts`
takes each from the parsed source, as text, never running it. `OWN_PROMPTS` is
deedbench's own wording of the same, used where no τ² source is found, and said so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from deedbench.benchmarks.tau2.source.annotations import TypeMaker
from deedbench.benchmarks.tau2.source.toolkits import tool_spec
from deedbench.benchmarks.tau2.source.tree import ParsedModule, SourceTree, literal

__all__ = ["JUDGE_FIELDS", "OWN_PROMPTS", "Tau2Prompts", "read_prompts"]

JUDGE_FIELDS = ("trajectory_str", "nl_assertions")
"""The values τ²'s judge prompt is filled with: the trajectory as text, the assertions."""


@dataclass(frozen=True)
class Tau2Prompts:
    """Every prompt text a τ² episode shows a model, besides the policy, the tasks and
    the user simulator's guidelines (which are data files)."""

    agent_instruction: str
    system_prompt: str
    """A ``str.format`` template with ``agent_instruction`` and ``domain_policy``."""
    solo_instruction: str
    """A template with ``stop_function_name`` and ``stop_token``."""
    solo_system_prompt: str
    """A template with ``agent_instruction``, ``domain_policy`` and ``ticket``."""
    stop_function: str
    stop_token: str
    done_spec: dict[str, Any] | None
    """The solo agent's stop tool as the model is shown it (None: deedbench's own tool's)."""
    greeting: str
    judge_system: str
    judge_user: str
    """A template with the `JUDGE_FIELDS`."""

    def agent_system_prompt(self, policy: str, ticket: str | None = None) -> str:
        """τ²'s agent system prompt; with a ticket, its solo agent's."""
        if ticket is None:
            return self.system_prompt.format(
                agent_instruction=self.agent_instruction, domain_policy=policy
            )
        instruction = self.solo_instruction.format(
            stop_function_name=self.stop_function, stop_token=self.stop_token
        )
        return self.solo_system_prompt.format(
            agent_instruction=instruction, domain_policy=policy, ticket=ticket
        )

    def judge_prompt(self, trajectory: str, assertions: list[str]) -> tuple[str, str]:
        """The judge's system and user prompts for one trajectory."""
        user = self.judge_user.format(trajectory_str=trajectory, nl_assertions=assertions)
        return self.judge_system, user


_SYSTEM = (
    "<instructions>\n{agent_instruction}\n</instructions>\n<policy>\n{domain_policy}\n</policy>"
)

OWN_PROMPTS = Tau2Prompts(
    agent_instruction=(
        "You work at a customer service desk and help the user as the <policy> below "
        "says.\nEach turn, do exactly one thing:\n- write a message to the user, or\n"
        "- call a tool.\nA single turn never holds both.\n\nBe helpful and keep to the "
        "policy. Any JSON you write must be valid."
    ),
    system_prompt=_SYSTEM,
    solo_instruction=(
        "You work at a customer service desk and follow the <policy> below.\nThe <ticket> "
        "says what the user needs; there is nobody to talk to, so work through it with "
        "tool calls only.\n\nWhen the ticket is dealt with, finish by calling the "
        "`{stop_function_name}` tool, alone in its message.\n\nKeep to the policy. Any "
        "JSON you write must be valid."
    ),
    solo_system_prompt=_SYSTEM + "\n<ticket>\n{ticket}\n</ticket>",
    stop_function="done",
    stop_token="###STOP###",
    done_spec=None,
    greeting="Hello, this is the help desk. What can I do for you?",
    judge_system=(
        "You judge a recorded customer service conversation between an agent and a "
        "customer against a list of expected outcomes. Judge each outcome on its own: did "
        "the agent bring it about?\n\nAnswer with JSON only, an object with one key, "
        '"results": a list with one entry per outcome, each an object with the keys '
        '"expectedOutcome" (the outcome, copied), "reasoning" (one or two sentences) '
        'and "metExpectation" (true or false).'
    ),
    judge_user="Conversation:\n{trajectory_str}\n\nExpected outcomes:\n{nl_assertions}\n",
)
"""deedbench's own wording, used when no τ² source is found (the run says so)."""


def _constant(module: ParsedModule, name: str) -> str:
    node = module.values.get(name)
    if node is None:
        raise module.error(None, f"no {name} (τ²'s source is another version?)")
    value = literal(module, node)
    if not isinstance(value, str):
        raise module.error(node, f"{name} is no text")
    return value


def _class_constant(module: ParsedModule, cls: str, name: str) -> str:
    node = module.classes.get(cls)
    if node is None:
        raise module.error(None, f"no class {cls}")
    for statement in node.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and target.id == name:
                value = literal(module, statement.value)
                if isinstance(value, str):
                    return value
    raise module.error(node, f"no text {cls}.{name}")


def _method(module: ParsedModule, cls: str, name: str) -> ast.FunctionDef:
    node = module.classes.get(cls)
    for statement in node.body if node is not None else []:
        if isinstance(statement, ast.FunctionDef) and statement.name == name:
            return statement
    raise module.error(node, f"no method {cls}.{name}")


def _nested(module: ParsedModule, function: ast.FunctionDef, name: str) -> ast.FunctionDef:
    for statement in ast.walk(function):
        if isinstance(statement, ast.FunctionDef) and statement.name == name:
            return statement
    raise module.error(function, f"no function {name} in {function.name}")


def _local(module: ParsedModule, function: ast.FunctionDef, name: str) -> ast.expr:
    for statement in ast.walk(function):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and target.id == name:
                return statement.value
    raise module.error(function, f"no {name} in {function.name}")


def _template(module: ParsedModule, node: ast.expr) -> str:
    """An f-string as a ``str.format`` template (its holes: names of `JUDGE_FIELDS`)."""
    if not isinstance(node, ast.JoinedStr):
        text = literal(module, node)
        if not isinstance(text, str):
            raise module.error(node, "expected a text")
        return text.replace("{", "{{").replace("}", "}}")
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value.replace("{", "{{").replace("}", "}}"))
        elif (
            isinstance(value, ast.FormattedValue)
            and isinstance(value.value, ast.Name)
            and value.value.id in JUDGE_FIELDS
            and value.conversion == -1
            and value.format_spec is None
        ):
            parts.append("{" + value.value.id + "}")
        else:
            raise module.error(node, "a prompt template deedbench does not read")
    return "".join(parts)


def _greeting(module: ParsedModule) -> str:
    node = module.values.get("DEFAULT_FIRST_AGENT_MESSAGE")
    if isinstance(node, ast.Call):
        for keyword in node.keywords:
            if keyword.arg == "content":
                text = literal(module, keyword.value)
                if isinstance(text, str):
                    return text
    raise module.error(node, "no DEFAULT_FIRST_AGENT_MESSAGE with a text content")


def read_prompts(tree: SourceTree, types: TypeMaker) -> Tau2Prompts:
    """τ²'s prompts from its source."""
    agent = tree.module("tau2.agent.llm_agent")
    judge = tree.module("tau2.evaluator.evaluator_nl_assertions")
    evaluate = _method(judge, "NLAssertionsEvaluator", "evaluate_nl_assertions")
    done = _nested(agent, _method(agent, "LLMSoloAgent", "add_stop_tool"), "done")
    return Tau2Prompts(
        agent_instruction=_constant(agent, "AGENT_INSTRUCTION"),
        system_prompt=_constant(agent, "SYSTEM_PROMPT"),
        solo_instruction=_constant(agent, "AGENT_SOLO_INSTRUCTION"),
        solo_system_prompt=_constant(agent, "SYSTEM_PROMPT_SOLO"),
        stop_function=_class_constant(agent, "LLMSoloAgent", "STOP_FUNCTION_NAME"),
        stop_token=_class_constant(agent, "LLMSoloAgent", "STOP_TOKEN"),
        done_spec=tool_spec(types, agent, done, skip_first=False),
        greeting=_greeting(tree.module("tau2.orchestrator.orchestrator")),
        judge_system=_template(judge, _local(judge, evaluate, "system_prompt")).format(),
        judge_user=_template(judge, _local(judge, evaluate, "user_prompt")),
    )
