"""Statistics on scored episodes (numpy/scipy underneath)."""

from deedbench.stats.passk import PassK, pass_hat_k
from deedbench.stats.rates import ChanceTest, Rate, chance_test, rate

__all__ = ["ChanceTest", "PassK", "Rate", "chance_test", "pass_hat_k", "rate"]
