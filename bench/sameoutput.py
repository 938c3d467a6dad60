"""Before/after check: every command over every corpus log, outputs compared byte for byte.

A restructuring must not change what a user sees. This runs the same command sequence with two
interpreters (each with its own tunelog installed, e.g. two worktrees' virtualenvs) and compares
stdout, stderr, the exit code and every file a command wrote. Each log is imported into a fresh
database per interpreter, in a directory of its own, so paths print the same on both sides.

    python3 bench/sameoutput.py --before /path/a/.venv/bin/python --after .venv/bin/python
    python3 bench/sameoutput.py --before A --after B --only tophub/cuda --keep /tmp/out

Exit 0 when every output is the same, 1 when any differs (each difference is listed).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE.parent.parent / "shared" / "corpus"
TIMEOUT_S = 300
# A few logs of every kind (AutoTVM of several targets, failures, Ansor, MetaSchedule, a graph
# tuner's output): --quick runs these only (a few minutes instead of most of an hour).
QUICK = (
    "tophub/cuda_v0.08",
    "tophub/arm_cpu_v0.06",
    "tophub/llvm_v0.04",
    "generated/x86_mini_llvm",
    "generated/metaschedule_gmm",
    "forum/centernet_forum_paste",
    "SamMichaelson__MachineLearningThesis/resnet-18.log",
    "tlc-pack__TLCBench/tuning_logs/autoscheduler_cuda_mobilenet_v2",
    "resnet_50-B1-float32.graph.log",
    "dan-zheng__cs590-project/matmul.log",
    "Kovelja009__int8_tvm_benchmark/resnet18-cuda",
    "WoongQ__RoboticAI2023_TVM/conv2d.json",
)
# When a line was imported differs from run to run: shown as this placeholder on both sides.
WHEN = re.compile(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d)?([+-]\d\d:\d\d|Z)?")

# Read commands run after the import, in this order, each with and without --json where it has
# one. `{log}` is the imported file, `{layer}` the first layer's key (from `workloads --json`),
# `{out}` a file or directory the command writes (compared afterwards).
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("sources",),
    ("sources", "--json"),
    ("stats",),
    ("stats", "--json"),
    ("best",),
    ("best", "--json"),
    ("best", "--knobs"),
    ("best", "--wide"),
    ("best", "--source", "1"),
    ("workloads",),
    ("workloads", "--json"),
    ("workloads", "--wide"),
    ("untuned",),
    ("untuned", "--json"),
    ("untuned", "--check"),
    ("errors",),
    ("errors", "--json"),
    ("export", "{out}.log"),
    ("export", "--winners-only", "{out}.winners.log"),
    ("export", "--source", "1", "{out}.source.log"),
    ("export-metaschedule", "{out}.ms"),
    ("curve", "{layer}"),
    ("curve", "{layer}", "--json"),
    ("curve", "{layer}", "--improvements"),
    ("knobs", "{layer}"),
    ("knobs", "{layer}", "--json"),
    ("rejects",),
    ("network", "{log}"),
    ("network",),
    ("diff", "{db}", "{log}"),
    ("diff", "{db}", "{log}", "--json"),
    ("explain", "6"),
    ("explain", "all", "--json"),
    ("import", "{log}"),
    ("sources", "remove", "1"),
    ("stats",),
)


@dataclass(frozen=True)
class Outcome:
    """What one command did: its exit code, its output, and the files it wrote."""

    code: int
    stdout: bytes
    stderr: bytes
    files: tuple[tuple[str, bytes], ...]


def corpus_logs(corpus: Path, only: Sequence[str]) -> list[Path]:
    """Every log of the corpus (a MetaSchedule database as its directory), filtered by --only."""
    found: set[Path] = set()
    for path in sorted(corpus.rglob("*")):
        if not path.is_file() or path.suffix not in {".log", ".json", ".txt", ".gz"}:
            continue
        if path.name.startswith("database_"):
            found.add(path.parent)
        else:
            found.add(path)
    chosen = sorted(found)
    if only:
        chosen = [p for p in chosen if any(part in str(p) for part in only)]
    return chosen


def first_layer(workloads_json: bytes) -> str | None:
    """The first layer's key in `workloads --json`, or None when there is none."""
    try:
        rows = json.loads(workloads_json)
    except ValueError:
        return None
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and isinstance(row.get("layer_key"), str):
            return str(row["layer_key"])
    return None


def written_files(workdir: Path, before: set[Path]) -> tuple[tuple[str, bytes], ...]:
    """Files under workdir that a command created or changed (the database excluded)."""
    return tuple(
        (str(path.relative_to(workdir)), path.read_bytes())
        for path in sorted(workdir.rglob("*"))
        if path.is_file()
        and path.name not in {"t.db", "t.db-journal", "t.db-wal"}
        and (path not in before or path.suffix == ".log")
    )


def run_sequence(python: str, log: Path, workdir: Path) -> Iterator[tuple[str, Outcome]]:
    """Import the log into a fresh database in workdir, then run every command."""
    base = [python, "-m", "tunelog", "--db", "t.db"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir), "COLUMNS": "100", "LANG": "C.UTF-8"}

    def call(args: Sequence[str]) -> Outcome:
        existing = set(workdir.rglob("*"))
        try:
            done = subprocess.run(
                [*base, *args], cwd=workdir, env=env, capture_output=True, timeout=TIMEOUT_S
            )
            code, out, err = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            code, out, err = -1, b"", b"timeout"
        out, err = WHEN.sub(b"<when>", out), WHEN.sub(b"<when>", err)
        return Outcome(code, out, err, written_files(workdir, existing))

    yield "import", call(["import", str(log)])
    layer = first_layer(call(["workloads", "--json"]).stdout)
    for template in COMMANDS:
        if layer is None and "{layer}" in template:
            continue
        args = [part.format(log=log, layer=layer or "", out="out", db="t.db") for part in template]
        yield " ".join(template), call(args)
    report = call(["report", "out.html"])
    yield "report", Outcome(report.code, report.stdout, report.stderr, ())


def differences(a: Outcome, b: Outcome) -> list[str]:
    """What differs between two outcomes, in words."""
    found = []
    if a.code != b.code:
        found.append(f"exit {a.code} -> {b.code}")
    if a.stdout != b.stdout:
        found.append(f"stdout differs ({len(a.stdout)} -> {len(b.stdout)} bytes)")
    if a.stderr != b.stderr:
        found.append(f"stderr differs: {a.stderr[-300:]!r} -> {b.stderr[-300:]!r}")
    if a.files != b.files:
        names_a = {name for name, _ in a.files}
        names_b = {name for name, _ in b.files}
        if names_a != names_b:
            found.append(f"files {sorted(names_a)} -> {sorted(names_b)}")
        else:
            changed = [n for (n, x), (_, y) in zip(a.files, b.files, strict=True) if x != y]
            found.append(f"file contents differ: {changed}")
    return found


def keep(where: Path, side: str, name: str, outcome: Outcome) -> None:
    """Write one outcome's outputs under where/side/name for a look with diff -r."""
    folder = where / side / name.replace("/", "_").replace(" ", "_")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stdout").write_bytes(outcome.stdout)
    (folder / "stderr").write_bytes(outcome.stderr)
    (folder / "exit").write_text(f"{outcome.code}\n")


def compare_log(before: str, after: str, log: Path, kept: Path | None) -> list[str]:
    """Run the sequence on one log with both interpreters; the differences found."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [Path(tmp) / "run", Path(tmp) / "run2"]
        for d in dirs:
            d.mkdir()
        side_a = list(run_sequence(before, log, dirs[0]))
        shutil.rmtree(dirs[0])
        dirs[0].mkdir()  # the after side runs in the same path as the before side did
        side_b = list(run_sequence(after, log, dirs[0]))
    names_a = [n for n, _ in side_a]
    names_b = [n for n, _ in side_b]
    if names_a != names_b:
        problems.append(f"{log}: commands run differ: {names_a} -> {names_b}")
    for (name, a), (_, b) in zip(side_a, side_b, strict=False):
        for what in differences(a, b):
            problems.append(f"{log}: `{name}`: {what}")
        if kept is not None and a != b:
            tag = f"{log.name}.{name}"
            keep(kept, "before", tag, a)
            keep(kept, "after", tag, b)
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Compare two interpreters' outputs over the corpus; 0 when all are the same."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="python of the build before")
    parser.add_argument("--after", required=True, help="python of the build after")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--only", action="append", default=[], help="path part to keep")
    parser.add_argument("--quick", action="store_true", help="a dozen logs of every kind")
    parser.add_argument("--jobs", type=int, default=1, help="logs compared at once")
    parser.add_argument("--keep", type=Path, help="write differing outputs here")
    args = parser.parse_args(argv)
    logs = corpus_logs(args.corpus, [*args.only, *(QUICK if args.quick else ())])
    if not logs:
        print(f"no logs under {args.corpus}", file=sys.stderr)
        return 2
    problems: list[str] = []

    def one(log: Path) -> list[str]:
        found = compare_log(args.before, args.after, log, args.keep)
        state = "same" if not found else f"{len(found)} differ"
        print(f"{log.relative_to(args.corpus)}: {state}", file=sys.stderr, flush=True)
        return found

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for found in pool.map(one, logs):
            problems.extend(found)
    for problem in problems:
        print(problem)
    print(f"{len(logs)} logs, {len(problems)} differences", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
