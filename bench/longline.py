"""Peak memory of importing a giant line, beside a normal 1M-line import (issue 26).

Usage: .venv/bin/python bench/longline.py [--runs R] [--line-mb M] [--size N] [--baseline COMMIT]
       [--quiet-wait S]

- **Giant line**: the 200 lines of sample_logs/x86_mini_llvm.log followed by one line of M MB
  (default 100) with no line end (`{"x": "aaaa...`), imported into a fresh database, plain and
  gzip-compressed. Before issue 26 such a line was read whole (100 MB: 3.2 GB peak).
- **Normal import**: the synthetic log of N lines (bench/generate.py, default 1M).
- `--baseline COMMIT`: that commit's tunelog imports both as well (the giant line once).

Medians of R runs of whole processes (run.measure: wall time and the child's own peak RSS);
a markdown table on stdout.
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import run
from commands import baseline_tree
from run import OUT, ROOT, TUNELOG, Sample, log, measure

SAMPLE = ROOT / "sample_logs" / "x86_mini_llvm.log"
PEAK_LIMIT = 400e6  # bytes of peak RSS for a 100 MB line (issue 26)


def giant_line_log(path: Path, megabytes: int) -> Path:
    """The sample log then one line of `megabytes` MB without line end, written in pieces."""
    if path.exists():
        return path
    piece = b"a" * (1 << 20)
    with open(path, "wb") as out:
        out.write(SAMPLE.read_bytes())
        out.write(b'{"x": "')
        for _ in range(megabytes * 1_000_000 // len(piece)):
            out.write(piece)
    return path


def gzipped(path: Path) -> Path:
    """A gzip copy of `path` beside it."""
    packed = path.with_name(path.name + ".gz")
    if not packed.exists():
        with open(path, "rb") as src, gzip.open(packed, "wb", compresslevel=1) as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
    return packed


def imports(cmd: Sequence[str], db: Path, log_path: Path, runs: int) -> list[Sample]:
    """`runs` imports of `log_path` into a fresh database each."""
    samples = []
    for _ in range(runs):
        run.remove_db(db)
        samples.append(measure([*cmd, "--db", str(db), "import", str(log_path)]))
    return samples


def row(name: str, samples: list[Sample]) -> str:
    """One markdown row: median wall time and peak RSS."""
    seconds = statistics.median(s.seconds for s in samples)
    rss = statistics.median(s.rss_bytes for s in samples)
    return f"| {name} | {seconds:.2f} | {rss / 1e6:.0f} |"


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--line-mb", type=int, default=100)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", help="commit whose import of the giant line is measured too")
    parser.add_argument("--quiet-wait", type=float, default=60.0)
    args = parser.parse_args(argv)
    run.options.quiet_wait = args.quiet_wait
    OUT.mkdir(parents=True, exist_ok=True)
    snapshot = run.snapshot_sources(run.source_digest())
    env = {**os.environ, "PYTHONPATH": str(snapshot)}
    run.options.env = env
    giant = giant_line_log(OUT / f"giant-line-{args.line_mb}mb.log", args.line_mb)
    rows = ["| import | wall s (median) | peak RSS MB (median) |", "|---|---|---|"]
    with tempfile.TemporaryDirectory(dir=OUT, prefix="work-") as tmp:
        db = Path(tmp) / "t.db"
        log(f"importing {giant.name} ...")
        rows.append(
            row(f"{args.line_mb} MB line, no line end", imports([TUNELOG], db, giant, args.runs))
        )
        rows.append(
            row(
                f"{args.line_mb} MB line, gzip",
                imports([TUNELOG], db, gzipped(giant), args.runs),
            )
        )
        synthetic = run.ensure_log(args.size, args.seed)
        log(f"importing {synthetic.name} ...")
        rows.append(
            row(f"{args.size:,} lines (synthetic)", imports([TUNELOG], db, synthetic, args.runs))
        )
        if args.baseline:
            run.options.env = {**os.environ, "PYTHONPATH": str(baseline_tree(args.baseline))}
            rows.append(
                row(
                    f"{args.size:,} lines, commit {args.baseline}",
                    imports([TUNELOG], db, synthetic, args.runs),
                )
            )
            rows.append(
                row(
                    f"{args.line_mb} MB line, commit {args.baseline} (1 run)",
                    imports([TUNELOG], db, giant, 1),
                )
            )
            run.options.env = env
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"tunelog {commit}; peak RSS limit for a 100 MB line: {PEAK_LIMIT / 1e6:.0f} MB")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
