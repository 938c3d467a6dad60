"""Benchmark what every command pays (start-up), the real corpus, `export --top-k`, 5M lines.

Issue 17. Usage: .venv/bin/python bench/commands.py [--runs R] [--startup-runs R]
           [--sizes N [N ...]] [--baseline COMMIT] [--quiet-wait S] [--write-md]

- **Start-up**: each command as a whole process on a small database (the bundled sample logs)
  and on an empty one, against `python -c pass` with the same interpreter, and against
  `python -c "import typer, sqlite3"` (the libraries' share). Measured from a
  regular (non-editable) install of the working tree in bench/out/venv-<digest>, as users run
  it: the editable install's import finder alone costs tens of milliseconds per process.
  Commands run round-robin, so drift in the machine's speed hits each alike.
- **Corpus import**: `tunelog import ../shared/corpus` into a fresh database, lines read per
  second (from the import report), against the synthetic log of the first size in the same run;
  also its TopHub packages alone and the rest alone (see TOPHUB).
- **Each size N** (synthetic logs of bench/generate.py): tunelog import, the `json.loads` loop,
  `export`, `export --top-k 3`, `best`, `workloads`; with `--baseline COMMIT`, the import of
  that commit too, paired with this one back to back (the import-speed regression check).
  At 1M lines also the log grown by 1,000 lines imported again from its path (issue 11), and
  a copy of it at another path, grown by 1,000 lines and imported again from its path (issue 25).
  Logs of 5M lines and their databases are deleted afterwards (3 GB + 1 GB).

Medians of R runs; results go to stdout (markdown), bench/out/commands-<date>.json and, with
--write-md, the commands section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import run
from run import OUT, PYTHON, ROOT, Sample, log, measure

CORPUS = ROOT.parent / "shared" / "corpus"
SAMPLE_LOGS = ROOT / "sample_logs"
MD_START = "<!-- commands:start (rewritten by bench/commands.py --write-md) -->"
MD_END = "<!-- commands:end -->"
STARTUP_LIMIT = 0.15  # s above `python -c pass` (issue 17)
# The libraries every command imports, timed alone: the part of start-up that is theirs (none
# of the commands timed in `startup` loads tabulate: tunelog.tables writes plain cells).
LIBRARIES = "import typer, sqlite3"
CORPUS_RATIO_LIMIT = 0.7  # corpus lines/s over synthetic lines/s
TOP_K_LIMIT = 1.0  # s for `export --top-k 3` at 1M records
REGRESSION_LIMIT = 1.05  # import time over the baseline commit's
DELETE_FROM = 5_000_000  # logs this large are deleted after the run
GROWN_SIZE = 1_000_000  # the size whose log is also imported grown (issue 11)
GROWN_LIMIT = 0.5  # s for that import


def release_venv() -> Path:
    """A virtualenv with the working tree installed as users install it (not editable)."""
    digest = run.source_digest()
    venv = OUT / f"venv-{digest}"
    if not (venv / "bin" / "tunelog").exists():
        log(f"installing tunelog into {venv.name} ...")
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
        subprocess.run([*pip, str(ROOT)], check=True)
    return venv


def baseline_tree(commit: str) -> Path:
    """tunelog's package at `commit`, compiled, for PYTHONPATH (see run.snapshot_sources)."""
    root = OUT / f"baseline-{commit}"
    if not (root / "tunelog").exists():
        tmp = Path(tempfile.mkdtemp(dir=OUT))
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "tunelog"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        import compileall

        compileall.compile_dir(tmp, quiet=1)
        tmp.rename(root)
    return root


def timed(name: str, cmd: Sequence[str], samples: dict[str, list[Sample]]) -> None:
    """Run `cmd` once and file its sample under `name`."""
    samples.setdefault(name, []).append(measure(cmd))


def median(samples: dict[str, list[Sample]], name: str) -> float:
    """Median wall seconds of `name`."""
    return statistics.median(s.seconds for s in samples[name])


# -- start-up ---------------------------------------------------------------------------------


def startup(runs: int, work: Path) -> dict[str, list[Sample]]:
    """Every command round-robin on a small and an empty database; `python -c pass` too."""
    venv = release_venv()
    tunelog = str(venv / "bin" / "tunelog")
    small, empty, out = work / "small.db", work / "empty.db", work / "out.log"
    logs = [str(p) for p in sorted(SAMPLE_LOGS.iterdir())]
    subprocess.run([tunelog, "--db", str(small), "import", *logs], check=True, capture_output=True)
    blank = work / "blank.log"
    blank.write_text("")
    subprocess.run(
        [tunelog, "--db", str(empty), "import", str(blank)], check=True, capture_output=True
    )
    commands: dict[str, list[str]] = {
        "python -c pass": [str(venv / "bin" / "python"), "-c", "pass"],
        LIBRARIES: [str(venv / "bin" / "python"), "-c", LIBRARIES],
        "tunelog --help": [tunelog, "--help"],
        "stats (empty database)": [tunelog, "--db", str(empty), "stats"],
    }
    for name in ("stats", "best", "workloads", "errors", "untuned", "sources"):
        commands[name] = [tunelog, "--db", str(small), name]
    commands["export"] = [tunelog, "--db", str(small), "export", "--force", str(out)]
    samples: dict[str, list[Sample]] = {}
    for _ in range(runs):
        for name, cmd in commands.items():
            samples.setdefault(name, []).append(measure(cmd, allowed=(0, 1)))
    return samples


# -- the corpus -------------------------------------------------------------------------------


# The corpus's TopHub packages hold one best record per (target, workload): every line is a
# new group (workload lookups, tallies, slots, top configs, a trial run each), unlike a tuning
# run's log. They are timed apart from the rest as well as within the whole corpus.
TOPHUB = CORPUS / "tophub"


def corpus_parts() -> dict[str, list[Path]]:
    """The inputs timed: the whole corpus, its TopHub packages, and everything else."""
    rest = sorted(p for p in CORPUS.iterdir() if p != TOPHUB and p.name != "MANIFEST.md")
    return {"corpus": [CORPUS], "tophub": [TOPHUB], "rest": rest}


def lines_read(tunelog: str, paths: list[Path], db: Path) -> tuple[int, int]:
    """Files and lines an import of `paths` reads (by its --json report)."""
    run.remove_db(db)
    report = subprocess.run(
        [tunelog, "--db", str(db), "import", "--json", *map(str, paths)],
        capture_output=True,
        env=run.options.env,
    ).stdout
    files = json.loads(report)["files"]
    return len(files), sum(int(f["lines"]) for f in files)


def corpus_import(runs: int, synthetic: Path, work: Path) -> dict[str, Any]:
    """Lines/s importing the corpus (whole, TopHub, the rest) and the synthetic log,
    alternately into fresh databases."""
    tunelog = str(run.BIN / "tunelog")
    db = work / "corpus.db"
    parts = corpus_parts()
    counts = {name: lines_read(tunelog, paths, db) for name, paths in parts.items()}
    inputs = {**parts, "synthetic": [synthetic]}
    counts["synthetic"] = (1, sum(1 for _ in synthetic.open("rb")))
    samples: dict[str, list[Sample]] = {}
    for _ in range(runs):
        for name, paths in inputs.items():
            run.remove_db(db)
            samples.setdefault(name, []).append(
                measure([tunelog, "--db", str(db), "import", *map(str, paths)], allowed=(0, 1))
            )
    run.remove_db(db)
    synthetic_rate = counts["synthetic"][1] / median(samples, "synthetic")
    result: dict[str, Any] = {"synthetic_lines_per_s": synthetic_rate}
    for name in inputs:
        files, lines = counts[name]
        rate = lines / median(samples, name)
        result[name] = {
            "files": files,
            "lines": lines,
            "s": median(samples, name),
            "lines_per_s": rate,
            "ratio": rate / synthetic_rate,
        }
    return result


# -- sizes ------------------------------------------------------------------------------------


def one_size(n: int, runs: int, seed: int, baseline: str | None, work: Path) -> dict[str, Any]:
    """Import (and the baseline's, paired), the json.loads loop and the queries at N lines."""
    tunelog = str(run.BIN / "tunelog")
    path = run.ensure_log(n, seed)
    db = work / f"n{n}.db"
    samples: dict[str, list[Sample]] = {}
    env_now = run.options.env
    env_base = (
        {**os.environ, "PYTHONPATH": str(baseline_tree(baseline))} if baseline is not None else None
    )
    for _ in range(runs):
        log(f"N={n:,}: import")
        if env_base is not None:
            run.remove_db(db)
            run.options.env = env_base
            timed("import (baseline)", [tunelog, "--db", str(db), "import", str(path)], samples)
            run.options.env = env_now
        run.remove_db(db)
        timed("import", [tunelog, "--db", str(db), "import", str(path)], samples)
        timed("json.loads loop", [PYTHON, "-c", run.JSON_LOOP, str(path)], samples)
    out = work / "out.log"
    queries = {
        "best": ["best", "--json"],
        "workloads": ["workloads", "--json"],
        "export": ["export", "--force", str(out)],
        "export --top-k 3": ["export", "--top-k", "3", "--force", str(out)],
    }
    for _ in range(runs):
        for name, args in queries.items():
            timed(name, [tunelog, "--db", str(db), *args], samples)
    result: dict[str, Any] = {
        "n": n,
        "log_mb": path.stat().st_size / run.MB,
        "medians": {name: median(samples, name) for name in samples},
        "samples": {name: [s.seconds for s in runs_] for name, runs_ in samples.items()},
    }
    if env_base is not None:
        pairs = zip(samples["import"], samples["import (baseline)"], strict=True)
        result["paired_regression"] = statistics.median(a.seconds / b.seconds for a, b in pairs)
    if n == GROWN_SIZE:
        result["grown"] = grown_reimport(path, runs, work)
        result["grown_copy"] = grown_reimport(path, runs, work, copy=True)
    run.remove_db(db)
    if n >= DELETE_FROM:
        path.unlink()
    return result


def grown_reimport(path: Path, runs: int, work: Path, *, copy: bool = False) -> list[float]:
    """Seconds to import the log again from the same path after a tuner appended
    run.GROWN_BY lines (issue 11), as bench/run.py times it: a copy of the log imported once
    (not timed); before each run that database is copied and the lines appended (not timed).

    `copy` (issue 25): the log is imported from its own path first, then the copy (the same
    bytes at another path: a source of its own), both not timed; the copy is the one grown."""
    tunelog = str(run.BIN / "tunelog")
    grown, base, scratch = work / "grown.log", work / "grown-base.db", work / "grown.db"
    shutil.copyfile(path, grown)
    size = grown.stat().st_size
    run.remove_db(base)
    for imported in [path, grown] if copy else [grown]:
        subprocess.run(
            [tunelog, "--db", str(base), "import", str(imported)],
            check=True,
            stdout=subprocess.DEVNULL,
            env=run.options.env,
        )
    extra = run.ensure_log(run.GROWN_BY, 1)  # another seed than the log's: new lines
    seconds = []
    for _ in range(runs):
        run.copy_db(base, scratch)
        os.truncate(grown, size)
        with open(grown, "ab") as out, open(extra, "rb") as source:
            shutil.copyfileobj(source, out)
        log(f"N={size:,} bytes grown by {run.GROWN_BY:,} lines: import")
        seconds.append(measure([tunelog, "--db", str(scratch), "import", str(grown)]).seconds)
    for db in (base, scratch):
        run.remove_db(db)
    grown.unlink()
    return seconds


# -- reporting --------------------------------------------------------------------------------


def render(results: dict[str, Any]) -> str:
    """The markdown section."""
    info = results["info"]
    lines = [
        MD_START,
        f"## Start-up, corpus, top-k and 5M lines ({info['date']})",
        "",
        f"- Command: `{info['command']}`",
        f"- tunelog: `{info['tunelog']}`; load average at start {info['load']}",
        "",
    ]
    up = results.get("startup")
    if up:
        bare = statistics.median(up["python -c pass"])
        lines += [
            f"### Start-up (wall s, median of {len(up['python -c pass'])} round-robin runs)",
            "",
            "| command | median | over `python -c pass` | over the libraries | target |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        libraries = statistics.median(up[LIBRARIES])
        for name, secs in up.items():
            m = statistics.median(secs)
            over = m - bare
            baseline = name in ("python -c pass", LIBRARIES)
            verdict = "" if baseline else _verdict(over <= STARTUP_LIMIT)
            over_libraries = "" if baseline else f"{m - libraries:+.3f}"
            lines.append(f"| `{name}` | {m:.3f} | {over:+.3f} | {over_libraries} | {verdict} |")
        lines += [
            "",
            f"`{LIBRARIES}` alone takes {libraries - bare:+.3f} s over bare Python: the part of",
            "every command's start-up that is the libraries', not tunelog's.",
            "",
        ]
    corpus = results.get("corpus")
    if corpus:
        labels = {
            "corpus": "../shared/corpus",
            "tophub": "its TopHub packages (one record per workload)",
            "rest": "the rest (tuning runs, Ansor, MetaSchedule, bad files)",
            "synthetic": "synthetic",
        }
        lines += [
            "### Corpus import (lines read per second, fresh database each run)",
            "",
            "| input | files | lines | median s | lines/s | / synthetic |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, label in labels.items():
            part = corpus[name]
            lines.append(
                f"| {label} | {part['files']} | {part['lines']:,} | {part['s']:.2f} | "
                f"{part['lines_per_s']:,.0f} | {part['ratio']:.2f}x |"
            )
        ratio = corpus["corpus"]["ratio"]
        lines += [
            "",
            f"Corpus / synthetic: **{ratio:.2f}x** (target >= {CORPUS_RATIO_LIMIT}x: "
            f"{_verdict(ratio >= CORPUS_RATIO_LIMIT)}).",
            "",
        ]
    sizes = results.get("sizes", [])
    if sizes:
        names = list(sizes[0]["medians"])
        lines += [
            "### Synthetic logs (wall s, median, start-up included)",
            "",
            "| N | log MB | " + " | ".join(names) + " |",
            "| --- | ---: | " + " | ".join("---:" for _ in names) + " |",
        ]
        for size in sizes:
            cells = [f"{size['medians'].get(name, float('nan')):.2f}" for name in names]
            lines.append(f"| {size['n']:,} | {size['log_mb']:.0f} | " + " | ".join(cells) + " |")
        lines.append("")
        for size in sizes:
            top_k = size["medians"]["export --top-k 3"]
            if size["n"] == 1_000_000:
                lines.append(
                    f"- N=1,000,000: `export --top-k 3` {top_k:.2f} s "
                    f"(target < {TOP_K_LIMIT} s: {_verdict(top_k < TOP_K_LIMIT)})"
                )
            if "grown" in size:
                grown = statistics.median(size["grown"])
                lines.append(
                    f"- N={size['n']:,}: the log grown by {run.GROWN_BY:,} lines, imported again "
                    f"from its path: {grown:.2f} s (median of {len(size['grown'])}; target < "
                    f"{GROWN_LIMIT} s: {_verdict(grown < GROWN_LIMIT)})"
                )
            if "grown_copy" in size:
                grown = statistics.median(size["grown_copy"])
                lines.append(
                    f"- N={size['n']:,}: a copy of the log at another path (imported after the "
                    f"log), grown by {run.GROWN_BY:,} lines, imported again from its path: "
                    f"{grown:.2f} s (median of {len(size['grown_copy'])}; target < "
                    f"{GROWN_LIMIT} s: {_verdict(grown < GROWN_LIMIT)})"
                )
            if "paired_regression" in size:
                ratio = size["paired_regression"]
                lines.append(
                    f"- N={size['n']:,}: import / import at `{info['baseline']}` (paired runs, "
                    f"median): {ratio:.3f}x (target <= {REGRESSION_LIMIT}x: "
                    f"{_verdict(ratio <= REGRESSION_LIMIT)})"
                )
        lines.append("")
    lines.append(MD_END)
    return "\n".join(lines)


def _verdict(ok: bool) -> str:
    return "**PASS**" if ok else "**FAIL**"


def write_md(section: str) -> None:
    """Replace (or append) the commands section of BENCHMARKS.md."""
    text = run.BENCHMARKS_MD.read_text()
    if MD_START in text:
        head, rest = text.split(MD_START, 1)
        text = head + section + rest.split(MD_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    run.BENCHMARKS_MD.write_text(text)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per size (default 3)")
    parser.add_argument("--startup-runs", type=int, default=15, help="start-up rounds")
    parser.add_argument("--corpus-runs", type=int, default=3, help="corpus import rounds")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    parser.add_argument("--baseline", help="commit whose import is paired with this one's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet-wait", type=float, default=60.0)
    parser.add_argument("--skip", nargs="*", default=[], choices=["startup", "corpus", "sizes"])
    parser.add_argument("--write-md", action="store_true")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Measure and report."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    run.options.quiet_wait = args.quiet_wait
    OUT.mkdir(parents=True, exist_ok=True)
    digest = run.source_digest()
    run.options.env = {**os.environ, "PYTHONPATH": str(run.snapshot_sources(digest))}
    info = {
        "date": datetime.now(UTC).date().isoformat(),
        "command": " ".join([".venv/bin/python", "bench/commands.py", *argv]),
        "tunelog": run.git_state(),
        "baseline": args.baseline,
        "load": [round(x, 2) for x in os.getloadavg()],
        "digest": hashlib.sha256(digest.encode()).hexdigest()[:8],
    }
    results: dict[str, Any] = {"info": info}
    with tempfile.TemporaryDirectory(dir=OUT, prefix="work-") as tmp:
        work = Path(tmp)
        if "startup" not in args.skip:
            samples = startup(args.startup_runs, work)
            results["startup"] = {k: [s.seconds for s in v] for k, v in samples.items()}
        if "corpus" not in args.skip and CORPUS.is_dir():
            synthetic = run.ensure_log(100_000, args.seed)
            results["corpus"] = corpus_import(args.corpus_runs, synthetic, work)
        if "sizes" not in args.skip:
            results["sizes"] = [
                one_size(n, args.runs, args.seed, args.baseline, work) for n in args.sizes
            ]
    out = OUT / f"commands-{info['date']}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    section = render(results)
    print(section)
    if args.write_md:
        write_md(section)
        log(f"rewrote the commands section of {run.BENCHMARKS_MD}")


if __name__ == "__main__":
    main()
