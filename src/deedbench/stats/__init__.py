"""Statistics on scored episodes (numpy/scipy underneath, imported by the functions that
compute, so importing this package, or what uses its result types, costs no scipy)."""

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
from deedbench.stats.passk import PassK, pass_hat_k
from deedbench.stats.rates import ChanceTest, Rate, chance_test, rate

# What computing the figures imports: a caller with time to spare (a run waiting on its
# model) imports these early so that the closing summary does not wait for them.
COMPUTE_MODULES = ("numpy", "scipy.special", "scipy.stats")

__all__ = [
    "COMPUTE_MODULES",
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
]
