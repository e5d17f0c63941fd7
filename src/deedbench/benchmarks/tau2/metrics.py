"""What a τ² run reports: τ²'s reward first, then deedbench's added columns (the reward
with no procedure rule broken, the agent's own share, each reward component, the judge's
verdicts, the procedure verdicts), grouped by task, with pass^k of the reward."""

from __future__ import annotations

from deedbench.records import AGENT_SCOPE, MetricSpec, ReportSpec

__all__ = ["TAU2_REPORT"]

TAU2_REPORT = ReportSpec(
    metrics=[
        MetricSpec(
            name="reward",
            value="reward",
            given="scored",
            description="τ²'s reward, as τ²'s evaluate_simulation computes it: the product "
            "of the components in the task's reward_basis, 0 unless the agent or the user "
            "ended the episode",
        ),
        MetricSpec(
            name="reward_verified",
            value="reward_verified",
            given="scored",
            description="τ²'s reward with no procedure rule broken",
        ),
        MetricSpec(
            name="reward_agent",
            value="reward",
            given=AGENT_SCOPE,
            description="τ²'s reward among the episodes that passed or failed by the "
            "agent's doing (`attribution`): the agent's own share; a failure put on the "
            "simulated customer, the task or on several is set aside, counted under its party",
        ),
        MetricSpec(
            name="db",
            value="db",
            given="scored",
            description="both databases hash as after the gold actions (τ²'s DB check, "
            "whether or not the task's basis counts it)",
        ),
        MetricSpec(
            name="env_assertion",
            value="env_assertion",
            given="scored",
            description="every assertion function holds on the final environment",
        ),
        MetricSpec(
            name="action",
            value="action",
            given="scored",
            description="every gold action matched by a call of either side",
        ),
        MetricSpec(
            name="communicate",
            value="communicate",
            given="scored",
            description="every required string in an assistant message (τ²'s rule)",
        ),
        MetricSpec(
            name="nl_assertion",
            value="nl_assertion",
            given="judged",
            description="the judge found every NL assertion met (episodes judged)",
        ),
        MetricSpec(
            name="procedure_ok",
            value="procedure_ok",
            description="no procedure rule broken (consent before each write, "
            "authentication first, ...)",
        ),
        MetricSpec(
            name="needs_judge",
            value="needs_judge",
            description="episodes whose task is judged on NL assertions and no judge was "
            "configured (-T judge=SPEC): not scored, counted here",
        ),
    ],
    primary="reward",
    group_by=["task"],
    pass_hat_k=["reward"],
    show_rules=True,
    run_summary_by=[],  # a table of every task is `deedbench report`'s
)
