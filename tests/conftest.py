"""Shared test settings: property tests are derandomized so CI runs are repeatable."""

from hypothesis import settings

settings.register_profile("deedbench", derandomize=True, deadline=None)
settings.load_profile("deedbench")
