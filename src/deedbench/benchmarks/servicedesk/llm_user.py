"""A model playing the customer (``-T user=llm:SPEC``), with deedbench's own prompt.

The model sees the conversation from the customer's side (`conversation`): the
agent's replies as the other party, its own past lines as its turns, and no tool
calls. It ends the conversation by writing the stop token, and only so, as in
τ-bench; that last message is kept (its call was paid for) and `finished` tells
the engine to end there. Its calls go through the same cache,
retries and cost accounting as the agent's, recorded under the "user" role.
Whom it writes to and how it identifies itself come from the domain
(`Customer.desk`, `Identity.gives`); each domain versions its prompt
(`Customer.prompt_version`).
"""

from __future__ import annotations

from collections.abc import Sequence

from deedbench.benchmarks.servicedesk.domain import Domain
from deedbench.benchmarks.servicedesk.task import UserInstructions
from deedbench.benchmarks.servicedesk.tau_toolbox import conversation
from deedbench.engine import Agent, AgentContext
from deedbench.records import Message
from deedbench.records.messages import Role

__all__ = ["STOP", "LLMUser", "user_prompt"]

STOP = "###STOP###"


def user_prompt(ins: UserInstructions, domain: Domain) -> str:
    wants = "\n".join(f"- {w.say}" for w in ins.wants)
    refuses = "\n".join(f"- {r}" for r in ins.refuses) or "- nothing in particular"
    identity = domain.identity(ins).instruction(ins)
    persona = domain.talk.persona
    who = "" if persona is None else f"Who you are: {persona.format_map(ins.identity)}. "
    if ins.free_text:  # a task written for an LLM user keeps its own words
        wants = ins.free_text
        refuses = "- whatever the instructions above rule out"
    return (
        f"You are a customer writing to {domain.talk.desk}. Play this person; "
        "you are not an assistant.\n\n"
        f"{who}When asked to identify yourself, give {identity}. Do not volunteer it "
        "before you are asked.\n\n"
        f"What you want, in this order:\n{wants}\n\n"
        f"What you refuse:\n{refuses}\n\n"
        "How to behave: write one short message at a time, the way people type to a help "
        "desk. Say only what you know from the lines above; if asked for something you do not "
        "know, say you don't know. Agree to a proposed change only if it is exactly what you "
        "want; otherwise say no and explain. Do not make up ids, addresses or numbers. "
        f"When everything you want is done, or cannot be done, write {STOP} on its own to end "
        "the conversation."
    )


class LLMUser:
    """Adapts an agent (any model agent) into the engine's User protocol."""

    def __init__(
        self, model: Agent, instructions: UserInstructions, domain: Domain, context: AgentContext
    ) -> None:
        self.model = model
        self.instructions = instructions
        self.prompt = user_prompt(instructions, domain)
        self.context = context
        self.finished = False

    async def reply(self, messages: Sequence[Message]) -> Message | None:
        flipped = [Message(role="system", content=self.prompt)]
        for message in conversation(messages):
            role: Role = "user" if message.role == "assistant" else "assistant"
            flipped.append(Message(role=role, content=message.content))
        if len(flipped) == 1:
            flipped.append(Message(role="user", content="Hello, how can I help you today?"))
        turn = await self.model.next_turn(flipped, [], self.context)
        text = turn.content.strip()
        self.finished = STOP in text  # as in τ-bench, an empty reply does not end it
        return Message(role="user", content=text, usage=turn.usage)
