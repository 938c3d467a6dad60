"""Start-up of the read commands against `python -c "import typer, sqlite3"`, paired (issue 28).

Usage: .venv/bin/python bench/startup.py [--runs R] [--tunelog PATH] [--before PATH]
       [--build LABEL=PATH ...] [--db PATH]

Every read command runs as a whole process (`tunelog --db small.db best`, as the console script
runs) on a small database (sample_logs/x86_mini_llvm.log imported), R times, round-robin with the
baseline `python -c "import typer, sqlite3"` of the same interpreter, so drift in the machine's
speed hits each alike. Each run's CPU time (user + system) is compared, not its wall time.
Prints a markdown table: medians, and each command's ratio to the
baseline's median (the budget: 1.6x). `--build LABEL=PATH` (repeatable): another build's
`tunelog` script, timed in the same rounds on the same database, in columns of its own;
`--before PATH` is `--build before=PATH`. A build is another install's script, or a script
that puts a checkout's directory first on `sys.path` and then runs `tunelog.console.main`
(`tunelog.cli.run` before it existed), as the console script does (the baseline always comes
from `--tunelog`'s interpreter).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_logs" / "x86_mini_llvm.log"
BUDGET = 1.6
BASELINE = 'python -c "import typer, sqlite3"'
# The warm-up run writes each module's bytecode (with PYTHONDONTWRITEBYTECODE set, every changed
# module would be compiled again on every run, which users of an installed tunelog never pay).
WRITES_BYTECODE = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
READ_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("best",),
    ("best", "--json"),
    ("workloads",),
    ("workloads", "--json"),
    ("untuned",),
    ("errors",),
    ("stats",),
    ("sources",),
    ("--help",),
)


def timed(command: Sequence[str]) -> float:
    """CPU seconds (user + system) of one run of `command`, its output discarded.

    CPU time, not wall time: on a machine shared with other work, wall time mostly measures
    how long the process waited for a core.
    """
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=WRITES_BYTECODE
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, command)
    return usage.ru_utime + usage.ru_stime


def small_database(tunelog: str, directory: str) -> str:
    """A database of the sample log, made by `tunelog import`."""
    db = str(Path(directory) / "small.db")
    subprocess.run([tunelog, "--db", db, "import", str(SAMPLE)], check=True, capture_output=True)
    return db


def build_key(label: str, args: Sequence[str]) -> str:
    """The name another build's run of `tunelog ARGS` is kept under."""
    return f"{label}: tunelog {' '.join(args)}"


def measure(tunelog: str, builds: dict[str, str], db: str, runs: int) -> dict[str, list[float]]:
    """Seconds of each run of the baseline and of every read command of every build,
    round-robin."""
    python = str(Path(tunelog).with_name("python"))
    commands = {BASELINE: [python, "-c", "import typer, sqlite3"]}
    for args in READ_COMMANDS:
        commands["tunelog " + " ".join(args)] = [tunelog, "--db", db, *args]
        for label, script in builds.items():
            commands[build_key(label, args)] = [script, "--db", db, *args]
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():
        timed(command)  # warm the file cache and the bytecode
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(timed(command))
    return times


def table(times: dict[str, list[float]], builds: Sequence[str] = ()) -> str:
    """Markdown: each command's median and its ratio to the baseline's median, and the same for
    every other build."""
    base = statistics.median(times[BASELINE])
    head = "| command | CPU ms (median) | x baseline |" + "".join(
        f" {label} (CPU ms) | {label} x baseline |" for label in builds
    )
    lines = [head, "| --- | ---: | ---: |" + " ---: | ---: |" * len(builds)]
    for name, samples in times.items():
        if not name.startswith("tunelog ") and name != BASELINE:
            continue  # another build's: in its own columns
        median = statistics.median(samples)
        flag = "" if median <= BUDGET * base else " (over budget)"
        row = f"| `{name}` | {median * 1e3:.1f} | {median / base:.2f}{flag} |"
        for label in builds:
            other = times.get(build_key(label, name.removeprefix("tunelog ").split()))
            then = statistics.median(other) if other else None
            row += f" {then * 1e3:.1f} | {then / base:.2f} |" if then else " | |"
        lines.append(row)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table; exit 1 when a command is over the budget."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--tunelog", default=str(Path(sys.executable).with_name("tunelog")))
    parser.add_argument("--before", help="the tunelog script of the code before a change")
    parser.add_argument(
        "--build",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="another build's tunelog script, timed alongside (repeatable)",
    )
    parser.add_argument("--db", help="a database to read (default: the sample log imported)")
    args = parser.parse_args(argv)
    builds = {"before": args.before} if args.before else {}
    for build in args.build:
        label, equals, script = build.partition("=")
        if not equals:
            parser.error(f"--build takes LABEL=PATH, not {build!r}")
        builds[label] = script
    with tempfile.TemporaryDirectory() as directory:
        db = args.db or small_database(args.tunelog, directory)
        times = measure(args.tunelog, builds, db, args.runs)
    print(f"{args.runs} runs each, round-robin; baseline: {BASELINE}\n")
    print(table(times, list(builds)))
    base = statistics.median(times[BASELINE])
    mine = [t for name, t in times.items() if name.startswith("tunelog ") or name == BASELINE]
    return int(any(statistics.median(t) > BUDGET * base for t in mine))


if __name__ == "__main__":
    sys.exit(main())
