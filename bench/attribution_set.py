"""Generate the labelled attribution set (rules: `bench/attribution_labels.md`).

τ²'s four domains run in τ²'s own Python (`attribution_set_tau2.py`, through
tests/benchmarks/tau2/_reference.py's environment); τ-bench's airline and retail run in
τ-bench's own code (`attribution_set_taubench.py`). The output is deterministic for a seed:
one result file per domain and part (``dev``, ``heldout``), in the reference's own format,
with its labels beside it (``*.labels.json``), and ``manifest.json``. It is large and
regenerable, so it stays out of git:

    python bench/attribution_set.py --seed 1 [--out DIR] [--domains telecom banking_knowledge]
        [--limit N]     # N tasks per part and domain (0: all)

Default DIR: ~/.cache/deedbench/attribution-set/seed-<seed>. About 40 minutes for the whole
set on one core (τ²'s airline evaluator is the slowest part: ~1.5 s an episode).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # _reference imports _shared

from tests.benchmarks.tau2 import _reference

TAU2_DOMAINS = ("airline", "retail", "telecom", "banking_knowledge")
TAUBENCH_DOMAINS = ("taubench-airline", "taubench-retail")
HERE = Path(__file__).resolve().parent


def default_folder(seed: int) -> Path:
    return Path.home() / ".cache" / "deedbench" / "attribution-set" / f"seed-{seed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--domains", nargs="+", default=[*TAU2_DOMAINS, *TAUBENCH_DOMAINS])
    parser.add_argument("--limit", type=int, default=0, help="tasks per part and domain (0: all)")
    args = parser.parse_args()
    out = args.out or default_folder(args.seed)
    out.mkdir(parents=True, exist_ok=True)
    reason = _reference.missing()
    if reason and any(d in TAU2_DOMAINS for d in args.domains):
        raise SystemExit(f"τ²'s code cannot run here: {reason}")
    seconds = {}
    for domain in args.domains:
        clock = time.perf_counter()
        if domain in TAU2_DOMAINS:
            with tempfile.TemporaryDirectory() as scratch:
                spec = Path(scratch) / "spec.json"
                spec.write_text(
                    json.dumps(
                        {"domain": domain, "seed": args.seed, "out": str(out), "limit": args.limit}
                    )
                )
                _reference.run_program(HERE / "attribution_set_tau2.py", str(spec))
        elif domain in TAUBENCH_DOMAINS:
            from attribution_set_taubench import generate

            generate(domain.removeprefix("taubench-"), args.seed, out, args.limit)
        else:
            raise SystemExit(
                f"unknown domain {domain!r}: one of {', '.join(TAU2_DOMAINS + TAUBENCH_DOMAINS)}"
            )
        seconds[domain] = round(time.perf_counter() - clock, 1)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=HERE
    ).stdout.strip()
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"domains": {}}
    manifest.update({"seed": args.seed, "limit": args.limit, "generator_commit": commit})
    for domain in args.domains:
        counts = {}
        for part in ("dev", "heldout"):
            labels = json.loads((out / f"{domain}-{part}.labels.json").read_text())
            counts[part] = len(labels)
        manifest["domains"][domain] = {"episodes": counts, "seconds": seconds[domain]}
    manifest_path.write_text(json.dumps(manifest, indent=1))
    print(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    main()
