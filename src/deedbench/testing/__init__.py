"""Test aids: fake model endpoints on 127.0.0.1 for offline tests of model agents."""

from deedbench.testing.fake_server import FakeModelServer, Reply
from deedbench.testing.players import by_model, tac_player, tau2_agent, tau2_judge, tau2_user

__all__ = [
    "FakeModelServer",
    "Reply",
    "by_model",
    "tac_player",
    "tau2_agent",
    "tau2_judge",
    "tau2_user",
]
