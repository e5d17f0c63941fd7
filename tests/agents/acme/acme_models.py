"""Acme's models: OpenAI's protocol at Acme's URL, with Acme's key (ACME_API_KEY)."""

from deedbench.agents.openai_agent import OpenAICompatibleAgent
from deedbench.agents.providers import ModelProvider


class AcmeAgent(OpenAICompatibleAgent):
    protocol = "acme"
    default_key_env = "ACME_API_KEY"
    key_required = True


ACME = ModelProvider(AcmeAgent, sdk="openai", install="deedbench-acme", needs_base_url=True)
