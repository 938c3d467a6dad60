"""Peak memory of importing a giant line, beside a normal 1M-line import (issue 26).

Usage: .venv/bin/python bench/longline.py [--runs R] [--line-mb M] [--size N] [--baseline COMMIT]
       [--quiet-wait S]

- **Giant lines**: the 200 lines of sample_logs/x86_mini_llvm.log followed by one line of M MB
  (default 100) with no line end (`{"x": "aaaa...`), imported into a fresh database: plain,
  gzip-compressed and with --repair; and a valid record of M MB (its arguments a list of
  millions of 1s) followed by the sample log. Before issue 26 such lines were read whole.
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
from typing import BinaryIO

import run
from commands import baseline_tree
from run import OUT, ROOT, TUNELOG, Sample, log, measure

SAMPLE = ROOT / "sample_logs" / "x86_mini_llvm.log"
PEAK_LIMIT = 400e6  # bytes of peak RSS for a 100 MB line (issue 26)


def giant_line_log(path: Path, megabytes: int) -> Path:
    """The sample log then one line of `megabytes` MB without line end (`{"x": "aaa...`)."""
    if not path.exists():
        with open(path, "wb") as out:
            out.write(SAMPLE.read_bytes())
            prefix = b'{"x": "'
            out.write(prefix)
            _write_repeated(out, b"a", megabytes * 1_000_000 - len(prefix))
    return path


def giant_record_log(path: Path, megabytes: int) -> Path:
    """One valid record of `megabytes` MB (its arguments hold a list of millions of 1s), then
    the sample log: a line that parses, the costliest kind to hold."""
    if not path.exists():
        first = SAMPLE.read_bytes().split(b"\n", 1)[0]
        head, tail = first.split(b'"float32"], {}]', 1)
        head += b'"float32", [1'
        tail = b"]], {}]" + tail + b"\n"
        with open(path, "wb") as out:
            out.write(head)
            _write_repeated(out, b",1", megabytes * 1_000_000 - len(head) - len(tail))
            out.write(tail)
            out.write(SAMPLE.read_bytes())
    return path


def _write_repeated(out: BinaryIO, unit: bytes, size: int) -> None:
    """`size // len(unit)` copies of `unit`, written a megabyte at a time."""
    piece = unit * ((1 << 20) // len(unit))
    count = size // len(unit)
    per_piece = len(piece) // len(unit)
    for _ in range(count // per_piece):
        out.write(piece)
    out.write(unit * (count % per_piece))


def gzipped(path: Path) -> Path:
    """A gzip copy of `path` beside it."""
    packed = path.with_name(path.name + ".gz")
    if not packed.exists():
        with open(path, "rb") as src, gzip.open(packed, "wb", compresslevel=1) as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
    return packed


def imports(
    cmd: Sequence[str], db: Path, log_path: Path, runs: int, options: Sequence[str] = ()
) -> list[Sample]:
    """`runs` imports of `log_path` (with `options`) into a fresh database each."""
    samples = []
    for _ in range(runs):
        run.remove_db(db)
        samples.append(measure([*cmd, "--db", str(db), "import", *options, str(log_path)]))
    return samples


def row(name: str, samples: list[Sample]) -> str:
    """One markdown row: median wall time, CPU time and peak RSS."""
    seconds = statistics.median(s.seconds for s in samples)
    cpu = statistics.median(s.cpu_seconds for s in samples)
    rss = statistics.median(s.rss_bytes for s in samples)
    return f"| {name} | {seconds:.2f} | {cpu:.2f} | {rss / 1e6:.0f} |"


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
    mb = args.line_mb
    line = giant_line_log(OUT / f"giant-line-{mb}mb.log", mb)
    giants = [
        (f"{mb} MB line, no line end", [], line),
        (f"{mb} MB line, gzip", [], gzipped(line)),
        (f"{mb} MB line, --repair", ["--repair"], line),
        (f"{mb} MB valid record", [], giant_record_log(OUT / f"giant-record-{mb}mb.log", mb)),
    ]
    rows = [
        "| import | wall s (median) | CPU s (median) | peak RSS MB (median) |",
        "|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(dir=OUT, prefix="work-") as tmp:
        db = Path(tmp) / "t.db"
        for name, options, path in giants:
            log(f"importing {path.name} {' '.join(options)} ...")
            rows.append(row(name, imports([TUNELOG], db, path, args.runs, options)))
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
            for name, options, path in giants:
                rows.append(
                    row(
                        f"{name}, commit {args.baseline} (1 run)",
                        imports([TUNELOG], db, path, 1, options),
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
