"""Test aids: fake model endpoints on 127.0.0.1 for offline tests of model agents."""

from deedbench.testing.fake_server import FakeModelServer, Reply
from deedbench.testing.players import tac_player

__all__ = ["FakeModelServer", "Reply", "tac_player"]
