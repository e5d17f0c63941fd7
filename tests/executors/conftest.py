"""One Ray cluster for every Ray test: two nodes on 127.0.0.1 (Ray's own
`ray.cluster_utils.Cluster`), one CPU each, started once (it takes seconds) and shut
down after the last test; skipped where Ray is not installed. Each test's pool connects
to it through $RAY_ADDRESS, as `deedbench run --executor ray` would."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False},
    )
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("RAY_ADDRESS", cluster.address)
            yield cluster
    finally:
        cluster.shutdown()
