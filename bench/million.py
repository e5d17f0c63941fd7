"""A million episodes, read through the real CLI: every reading command at 1k, 100k and 1M
episodes per run, two runs in the store (issue 40).

The store. A seed run is made by the real CLI: TAC with the OpenAI-compatible agent at a
loopback fake model (three calls an episode, each with token usage; the fake model buys a
listing at random, so choices, outcomes and flips vary as a model's do), 10 epochs (960
episodes). With `--ray` the seed is two runs of a study on a local Ray cluster (the
study's driver writes the store, through the same `RunStore` as any run). `grow` then
copies the seed's records into runs `big` and `big2` of about N episodes each (epoch e is
the seed's epoch (e - 1) % 10 + 1, its records' `epoch` rewritten), records and summaries
as the previous release's store (format 2) held them; the first command that opens it
migrates it to format 3 (its kinds, facts and calls: the store's own migration), which is
measured as "open (migrate 2 to 3)". tests/engine/test_store_figures.py checks that a
grown store, once migrated, equals one written record by record through `RunStore.add`.

Each command runs in a child process (`deedbench ...`, fresh interpreter, COLUMNS=120)
under a 4 GB address-space limit; printed: wall seconds, CPU seconds (user + system: the
machine is shared, CPU seconds are less affected) and peak RSS. The viewer: `deedbench
view` serves the store (its own figures cache, XDG_CACHE_HOME in the scratch folder); its
first page is three answers, timed from the server's start: the runs list with every
run's rates (polled until no run is "computing"), the big run's figures, and its first
100 episodes in the report's order; cold (an empty cache) then warm (the server started
again over that cache). Export: episodes per CPU second.

    python bench/million.py [--sizes 1000,100000,1000000] [--ray] [--format1 1000000]
                            [--commands report,compare,...] [--keep FILE]
    python bench/million.py --again FILE [--commands ...]   # a kept store, measured again
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

LIMIT_BYTES = 4_000_000_000
CLI = "from deedbench.cli.main import main; main()"
SEED_EPOCHS = 10


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_BYTES, LIMIT_BYTES))


def start(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "120", **(env or {})},
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, float, str, float]:
    """Exit code, peak RSS (MB), stderr and CPU seconds of a child, reaped here."""
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024, err, usage.ru_utime + usage.ru_stime


def measure(*args: str) -> tuple[str, float, float, float]:
    """Outcome, wall seconds, CPU seconds and peak RSS (MB) of one command."""
    started = time.perf_counter()
    code, peak, err, cpu = finish(start(*args))
    seconds = time.perf_counter() - started
    if code == 0:
        return "ok", seconds, cpu, peak
    said = [line.strip(" │") for line in err.splitlines() if line.strip(" │")]
    return f"exit {code}: {said[-1][:100] if said else ''}", seconds, cpu, peak


# --- the seed: a real run through the CLI --------------------------------------------------


def fake_model() -> Any:
    """A loopback OpenAI-compatible model that plays TAC: it searches with the user's words,
    buys one of the listings it was shown at random, then says it is done."""
    from deedbench.testing.fake_server import FakeModelServer, Reply
    from deedbench.testing.players import tac_player

    listing = re.compile(r"\(id: ([^)\\]+)\)")
    rng = random.Random(40)

    def respond(body: dict[str, Any]) -> Reply:
        reply = tac_player(body)
        if reply.tool_calls and reply.tool_calls[0][0] == "purchase_tickets":
            shown = sorted(set(listing.findall(json.dumps(body.get("messages", [])))))
            arguments = {**dict(reply.tool_calls[0][1]), "experience_id": rng.choice(shown)}
            reply = replace(reply, tool_calls=[("purchase_tickets", arguments)])
        tokens = {"input_tokens": rng.randint(900, 2400), "output_tokens": rng.randint(20, 90)}
        return replace(reply, **tokens)

    return FakeModelServer("openai", respond).start()


def make_seed(folder: Path, ray: bool) -> tuple[Path, list[str]]:
    """The seed store and its runs: one local run, or a study's two runs on Ray."""
    store = folder / "seed.db"
    server = fake_model()
    try:
        if not ray:
            args = ["run", "tac", "--agent", "openai-compatible/fake", "--epochs"]
            args += [str(SEED_EPOCHS), "--base-url", server.base_url, "--run-id", "seed", "-q"]
            code, _, err, _ = finish(start(*args, "--store", str(store)))
            assert code == 0, err
            return store, ["seed", "seed"]
        study = folder / "seed.toml"
        study.write_text(
            f'name = "seed"\nexecutor = "ray"\nworkers = 2\nconcurrency = 16\n'
            f'[[benchmarks]]\nname = "tac"\nepochs = {SEED_EPOCHS}\n'
            + "".join(
                f'[[agents]]\nname = "{name}"\nspec = "openai-compatible/fake"\n'
                f'base_url = "{server.base_url}"\n'
                for name in ("a", "b")
            )
        )
        code, _, err, _ = finish(start("study", str(study), "--store", str(store)))
        assert code == 0, err[-2000:]
        with closing(sqlite3.connect(store)) as db:
            runs = [r for (r,) in db.execute("SELECT run_id FROM runs ORDER BY run_id")]
        return store, runs
    finally:
        server.stop()


# --- growing it: the seed's records copied by SQL ------------------------------------------


def grow(seed: Path, out: Path, episodes: int, sources: list[str]) -> int:
    """`seed` copied to `out` with runs `big` and `big2` (from the seed runs `sources`) of
    about `episodes` episodes each: epoch e holds the source's epoch (e - 1) % E + 1 (E its
    epochs), its records' and summaries' `epoch` rewritten, in the source's order; the
    store left in format 2 (no kinds, facts, calls or their triggers), as the previous
    release held it. Returns the episodes per run."""
    shutil.copy(seed, out)
    with closing(sqlite3.connect(out, isolation_level=None)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # a scratch store: no journal (a crash loses it, and it is made again), so gigabytes
        # are written once, not once into the log and again into the file
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("BEGIN")
        for trigger in ("summary_removed", "summary_changed", "record_removed"):
            db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        for table in ("episode_kinds", "episode_facts", "run_calls"):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        per_run = 0
        for run_id, source in zip(("big", "big2"), sources, strict=True):
            (seeded, per_epoch) = db.execute(
                "SELECT MAX(epoch), COUNT(*) / MAX(epoch) FROM episodes WHERE run_id = ?",
                (source,),
            ).fetchone()
            epochs = math.ceil(episodes / per_epoch)
            db.execute(
                "INSERT INTO runs SELECT ?, created_at, json_set(config_json, '$.run_id', ?, "
                "'$.epochs', ?) FROM runs WHERE run_id = ?",
                (run_id, run_id, epochs, source),
            )
            for epoch in range(1, epochs + 1):  # an epoch at a time: no sort of gigabytes
                for table, columns, text in (
                    ("episodes", "status, outcome", "record_json"),
                    ("episode_summaries", "status", "summary_json"),
                ):
                    db.execute(
                        f"INSERT INTO {table} SELECT ?, sample_id, condition, ?, {columns}, "
                        f"json_set({text}, '$.epoch', ?) FROM {table} "
                        "WHERE run_id = ? AND epoch = ? ORDER BY rowid",
                        (run_id, epoch, epoch, source, (epoch - 1) % seeded + 1),
                    )
            per_run = epochs * per_epoch
        for source in set(sources):  # the two runs alone, as if run as they are
            for table in ("episode_summaries", "episodes", "run_locks", "runs"):
                db.execute(f"DELETE FROM {table} WHERE run_id = ?", (source,))
        for table in ("responses", "studies"):
            db.execute(f"DELETE FROM {table}")
        db.execute("PRAGMA user_version = 2")
        db.execute("COMMIT")
        db.execute("PRAGMA journal_mode=WAL")
    return per_run


def as_format1(store: Path) -> None:
    """The store as the release before format 2 held it: no summaries."""
    with closing(sqlite3.connect(store, isolation_level=None)) as db:
        db.execute("DROP TABLE episode_summaries")
        db.execute("PRAGMA user_version = 1")


# --- the viewer's first page ------------------------------------------------------------------


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=600) as answer:
        return json.loads(answer.read())


def _status(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def viewer(store: Path, cache: Path) -> dict[str, float]:
    """One start of `deedbench view`: seconds from its start to the runs list with every
    rate, the big run's figures and its first 100 episodes; its CPU and peak RSS."""
    started = time.perf_counter()
    server = start("view", "--port", "0", "--store", str(store), env={"XDG_CACHE_HOME": str(cache)})
    figures: dict[str, float] = {}
    try:
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], 120)
        found = re.search(r"http://\S+/", server.stdout.readline() if ready else "")
        assert found, "deedbench view did not start"
        url = found.group(0)
        figures["started"] = time.perf_counter() - started
        while True:
            rows = _get(url + "api/runs")["runs"]
            if rows and all(r["figures"] is not None for r in rows):
                break
            time.sleep(0.05)
        figures["runs"] = time.perf_counter() - started
        _get(url + "api/runs/big/figures")
        figures["figures"] = time.perf_counter() - started
        page = _get(url + "api/runs/big/episodes?limit=100")
        assert len(page["rows"]) == 100, page
        figures["episodes"] = time.perf_counter() - started
        figures["peak"] = _status(server.pid, "VmHWM")
    finally:
        server.send_signal(signal.SIGINT)
        _, _, _, cpu = finish(server)
    figures["cpu"] = cpu
    return figures


# --- the commands -----------------------------------------------------------------------------


def commands(store: Path, folder: Path) -> dict[str, tuple[str, ...]]:
    where = ("--store", str(store))
    return {
        "runs": ("runs", *where),
        "report": ("report", "big", *where),
        "report --json": ("report", "big", "--json", *where),
        "report --html": ("report", "big", "--html", str(folder / "r.html"), *where),
        "compare": ("compare", "big", "big2", *where),
        "show": ("show", "big", "seville_bullfight_base", "--epoch", "2", *where),
        "export jsonl": ("export", "big", "-o", str(folder / "e.jsonl"), *where),
    }


def line(name: str, outcome: str, wall: float, cpu: float, peak: float, extra: str = "") -> None:
    print(f"    {name:<24} {wall:7.2f} s wall {cpu:7.2f} s CPU {peak:6.0f} MB  {outcome}{extra}")
    sys.stdout.flush()


def reading(
    seed: Path, sources: list[str], folder: Path, sizes: list[int], only: set[str] | None,
    format1: set[int], keep: Path | None,
) -> None:  # fmt: skip
    for size in sizes:
        store = folder / f"million-{size}.db"
        began = time.perf_counter()
        per_run = grow(seed, store, size, sources)
        made = time.perf_counter() - began
        print(
            f"  {per_run:,} episodes per run, two runs ({store.stat().st_size / 1e6:,.0f} MB "
            f"store, grown in {made:.0f} s)"
        )
        if size in format1:
            first = folder / f"format1-{size}.db"
            shutil.copy(store, first)
            as_format1(first)
            line("open (migrate 1 to 3)", *measure("runs", "--store", str(first)))
            first.unlink()
        line("open (migrate 2 to 3)", *measure("runs", "--store", str(store)))
        for name, args in commands(store, folder).items():
            if only is not None and name not in only:
                continue
            outcome, wall, cpu, peak = measure(*args)
            extra = ""
            if name == "export jsonl" and outcome == "ok":
                extra = f"  ({per_run / cpu:,.0f} episodes per CPU second)"
                (folder / "e.jsonl").unlink()
            line(name, outcome, wall, cpu, peak, extra)
        if only is None or "view" in only:
            cache = folder / f"cache-{size}"
            for kind in ("cold", "warm"):
                f = viewer(store, cache)
                print(
                    f"    view, {kind:<18} runs list {f['runs']:6.2f} s, figures "
                    f"{f['figures']:6.2f} s, first 100 episodes {f['episodes']:6.2f} s "
                    f"(server up at {f['started']:.2f} s); server {f['cpu']:.2f} s CPU, "
                    f"{f['peak']:.0f} MB"
                )
                sys.stdout.flush()
            shutil.rmtree(cache, ignore_errors=True)
        if keep is not None and size == sizes[-1]:
            shutil.move(store, keep)
        else:
            store.unlink()
            for suffix in ("-wal", "-shm"):
                Path(f"{store}{suffix}").unlink(missing_ok=True)


def again(store: Path, folder: Path, only: set[str] | None) -> None:
    """The reading commands (and the viewer) once more on a store kept by `--keep`, already
    migrated: for a command a fix touched, without growing the store again."""
    for name, args in commands(store, folder).items():
        if only is not None and name not in only:
            continue
        outcome, wall, cpu, peak = measure(*args)
        extra = ""
        if name == "export jsonl" and outcome == "ok":
            with closing(sqlite3.connect(store)) as db:
                (episodes,) = db.execute(
                    "SELECT SUM(episodes) FROM episode_kinds WHERE run_id = 'big'"
                ).fetchone()
            extra = f"  ({episodes / cpu:,.0f} episodes per CPU second)"
            (folder / "e.jsonl").unlink()
        line(name, outcome, wall, cpu, peak, extra)
    if only is None or "view" in only:
        for kind in ("cold", "warm"):
            f = viewer(store, folder / "cache")
            print(
                f"    view, {kind:<18} runs list {f['runs']:6.2f} s, figures "
                f"{f['figures']:6.2f} s, first 100 episodes {f['episodes']:6.2f} s "
                f"(server up at {f['started']:.2f} s); server {f['cpu']:.2f} s CPU, "
                f"{f['peak']:.0f} MB"
            )
            sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--ray", action="store_true", help="the seed: a study on Ray")
    parser.add_argument("--format1", default="", help="sizes to migrate from format 1 too")
    parser.add_argument("--commands", default=None, help="only these (and view)")
    parser.add_argument("--keep", type=Path, help="keep the last size's store here")
    parser.add_argument("--folder", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--again", type=Path, help="measure a store kept by --keep, grow none")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sizes.split(",")]
    format1 = {int(n) for n in args.format1.split(",") if n}
    only = set(args.commands.split(",")) if args.commands else None
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        if args.again is not None:
            again(args.again, folder, only)
            return
        began = time.perf_counter()
        seed, sources = make_seed(folder, args.ray)
        with closing(sqlite3.connect(seed)) as db:
            size = db.execute("SELECT AVG(LENGTH(record_json)) FROM episodes").fetchone()[0]
        made = "a Ray study" if args.ray else "one run"
        print(
            f"seed: {made} ({', '.join(sorted(set(sources)))}), {size / 1000:.1f} KB of JSON "
            f"per record, made in {time.perf_counter() - began:.0f} s"
        )
        reading(seed, sources, folder, sizes, only, format1, args.keep)


if __name__ == "__main__":
    main()
