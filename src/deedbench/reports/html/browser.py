"""The transcript browser: the frame report.js fills in, and the episodes it reads, embedded
as JSON with each repeated text stored once."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from deedbench.audit import AuditResult
from deedbench.records import EpisodeRecord, MetricSpec, ReportSpec, Score
from deedbench.reports.html.markup import tag
from deedbench.reports.summary import RunSummary, cluster_of

__all__ = ["browser_data", "browser_frame", "episode_data", "episode_filters"]


def browser_frame() -> str:
    """The frame report.js fills in: filters, the count, the list, one episode."""
    badge = tag("span", "★ deciding call", class_="badge deciding-badge")
    keys = tag("kbd", "j") + " / " + tag("kbd", "k")
    intro = (
        "Filter the episodes or search their transcripts, or click any rate above to see "
        "exactly the episodes it counts (a flip rate shows its base and variant pairs side by "
        f"side). Click an episode to read it; {keys} (or ↓ / ↑ on the list) open the next and "
        f"the previous one, and each has its own link. The call a score rests on is marked "
        f"{badge}."
    )
    return tag(
        "section",
        tag("h2", "Episodes")
        + tag("p", intro, class_="note")
        + tag(
            "div",
            tag("form", "", id="filters", class_="filters", autocomplete="off")
            + tag("p", "", id="match-summary", class_="count"),
            class_="browser-bar",
        )
        + tag(
            "div",
            tag("div", "", id="episode-list", class_="episode-list")
            + tag(
                "div",
                tag("p", "No episode open.", class_="note"),
                id="episode-detail",
                class_="episode-detail",
            ),
            class_="browser",
        ),
        id="episodes",
    )


def browser_data(
    summaries: list[RunSummary],
    records: Mapping[str, Sequence[EpisodeRecord]],
    audits: Mapping[str, Sequence[AuditResult]] | None = None,
) -> dict[str, Any]:
    """What the script needs: the runs, their episodes in a stable order, texts stored once.

    Each episode's group values and the rates it counts in are computed here as the
    summary computes them, so a filter selects exactly the episodes behind a rate; so
    are the base episode each variant's choice is compared with (`pair`, for the flip
    rates) and the audits that flagged it (`audit`, with the words in `flags`).
    Message texts (system prompts, search results) repeat across episodes; each is
    stored once and referred to by index.
    """
    texts: dict[str, int] = {}

    def text(value: str | None) -> int | None:
        return None if value is None else texts.setdefault(value, len(texts))

    runs: list[dict[str, Any]] = []
    episodes: list[dict[str, Any]] = []
    for index, summary in enumerate(summaries):
        config = summary.run
        spec = config.report
        runs.append(
            {
                "id": config.run_id,
                "agent": config.agent,
                "benchmark": config.benchmark,
                "group_by": spec.group_by,
                "metrics": [{"name": m.name, "given": m.given} for m in spec.metrics],
                "flip_base": spec.flip_base if spec.flip_by else None,
            }
        )
        mine = list(
            _ordered(
                config.sample_ids,
                config.conditions,
                [r.redacted() for r in records.get(config.run_id, [])],
            )
        )
        first = len(episodes)
        episodes += [_episode(index, r, spec.group_by, spec.metrics, text) for r in mine]
        _pair(mine, spec, episodes, first)
        _audited(mine, (audits or {}).get(config.run_id, []), episodes, first)
    return {"runs": runs, "episodes": episodes, "texts": list(texts)}


def _pair(
    records: Sequence[EpisodeRecord],
    spec: ReportSpec,
    episodes: list[dict[str, Any]],
    first: int,
) -> None:
    """Marks each variant episode with the base episode its flip rate compares it with:
    the same condition, cluster and epoch, both scored with a choice (as the summary's
    flips pair them)."""
    if spec.flip_by is None or spec.cluster_by is None:
        return
    cluster = cluster_of(spec)
    chosen: dict[tuple[str, str, str, int], int] = {}
    for i, r in enumerate(records, start=first):
        if r.status == "scored" and r.score is not None and r.score.choice is not None:
            variant = str(r.metadata.get(spec.flip_by, "?"))
            chosen[(r.condition, variant, cluster(r), r.epoch)] = i
    for (condition, variant, key, epoch), i in chosen.items():
        base = chosen.get((condition, spec.flip_base, key, epoch))
        if variant != spec.flip_base and base is not None:
            episodes[i]["pair"] = {"variant": variant, "base": base}


def _audited(
    records: Sequence[EpisodeRecord],
    audits: Sequence[AuditResult],
    episodes: list[dict[str, Any]],
    first: int,
) -> None:
    """Marks each audited episode with the audit rates that count it (`flagged:JUDGE`, the
    scanner found words; `aware:JUDGE`, the judge called it aware; JUDGE empty for the
    scanner alone) and the words the scanner flagged, by message."""
    at = {(r.sample_id, r.condition, r.epoch): i for i, r in enumerate(records, start=first)}
    for result in audits:
        i = at.get((result.sample_id, result.condition, result.epoch))
        if i is None:
            continue
        judge = result.judge_spec or ""
        marks = episodes[i].setdefault("audit", [])
        if result.flagged:
            marks.append(f"flagged:{judge}")
        if result.verdict is not None and result.verdict.verdict == "aware":
            marks.append(f"aware:{judge}")
        flags = episodes[i].setdefault("flags", [])
        for hit in result.hits:
            flag = {
                "message_index": hit.message_index,
                "part": hit.part,
                "category": hit.category,
                "match": hit.match,
            }
            if flag not in flags:
                flags.append(flag)


def episode_data(record: EpisodeRecord, spec: ReportSpec) -> dict[str, Any]:
    """One episode as the transcript browser reads it (`episode`), with the texts its
    messages refer to by index (`texts`): what `deedbench view` sends for an episode."""
    texts: dict[str, int] = {}

    def text(value: str | None) -> int | None:
        return None if value is None else texts.setdefault(value, len(texts))

    episode = _episode(0, record.redacted(), spec.group_by, spec.metrics, text)
    return {"episode": episode, "texts": list(texts)}


def episode_filters(
    record: EpisodeRecord, group_by: Sequence[str], metrics: Sequence[MetricSpec]
) -> dict[str, Any]:
    """What the transcript browser's filters read of an episode: its outcome and choice,
    its groups, and the metrics whose rates count it (`deedbench view` lists episodes by
    these without building the rest)."""
    score = record.score
    counted = []
    if record.status == "scored" and score is not None:
        counted = [m.name for m in metrics if m.counts(score.values)]
    return {
        "outcome": score.outcome if score else None,
        "choice": score.choice if score else None,
        "groups": {key: str(record.metadata.get(key, "?")) for key in group_by},
        "counted": counted,
    }


_EXACT = 2**53 - 1  # Number.MAX_SAFE_INTEGER


def _exact(value: Any) -> Any:
    """`value` with integers beyond JavaScript's exact range (2^53) as strings."""
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_exact(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _EXACT:
        return str(value)
    return value


def _ordered(
    samples: Sequence[str], conditions: Sequence[str], records: Sequence[EpisodeRecord]
) -> Iterator[EpisodeRecord]:
    """By condition, then sample in the run's order, then epoch."""
    sample_rank = {s: i for i, s in enumerate(samples)}
    condition_rank = {c: i for i, c in enumerate(conditions)}
    yield from sorted(
        records,
        key=lambda r: (
            condition_rank.get(r.condition, len(condition_rank)),
            sample_rank.get(r.sample_id, len(sample_rank)),
            r.sample_id,
            r.epoch,
        ),
    )


def _faults(score: Score | None) -> list[str]:
    """What the fault filter matches an episode by: whose failure it was (``party:user``)
    and each kind of fault found (``fault:task.gold_raises``)."""
    found = score.attribution if score is not None else None
    if found is None:
        return []
    party = [f"party:{found.party}"] if found.party else []
    return party + [f"fault:{kind}" for kind in sorted({f.kind for f in found.faults})]


def _episode(
    run: int,
    record: EpisodeRecord,
    group_by: Sequence[str],
    metrics: Sequence[MetricSpec],
    text: Callable[[str | None], int | None],
) -> dict[str, Any]:
    score = record.score
    filters = episode_filters(record, group_by, metrics)
    return {
        "run": run,
        "sample": record.sample_id,
        "condition": record.condition,
        "epoch": record.epoch,
        "seed": str(record.seed),  # 63 bits: a JavaScript number would round it
        "status": record.status,
        "termination": record.termination,
        "steps": record.steps,
        "duration": round(record.duration_s, 3),
        "outcome": filters["outcome"],
        "choice": filters["choice"],
        "values": score.values if score else {},
        "evidence": score.evidence if score else [],
        "faults": _faults(score),
        "fault_notes": [
            f"{f.kind}: {f.excerpt}"
            for f in (score.attribution.faults if score and score.attribution else [])
        ],
        "chance": record.chance,
        "error": record.error,
        "groups": filters["groups"],
        "counted": filters["counted"],
        "metadata": _exact(record.metadata),
        "usage": record.usage,
        "messages": [
            {
                "role": m.role,
                "content": text(m.content),
                "reasoning": text(m.reasoning),
                "calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments, "run": run}
                    for calls, run in ((m.tool_calls, True), (m.dropped_tool_calls, False))
                    for c in calls
                ],
                "call_id": m.tool_call_id,
                "tool": m.tool_name,
                "error": m.error,
            }
            for m in record.messages
        ],
    }
