"""The figures of a group of a run's episodes, computed from the run's columns
(`reports.columns`): a group's rates with both intervals, the test against chance and
whose failures; pass^k; the flips between variants; the covariate's correlation.
`RunTally.summary` (`reports.summary`) calls these for each condition and group."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from deedbench.records import MetricSpec, ReportSpec
from deedbench.reports.columns import (
    Columns,
    first_order,
    last_of_each,
    ordered_sum,
    shared_keys,
    totals,
)
from deedbench.reports.summary import Covariate, CovariateResult, GroupSummary, VariantFlip
from deedbench.stats import PassK, rate, spearman_with_bootstrap
from deedbench.stats.clusters import cluster_chance_of_totals, cluster_rate_of_totals, flip_rate_of
from deedbench.stats.passk import pass_hat_k_of
from deedbench.stats.rates import chance_test_of

if TYPE_CHECKING:  # numpy is imported where figures are computed
    import numpy as np

__all__ = ["all_positions", "covariate_of", "flips_of", "group_of", "group_pass_hat_k"]


def all_positions(columns: Columns) -> np.ndarray:
    import numpy as np

    return np.arange(len(columns.of))


def group_pass_hat_k(mine: np.ndarray, columns: Columns, value: str) -> list[PassK]:
    """pass^k of score value `value` over the condition's episodes that have it (τ²'s
    "needs judge" episodes are no trial, neither a pass nor a failure), per sample in the
    order the samples first appear."""
    import numpy as np

    values, has = columns.value(value)
    counted = columns.counted_kinds(mine)
    kinds = np.flatnonzero(columns.has_score & has & (counted.episodes > 0))
    size = len(columns.samples.ids)
    samples = columns.sample[kinds]
    first = np.full(size, np.iinfo(np.intp).max, dtype=np.intp)
    np.minimum.at(first, samples, counted.first[kinds])
    trials = np.bincount(samples, weights=counted.episodes[kinds], minlength=size)
    passed = np.bincount(
        samples, weights=counted.episodes[kinds] * (values[kinds] == 1.0), minlength=size
    )
    present = np.flatnonzero(trials > 0)
    order = present[np.argsort(first[present], kind="stable")]
    return pass_hat_k_of(
        list(
            zip(passed[order].astype(int).tolist(), trials[order].astype(int).tolist(), strict=True)
        )
    )


def group_of(name: str, positions: np.ndarray, columns: Columns, spec: ReportSpec) -> GroupSummary:
    """The figures of the episodes at these positions (in the order read) of a condition:
    sums over their kinds, and episode by episode only where the order of a sum of
    fractions matters (the test against chance)."""
    import numpy as np

    counted = columns.counted_kinds(positions)
    scored = columns.has_score & (counted.episodes > 0)
    n = counted.episodes.astype(float)
    rates = {}
    clustered = {}
    for metric in spec.metrics:
        chosen = scored & columns.counted(metric)
        values = columns.value(metric.value)[0]
        rates[metric.name] = rate(float((n * values)[chosen].sum()), int(n[chosen].sum()))
        found = columns.by_cluster(counted, chosen, values)
        if found is None:  # fractions: summed one episode after another, in their order
            kinds = columns.of[positions]
            kinds = kinds[chosen[kinds]]
            found = totals(columns.cluster[kinds], values[kinds])
        clustered[metric.name] = cluster_rate_of_totals(*found)
    chance = cluster_chance = None
    if spec.compare_to_chance:  # per kind where a sum's order does not matter
        tried = scored & ~np.isnan(columns.chance)
        successes = np.rint(columns.value(spec.metric(spec.primary).value)[0])
        bad = np.flatnonzero(tried & (successes != 0) & (successes != 1))
        if bad.size:
            raise ValueError(
                f"a trial's success is {successes[bad[0]]!r}; each trial's success must be 0 or 1"
            )
        kinds = columns.of[positions]
        trials = kinds[tried[kinds]]
        observed = int((n * successes)[tried].sum())
        expected = ordered_sum(columns.chance, trials)
        levels: dict[float, int] = {}  # trials per chance level, in the order they came
        for kind in np.flatnonzero(tried)[np.argsort(counted.first[tried], kind="stable")]:
            level = float(columns.chance[kind])
            levels[level] = levels.get(level, 0) + int(counted.episodes[kind])
        chance = chance_test_of(observed, levels, expected)
        differences = successes - np.nan_to_num(columns.chance)
        cluster_chance = cluster_chance_of_totals(
            observed, expected, *totals(columns.cluster[trials], differences[trials])
        )
    outcomes: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    parties: Counter[str] = Counter()
    faults: Counter[str] = Counter()
    for index in np.flatnonzero(scored)[np.argsort(counted.first[scored], kind="stable")]:
        score, times = columns.kinds[index].score, int(counted.episodes[index])
        assert score is not None
        outcomes[score.outcome] += times
        for rule in score.rules:
            rules[rule] += times
        if score.party is not None:
            parties[score.party] += times
        for fault in score.faults:
            faults[fault] += times
    return GroupSummary(
        group=name,
        episodes=len(positions),
        metrics=rates,
        clustered=clustered,
        outcomes=dict(outcomes),
        chance=chance,
        cluster_chance=cluster_chance,
        evidence_rules=dict(sorted(rules.items())),
        failures=dict(parties.most_common()),
        fault_kinds=dict(faults.most_common()),
    )


def flips_of(mine: np.ndarray, columns: Columns, spec: ReportSpec) -> list[VariantFlip]:
    """Per variant, the choices compared with the base variant's on the same (cluster, epoch)."""
    import numpy as np

    if spec.flip_by is None or spec.cluster_by is None:
        return []
    kinds = columns.of[mine]
    keep = columns.has_score[kinds] & (columns.choice[kinds] >= 0)
    kinds, epochs = kinds[keep], columns.epochs[mine][keep]
    stride = columns.largest_epoch + 1
    keys = columns.cluster[kinds].astype(np.int64) * stride + epochs
    if keys.size and int(keys.max()) < 2**31 - 1:
        keys = keys.astype(np.int32)
    names = [name or "?" for name in columns.variants.names()]  # None and "" read as "?"
    codes = {name: [i for i, n in enumerate(names) if n == name] for name in names}
    variant = columns.variant[kinds]
    choice = columns.choice[kinds]
    choices = {}
    for code in first_order(variant)[0].tolist():
        name = names[code]
        if name not in choices:
            mine = np.isin(variant, codes[name])
            choices[name] = last_of_each(keys[mine], choice[mine])
    base = choices.get(spec.flip_base)
    if base is None or not len(base[0]):
        return []
    base_keys, base_choices = base
    result = []
    for name in sorted(v for v in choices if v != spec.flip_base):
        their_keys, their_choices = choices[name]
        where, found = shared_keys(base_keys, their_keys)
        flipped = (base_choices[found] != their_choices[where[found]]).astype(float)
        result.append(
            VariantFlip(
                variant=name,
                flips=flip_rate_of(
                    int(flipped.sum()), int(found.sum()), len(base_keys), len(their_keys)
                ),
                clustered=cluster_rate_of_totals(*totals(base_keys[found] // stride, flipped)),
            )
        )
    return result


def covariate_of(
    mine: np.ndarray, columns: Columns, primary: MetricSpec, covariate: Covariate | None
) -> CovariateResult | None:
    if covariate is None:
        return None
    kinds = columns.of[mine]
    kinds = kinds[columns.counted(primary)[kinds]]
    found, _ = first_order(columns.cluster[kinds])
    sums, counts = totals(columns.cluster[kinds], columns.value(primary.value)[0][kinds])
    names = columns.clusters.names()
    per_cluster = {
        names[int(code)]: (float(total), int(n))
        for code, total, n in zip(found.tolist(), sums.tolist(), counts.tolist(), strict=True)
    }
    matched = sorted(c for c in per_cluster if c in covariate.values)
    return CovariateResult(
        name=covariate.name,
        metric=primary.name,
        correlation=spearman_with_bootstrap(
            [per_cluster[c][0] / per_cluster[c][1] for c in matched],
            [covariate.values[c] for c in matched],
        ),
        unmatched=sorted(set(per_cluster) - set(matched)),
    )
