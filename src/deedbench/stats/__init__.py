"""Statistics on scored episodes: numpy underneath, imported by the functions that compute,
so importing this package, or what uses its result types, costs nothing. A summary needs
no scipy (exact.py says why); only Spearman's correlation, for a covariate, imports it."""

from deedbench.stats.clusters import (
    ClusterChanceTest,
    ClusterRate,
    FlipRate,
    cluster_bootstrap_rate,
    cluster_chance_test,
    flip_rates,
)
from deedbench.stats.correlation import Correlation, read_covariate_csv, spearman_with_bootstrap
from deedbench.stats.paired import (
    McNemar,
    PairedDifference,
    mcnemar_exact,
    paired_bootstrap_difference,
)
from deedbench.stats.passk import PassK, pass_hat_k, tau2_pass_hat_k
from deedbench.stats.rates import ChanceTest, Rate, chance_test, rate

__all__ = [
    "ChanceTest",
    "ClusterChanceTest",
    "ClusterRate",
    "Correlation",
    "FlipRate",
    "McNemar",
    "PairedDifference",
    "PassK",
    "Rate",
    "chance_test",
    "cluster_bootstrap_rate",
    "cluster_chance_test",
    "flip_rates",
    "mcnemar_exact",
    "paired_bootstrap_difference",
    "pass_hat_k",
    "rate",
    "read_covariate_csv",
    "spearman_with_bootstrap",
    "tau2_pass_hat_k",
]
