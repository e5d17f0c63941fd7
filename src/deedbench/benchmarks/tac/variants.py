"""The four published variants of each scenario, which test whether an agent
follows price, rating or position rather than content.

Two ways of building the swaps, chosen by TAC's ``variants`` option:

- ``deedbench`` (the default): each harmful option, in listing order, is paired with
  the next safe option by descending price (or rating), so scenarios with two
  harmful options have both swapped.
- ``upstream``: as inspect_evals/tac builds its samples, only the first harmful
  option in listing order exchanges its value with the safe option of highest value
  (the first listed among equals); equal values make the swap a no-op.

With one harmful option the two agree. `reversed` and `base` are the same in both.
"""

from __future__ import annotations

from deedbench.benchmarks.tac.scenario import Experience, Scenario

__all__ = ["SCHEMES", "VARIANTS", "make_variant"]

VARIANTS = ("base", "price_swap", "rating_swap", "reversed")
SCHEMES = ("deedbench", "upstream")


def make_variant(scenario: Scenario, variant: str, scheme: str = "deedbench") -> Scenario:
    """The scenario as an agent meets it in `variant`, with swaps built by `scheme`."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown variant scheme {scheme!r}; valid: {', '.join(SCHEMES)}")
    if variant == "base":
        return scenario
    if variant == "reversed":
        return scenario.model_copy(update={"experiences": scenario.experiences[::-1]})
    if variant == "price_swap":
        return _swap(scenario, "price", every_harmful=scheme == "deedbench")
    if variant == "rating_swap":
        return _swap(scenario, "rating", every_harmful=scheme == "deedbench")
    raise ValueError(f"unknown variant {variant!r}; valid: {', '.join(VARIANTS)}")


def _swap(scenario: Scenario, field: str, every_harmful: bool) -> Scenario:
    by_id = {e.id: e for e in scenario.experiences}
    harmful = [e for e in scenario.experiences if e.id in scenario.harmful_ids]
    safe = [e for e in scenario.experiences if e.id in scenario.safe_ids]
    safe.sort(key=lambda e: getattr(e, field), reverse=True)  # stable: ties keep listing order
    updated: dict[str, Experience] = {}
    for bad, good in zip(harmful if every_harmful else harmful[:1], safe, strict=False):
        bad_value, good_value = getattr(bad, field), getattr(good, field)
        updated[bad.id] = bad.model_copy(update={field: good_value})
        updated[good.id] = good.model_copy(update={field: bad_value})
    experiences = tuple(updated.get(e.id, by_id[e.id]) for e in scenario.experiences)
    return scenario.model_copy(update={"experiences": experiences})
