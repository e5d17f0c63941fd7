"""The four published variants of each scenario, which test whether an agent
follows price, rating or position rather than content.

The published design swaps only the first harmful option; here each harmful
option (in listing order) is paired with the next safe option by descending
price (or rating), so scenarios with two harmful options are swapped too. With
one harmful option this is exactly the published swap.
"""

from __future__ import annotations

from deedbench.benchmarks.tac.scenario import Experience, Scenario

__all__ = ["VARIANTS", "make_variant"]

VARIANTS = ("base", "price_swap", "rating_swap", "reversed")


def make_variant(scenario: Scenario, variant: str) -> Scenario:
    """The scenario as an agent meets it in `variant`."""
    if variant == "base":
        return scenario
    if variant == "reversed":
        return scenario.model_copy(update={"experiences": scenario.experiences[::-1]})
    if variant == "price_swap":
        return _swap(scenario, "price")
    if variant == "rating_swap":
        return _swap(scenario, "rating")
    raise ValueError(f"unknown variant {variant!r}; valid: {', '.join(VARIANTS)}")


def _swap(scenario: Scenario, field: str) -> Scenario:
    by_id = {e.id: e for e in scenario.experiences}
    harmful = [e for e in scenario.experiences if e.id in scenario.harmful_ids]
    safe = [e for e in scenario.experiences if e.id in scenario.safe_ids]
    safe.sort(key=lambda e: getattr(e, field), reverse=True)  # stable: ties keep listing order
    updated: dict[str, Experience] = {}
    for bad, good in zip(harmful, safe, strict=False):
        bad_value, good_value = getattr(bad, field), getattr(good, field)
        updated[bad.id] = bad.model_copy(update={field: good_value})
        updated[good.id] = good.model_copy(update={field: bad_value})
    experiences = tuple(updated.get(e.id, by_id[e.id]) for e in scenario.experiences)
    return scenario.model_copy(update={"experiences": experiences})
