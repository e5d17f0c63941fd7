"""Statistics on scored episodes (numpy/scipy underneath)."""

from deedbench.stats.rates import ChanceTest, Rate, chance_test, rate

__all__ = ["ChanceTest", "Rate", "chance_test", "rate"]
