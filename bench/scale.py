"""Benchmark import and every read command as the workload count grows (issue 29).

Usage: .venv/bin/python bench/scale.py [--lines N] [--workloads W [W ...]] [--runs R]
           [--small-runs R] [--commits C [C ...]] [--quiet-wait S]

For each W: a log of N lines over W workloads (bench/manyworkloads.py, cached in bench/out/), a
second one with another seed (the other side of `diff`), the `json.loads` loop over the first,
`tunelog import` of each into a fresh database, then `best`, `workloads`, `untuned`, `errors`
(each as a table and with --json), `export`, `export --winners-only` and `diff A B`. Each
command is a whole process run R times (stdout to /dev/null); the medians of wall seconds and
peak RSS go to stdout as markdown and every sample to bench/out/scale-<date>.json. The first
W (30 by default) is the baseline measured in the same run (R = --small-runs below 1,000
workloads). Each read command runs once per commit of --commits (default HEAD), back to
back, from a compiled copy of that commit's tunelog/ (PYTHONPATH), so edits made during the
run are not measured; imports use the last commit, so an earlier commit of an older schema
refuses its databases (the run stops there: `run.measure` fails on an `Error:` line).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import commands
import run
from run import JSON_LOOP, OUT, PYTHON, ROOT, TUNELOG, Sample, log, measure, remove_db

GENERATOR = ROOT / "bench" / "manyworkloads.py"
READS: dict[str, list[str]] = {
    "best": ["best"],
    "best --json": ["best", "--json"],
    "workloads": ["workloads"],
    "workloads --json": ["workloads", "--json"],
    "untuned": ["untuned"],
    "untuned --json": ["untuned", "--json"],
    "errors": ["errors"],
    "errors --json": ["errors", "--json"],
}
# Commands that exit 1 by design on some inputs (untuned slots, failures found).
ALLOWED = (0, 1)


def ensure_log(n: int, workloads: int, seed: int) -> Path:
    """The cached log of n lines over `workloads` workloads."""
    path = OUT / f"many-{n}-{workloads}-{seed}.log"
    if not path.exists():
        log(f"generating {path.name}")
        tmp = path.with_suffix(".tmp")
        # In a child process: the templates it reads would otherwise stay in this process,
        # and every measured child's peak RSS starts from the pages it inherits at fork.
        subprocess.run(
            [PYTHON, str(GENERATOR), str(n), str(workloads), str(tmp), "--seed", str(seed)],
            check=True,
        )
        tmp.rename(path)
    return path


def one_size(
    n: int, workloads: int, runs: int, work: Path, trees: dict[str, Path]
) -> dict[str, list[Sample]]:
    """Every sample for one workload count; each read command once per tree, back to back."""
    samples: dict[str, list[Sample]] = {}
    last = list(trees)[-1]
    log_a, log_b = ensure_log(n, workloads, 29), ensure_log(n, workloads, 30)
    db_a, db_b = work / f"a-{workloads}.db", work / f"b-{workloads}.db"
    db = str(db_a)

    def add(name: str, cmd: list[str], allowed: Sequence[int] = ALLOWED, tree: str = "") -> None:
        log(f"W={workloads} {name} {tree}")
        env = {**os.environ, "PYTHONPATH": str(trees[tree])} if tree else None
        run.options.env = env
        key = f"{name} [{tree}]" if tree and len(trees) > 1 else name
        samples.setdefault(key, []).append(measure(cmd, allowed))
        run.options.env = None

    for _ in range(runs):
        add("json.loads loop", [PYTHON, "-c", JSON_LOOP, str(log_a)])
        remove_db(db_a)
        add("import", [TUNELOG, "--db", db, "import", str(log_a)], (0,), tree=last)
    remove_db(db_b)
    run.options.env = {**os.environ, "PYTHONPATH": str(trees[last])}
    measure([TUNELOG, "--db", str(db_b), "import", str(log_b)])
    run.options.env = None
    out = str(work / "export.log")
    commands = {name: [TUNELOG, "--db", db, *args] for name, args in READS.items()}
    commands["export"] = [TUNELOG, "--db", db, "export", "--force", out]
    commands["export --winners-only"] = [*commands["export"], "--winners-only"]
    commands["diff A B"] = [TUNELOG, "diff", db, str(db_b)]
    for _ in range(runs):
        for name, cmd in commands.items():
            for tree in trees:
                add(name, cmd, tree=tree)
    remove_db(db_a)
    remove_db(db_b)
    return samples


def render(n: int, results: dict[int, dict[str, list[Sample]]], runs: int) -> str:
    """Markdown table: wall s and peak MB (median of runs) per command and workload count."""
    sizes = sorted(results)
    head = "| command | " + " | ".join(f"{w:,} workloads" for w in sizes) + " |"
    lines = [
        f"{n:,} lines, median of runs ({runs} at 1,000+ workloads): wall s / peak RSS MB",
        "",
        head,
    ]
    lines.append("| --- " * (len(sizes) + 1) + "|")
    names = list(results[sizes[0]])
    for name in names:
        cells = []
        for w in sizes:
            got = results[w].get(name, [])
            secs = statistics.median(s.seconds for s in got)
            mb = statistics.median(s.rss_bytes for s in got) / 1e6
            cells.append(f"{secs:.2f} s / {mb:.0f} MB")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--workloads", type=int, nargs="+", default=[30, 10_000, 80_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--small-runs", type=int, default=3, help="runs below 1,000 workloads")
    parser.add_argument(
        "--commits",
        nargs="+",
        default=["HEAD"],
        help="measure the read commands of each commit's tunelog, back to back (the last imports)",
    )
    parser.add_argument("--quiet-wait", type=float, default=10.0)
    args = parser.parse_args(argv)
    run.options.quiet_wait = args.quiet_wait
    OUT.mkdir(exist_ok=True)
    work = OUT / "scale"
    work.mkdir(exist_ok=True)
    # Each commit's package, copied and compiled: edits made during the run are not measured.
    hashes = [
        subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", c], check=True, capture_output=True, text=True
        ).stdout.strip()
        for c in args.commits
    ]  # full hashes: baseline_tree caches by name, and HEAD moves
    trees = {commit[:7]: commands.baseline_tree(commit) for commit in hashes}
    results = {
        w: one_size(args.lines, w, args.small_runs if w < 1000 else args.runs, work, trees)
        for w in args.workloads
    }
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H%M")
    raw = {w: {k: [asdict(s) for s in v] for k, v in r.items()} for w, r in results.items()}
    (OUT / f"scale-{stamp}.json").write_text(json.dumps(raw, indent=1))
    sys.stdout.write(render(args.lines, results, args.runs) + "\n")


if __name__ == "__main__":
    main()
