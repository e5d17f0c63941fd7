"""A τ² result file's figures as τ²'s ``get_metrics`` computes them, to the last bit:
τ²'s validator (``validate_submission_metrics``) compares a submission's figures with its
own by equality, so τ²'s order of summation counts too."""

from __future__ import annotations

from pydantic import BaseModel

from deedbench.benchmarks.tau2.results import Tau2Results, task_num_actions
from deedbench.stats import tau2_pass_hat_k

__all__ = ["DomainFigures", "tau2_figures"]


class DomainFigures(BaseModel):
    """τ²'s ``DomainResults``: pass^1 to pass^4 in percent, the mean agent cost in USD
    (None: unknown), the retrieval variant (banking_knowledge only)."""

    pass_1: float | None = None
    pass_2: float | None = None
    pass_3: float | None = None
    pass_4: float | None = None
    cost: float | None = None
    retrieval_config: str | None = None


def tau2_figures(results: Tau2Results) -> DomainFigures:
    """One result file's figures as τ²'s ``get_metrics`` gives them, to the last bit:
    pass^k as `stats.tau2_pass_hat_k` computes it (infrastructure errors left out, a
    success within 1e-6 of 1, τ²'s order of summation), and the cost as pandas' mean of
    ``agent_cost`` over the simulations in the file's order, unknown ones left out (None
    when all are).
    """
    import numpy as np

    banking = results.info.domain == "banking_knowledge"
    retrieval = (results.info.retrieval_config or None) if banking else None
    sims = [s for s in results.simulations if s.termination_reason != "infrastructure_error"]
    if not sims:  # τ²'s metrics of nothing: no pass^k, a cost of 0
        return DomainFigures(cost=0.0, retrieval_config=retrieval)
    outcomes: dict[str, list[bool]] = {}
    for sim in sims:
        reward = float((sim.reward_info or {})["reward"])
        outcomes.setdefault(sim.task_id, []).append(1 - 1e-6 <= reward <= 1 + 1e-6)
    actions = {str(task.get("id")): task_num_actions(task) for task in results.tasks}
    rates = tau2_pass_hat_k(outcomes, results.info.num_trials, actions)
    passes = {k: value * 100 for k, value in rates.items()}
    costs = [s.agent_cost for s in sims]
    known = sum(c is not None for c in costs)
    cost = None
    if known:
        total = np.array([c if c is not None else 0.0 for c in costs], dtype=np.float64).sum()
        cost = float(total / known)
    return DomainFigures(
        pass_1=passes.get(1),
        pass_2=passes.get(2),
        pass_3=passes.get(3),
        pass_4=passes.get(4),
        cost=cost,
        retrieval_config=retrieval,
    )
