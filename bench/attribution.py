"""Who failed: deedbench's attribution measured against labels it did not write.

The labelled set is generated from the references' own code and data
(`bench/attribution_set.py`, rules in `bench/attribution_labels.md`): τ²'s gold trajectories
mutated and run live in τ²'s environment, τ-bench's likewise, each episode labelled by its
mutation's side. Every file is rescored by deedbench as a user would rescore it
(`rescore_results` for τ², `rescore_file` for τ-bench), and the party deedbench gives each
episode is compared with the label. Printed: precision and recall per party (agent, user,
task) with 95% Wilson intervals, per domain and part (``dev``: what the rules were examined
on; ``heldout``: never examined), a confusion table, and how many passing episodes were
given a party. Corruptions no replay can show (`task.undetectable`) are reported apart.

    python bench/attribution.py [--set DIR] [--parts dev heldout] [--domains ...]
        [--misses FILE]      # the episodes whose party differs from the label, as JSON
        [--json FILE]        # every figure printed, as JSON

Default DIR: ~/.cache/deedbench/attribution-set/seed-1 (generate it first). τ-bench's real
gpt-4o airline records are measured too, against `bench/taubench_gpt4o_airline_labels.json`.

Targets (issue 38): precision >= 0.95 for the agent, >= 0.90 for the user and the task;
recall >= 0.85 for each; no party on any passing episode.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.retail import RETAIL
from deedbench.benchmarks.tau2.rescore import rescore_results
from deedbench.benchmarks.tau2.results import read_results
from deedbench.benchmarks.taubench import rescore_file
from deedbench.stats import rate

SHARED = Path(__file__).resolve().parents[2] / "shared"
TAU2_DOMAINS = ("airline", "retail", "telecom", "banking_knowledge")
TAUBENCH_DOMAINS = ("taubench-airline", "taubench-retail")
PARTIES = ("agent", "user", "task")
GPT4O_LABELS = Path(__file__).with_name("taubench_gpt4o_airline_labels.json")
UNDETECTABLE = "task.undetectable"
MIXED = "mixed"
"""A hand label for a record where more than one party failed it: kept out of the figures."""


@dataclass
class Row:
    domain: str
    part: str
    id: str
    kind: str
    label: str | None
    found: str | None
    reward: float | None
    reference_reward: float | None
    faults: list[str]


def default_set(seed: int = 1) -> Path:
    return Path.home() / ".cache" / "deedbench" / "attribution-set" / f"seed-{seed}"


def tau2_rows(folder: Path, domain: str, part: str) -> list[Row]:
    labels = json.loads((folder / f"{domain}-{part}.labels.json").read_text())
    results = read_results(folder / f"{domain}-{part}.json")
    _, rescored = rescore_results(results, SHARED / "tau2" / "data")
    rows = []
    for one in rescored:
        verdict, label = one.verdict, labels[one.verdict.id]
        attribution = verdict.attribution
        rows.append(
            Row(
                domain,
                part,
                verdict.id,
                label["kind"],
                label["party"],
                attribution.party if attribution else None,
                verdict.reward,
                label["reward"],
                [f"{f.kind}: {f.excerpt}" for f in attribution.faults] if attribution else [],
            )
        )
    return rows


def taubench_rows(path: Path, labels: dict[str, Any], domain: str, part: str) -> list[Row]:
    name = "airline" if "airline" in domain else "retail"
    folders = [SHARED / "taubench" / name]
    if path.name == "gpt-4o-airline.json":
        folders = [SHARED / "taubench" / "trajectories" / "airline-2024-11", *folders]
    report = rescore_file(path, folders, AIRLINE if name == "airline" else RETAIL)
    rows = []
    for verdict in report.verdicts:
        label = labels.get(str(verdict.index))
        if label is None:
            continue
        attribution = verdict.attribution
        rows.append(
            Row(
                domain,
                part,
                str(verdict.index),
                label["kind"],
                label["party"],
                attribution.party if attribution else None,
                verdict.reward_tau,
                label.get("reward"),
                [f"{f.kind}: {f.excerpt}" for f in attribution.faults] if attribution else [],
            )
        )
    return rows


def figures(rows: list[Row]) -> dict[str, Any]:
    """Precision and recall per party, the confusion table, and parties on passing episodes."""
    out: dict[str, Any] = {"episodes": len(rows)}
    for party in PARTIES:
        tp = sum(r.label == party and r.found == party for r in rows)
        given = sum(r.found == party for r in rows)
        labelled = sum(r.label == party for r in rows)
        out[party] = {"precision": rate(tp, given), "recall": rate(tp, labelled)}
    passing = [r for r in rows if r.label is None]
    out["passing"] = len(passing)
    out["passing_with_party"] = sum(r.found is not None for r in passing)
    table = Counter((r.label or "none", r.found or "none") for r in rows)
    out["confusion"] = {f"{label}->{found}": n for (label, found), n in sorted(table.items())}
    out["reward_mismatch"] = sum(
        r.reference_reward is not None
        and r.reward is not None
        and abs(r.reward - r.reference_reward) > 1e-9
        for r in rows
    )
    return out


def _cell(value: Any) -> str:
    if value.value is None:
        return f"{'-':>20}"
    interval = f"[{value.ci_low:.2f},{value.ci_high:.2f}]"
    return f"{value.value:5.3f} {interval} {int(value.k):>3}/{value.n:<3}"


def show(title: str, rows: list[Row]) -> dict[str, Any]:
    found = figures(rows)
    line = f"{title:34} {found['episodes']:5}"
    for party in PARTIES:
        line += f"  {_cell(found[party]['precision'])}  {_cell(found[party]['recall'])}"
    line += f"  {found['passing_with_party']:>3}/{found['passing']:<4}"
    print(line)
    return found


def header() -> None:
    cols = "".join(f"  {party + ' precision':>25}  {party + ' recall':>25}" for party in PARTIES)
    print(f"{'set':34} {'eps':>5}{cols}  passing given a party")


def confusion(rows: list[Row]) -> None:
    table = Counter((r.label or "none", r.found or "none") for r in rows)
    columns = ["agent", "user", "task", "unclear", "none"]
    print(f"{'label | found':14}" + "".join(f"{c:>9}" for c in columns))
    for label in ["agent", "user", "task", "none"]:
        print(f"{label:14}" + "".join(f"{table.get((label, c), 0):9}" for c in columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=None, help="the generated set's folder")
    parser.add_argument("--parts", nargs="+", default=["dev", "heldout"])
    parser.add_argument("--domains", nargs="+", default=[*TAU2_DOMAINS, *TAUBENCH_DOMAINS])
    parser.add_argument("--no-gpt4o", action="store_true", help="skip τ-bench's gpt-4o records")
    parser.add_argument("--misses", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    folder = args.set or default_set()
    if not folder.is_dir():
        raise SystemExit(f"{folder}: no labelled set; run bench/attribution_set.py first")
    clock = time.perf_counter()
    rows: list[Row] = []
    for domain in args.domains:
        for part in args.parts:
            if not (folder / f"{domain}-{part}.labels.json").exists():
                print(f"(no {domain}-{part} in {folder})")
                continue
            if domain in TAU2_DOMAINS:
                rows += tau2_rows(folder, domain, part)
            else:
                path = folder / f"{domain}-{part}.json"
                labels = json.loads((folder / f"{domain}-{part}.labels.json").read_text())
                rows += taubench_rows(path, labels, domain, part)
    if not args.no_gpt4o and GPT4O_LABELS.exists():
        labels = json.loads(GPT4O_LABELS.read_text())["records"]
        path = SHARED / "taubench" / "trajectories" / "gpt-4o-airline.json"
        rows += taubench_rows(path, labels, "taubench-gpt4o-airline", "real")
    seconds = time.perf_counter() - clock
    print(f"{len(rows)} labelled episodes from {folder}, rescored in {seconds:.0f} s\n")
    measured = [r for r in rows if r.kind != UNDETECTABLE and r.label != MIXED]
    printed: dict[str, Any] = {}
    header()
    for domain in [*args.domains, "taubench-gpt4o-airline"]:
        for part in [*args.parts, "real"]:
            chosen = [r for r in measured if r.domain == domain and r.part == part]
            if chosen:
                printed[f"{domain}/{part}"] = show(f"{domain} {part}", chosen)
    for name, domains in (("τ²", TAU2_DOMAINS), ("τ-bench (generated)", TAUBENCH_DOMAINS)):
        for part in args.parts:
            chosen = [r for r in measured if r.domain in domains and r.part == part]
            if chosen:
                printed[f"{name}/{part}"] = show(f"{name} {part}", chosen)
    printed["all"] = show("all", measured)
    print("\nconfusion, all measured episodes (rows: label; columns: deedbench's party)")
    confusion(measured)
    mixed = [r for r in rows if r.label == MIXED]
    if mixed:
        seen = Counter(r.found or "none" for r in mixed)
        print(f"\nlabelled mixed (apart): {len(mixed)}, found as {dict(seen)}")
    undetectable = [r for r in rows if r.kind == UNDETECTABLE]
    if undetectable:
        seen = Counter(r.found or "none" for r in undetectable if r.label)
        print(
            f"\n{UNDETECTABLE} (apart): {sum(r.label == 'task' for r in undetectable)} failing, "
            f"found as {dict(seen)}"
        )
    kinds = Counter((r.kind, r.label or "none", r.found or "none") for r in measured)
    print("\nby kind (kind, label, found: episodes)")
    for (kind, label, found), count in sorted(kinds.items()):
        mark = "" if label == found else "   <- differs"
        print(f"  {kind:28} {label:6} {found:8} {count:5}{mark}")
    mismatched = figures(measured)["reward_mismatch"]
    print(f"\nepisodes whose rescored reward differs from the reference's: {mismatched}")
    if args.misses:
        misses = [asdict(r) for r in rows if r.label != r.found]
        args.misses.write_text(json.dumps(misses, indent=1))
    if args.json:
        args.json.write_text(json.dumps(printed, indent=1, default=_plain))


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, Counter):
        return {f"{k[0]}->{k[1]}": v for k, v in value.items()}
    raise TypeError(type(value))


if __name__ == "__main__":
    main()
