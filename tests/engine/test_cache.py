"""The response cache as a process's agents see it: shipped answers held while their
episode runs, new answers passed on at once, and a lookup by key where the store is near."""

from __future__ import annotations

import json

from deedbench.engine import AgentContext, EpisodeCache
from deedbench.engine.cache import CacheEntry

CONTEXT = AgentContext(sample_id="s1", condition="base", epoch=2, seed=77)
SEED = 77


def entry(key: str, answer: str = "shipped") -> CacheEntry:
    return CacheEntry(key, "openai", "gpt-4o", json.dumps({"text": answer}), "s1", 2, SEED)


def test_shipped_answers_are_served_while_their_episode_runs() -> None:
    cache = EpisodeCache(lambda entry: None)
    cache.hold(SEED, [entry("a"), entry("b", "other")])
    assert cache.get("a") == {"text": "shipped"}
    assert cache.get("b") == {"text": "other"}
    assert cache.get("c") is None
    cache.release(SEED)
    assert cache.get("a") is None  # memory follows the episodes in flight


def test_an_episode_held_twice_keeps_its_answers_until_both_release() -> None:
    cache = EpisodeCache(lambda entry: None)
    cache.hold(SEED, [entry("a")])
    cache.hold(SEED, [])
    cache.release(SEED)
    assert cache.get("a") == {"text": "shipped"}
    cache.release(SEED)
    assert cache.get("a") is None


def test_a_new_answer_is_sent_at_once_with_its_episode_and_kept_for_it() -> None:
    sent: list[CacheEntry] = []
    cache = EpisodeCache(sent.append)
    cache.hold(SEED, [])
    cache.put("k", "anthropic", "claude", {"content": [1]}, CONTEXT)
    assert sent == [CacheEntry("k", "anthropic", "claude", '{"content": [1]}', "s1", 2, 77)]
    assert cache.get("k") == {"content": [1]}  # a repeated request in the episode is free
    user = AgentContext(sample_id="s1:user", condition="base", epoch=0, seed=SEED)
    cache.put("u", "openai", "customer", {"said": "yes"}, user)  # its user: the same episode
    assert cache.get("u") == {"said": "yes"}
    cache.release(SEED)
    assert cache.get("k") is None and cache.get("u") is None


def test_an_answer_outside_any_held_episode_is_sent_but_not_kept() -> None:
    sent: list[CacheEntry] = []
    cache = EpisodeCache(sent.append)
    cache.put("k", "openai", "gpt-4o", {"x": 1}, CONTEXT)
    assert len(sent) == 1
    assert cache.get("k") is None


def test_the_lookup_finds_what_no_job_shipped() -> None:
    asked: list[str] = []

    def lookup(key: str) -> CacheEntry | None:
        asked.append(key)
        return entry(key, "from the store") if key == "old" else None

    cache = EpisodeCache(lambda entry: None, lookup)
    cache.hold(SEED, [entry("a")])
    assert cache.get("a") == {"text": "shipped"}
    assert cache.get("old") == {"text": "from the store"}
    assert cache.get("missing") is None
    assert asked == ["old", "missing"]  # shipped answers never ask the store
