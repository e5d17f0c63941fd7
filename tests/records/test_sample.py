"""Episode seeds: fixed by run seed and key, different for every episode, 63 bits."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from deedbench.records import EpisodeKey, episode_seed

KEY = EpisodeKey("seville_bullfight_original", "explicit", 1)


def test_same_inputs_give_the_same_seed() -> None:
    assert episode_seed(0, KEY) == episode_seed(0, EpisodeKey(*KEY))


def test_pinned_values() -> None:
    """Seeds must not drift between versions, or stored runs could not be repeated."""
    assert episode_seed(0, EpisodeKey("s", "c", 1)) == 2489850233410236085
    assert episode_seed(12345, KEY._replace(epoch=3)) == 2818199912349845082


def test_each_part_of_the_key_changes_the_seed() -> None:
    base = episode_seed(0, KEY)
    assert episode_seed(1, KEY) != base
    assert episode_seed(0, KEY._replace(sample_id="seville_bullfight_reversed")) != base
    assert episode_seed(0, KEY._replace(condition="implicit")) != base
    assert episode_seed(0, KEY._replace(epoch=2)) != base


def test_seeds_of_a_run_are_all_distinct() -> None:
    keys = [
        EpisodeKey(f"sample_{i}", condition, epoch)
        for i, condition, epoch in itertools.product(range(50), ("a", "b"), range(1, 4))
    ]
    seeds = {(run_seed, episode_seed(run_seed, key)) for run_seed in (0, 1) for key in keys}
    assert len({seed for _, seed in seeds}) == 2 * len(keys)


@given(
    run_seed=st.integers(min_value=-(2**70), max_value=2**70),
    sample_id=st.text(max_size=30),
    condition=st.text(max_size=10),
    epoch=st.integers(min_value=1, max_value=10_000),
)
def test_seed_fits_in_63_bits(run_seed: int, sample_id: str, condition: str, epoch: int) -> None:
    seed = episode_seed(run_seed, EpisodeKey(sample_id, condition, epoch))
    assert 0 <= seed < 2**63
