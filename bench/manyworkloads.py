"""AutoTVM logs with a chosen number of workloads, made from real corpus records (issue 29).

Usage: python bench/manyworkloads.py N WORKLOADS OUT [--seed S]

The templates are the AutoTVM records of a few TopHub packages in ../shared/corpus (CUDA, x86,
ARM, Mali): one record per (target, task, arguments). Workload i takes template i mod T and
varies its first tensor's batch (1-16) and its last spatial size by i div T, the way a team
database holds one model at several batch sizes and input shapes. Each workload gets N / W
lines (a contiguous session): the template's config with its index shifted, costs drawn around
the template's cost, about 5% failed trials (error 4, cost 1e9) and strictly increasing
timestamps, so no two lines are equal. The corpus is read at run time, never copied.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TOPHUB = ROOT.parent / "shared" / "corpus" / "tophub"
PACKAGES = ("cuda_v0.10.log", "llvm_v0.04.log", "arm_cpu_v0.08.log", "mali_v0.06.log")
BATCHES = 16
FAILURE_RATE = 0.05
WRITE_CHUNK = 20_000


def templates() -> list[dict[str, Any]]:
    """One AutoTVM record per (target, task, arguments) whose first argument is a 4-D tensor."""
    seen: set[str] = set()
    found: list[dict[str, Any]] = []
    for name in PACKAGES:
        for line in (TOPHUB / name).read_text().splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            args = record["input"][2]
            first = args[0] if args else None
            if not (isinstance(first, list) and first[:1] == ["TENSOR"] and len(first[1]) == 4):
                continue
            key = json.dumps(record["input"][:3])
            if key not in seen:
                seen.add(key)
                found.append(record)
    return found


def varied(template: dict[str, Any], variant: int) -> list[Any]:
    """The template's `input` with batch and last spatial size set by `variant` (0 = as is)."""
    target, task, args, kwargs = template["input"]
    args = json.loads(json.dumps(args))
    shape = args[0][1]
    shape[0] = 1 + (shape[0] - 1 + variant) % BATCHES
    shape[3] = shape[3] + variant // BATCHES
    return [target, task, args, kwargs]


def generate(n_lines: int, workloads: int, seed: int) -> Iterator[str]:
    """The log's lines: `workloads` sessions of about n_lines / workloads lines each."""
    rng = random.Random(seed)
    pool = templates()
    timestamp = 1.6e9
    base, extra = divmod(n_lines, workloads)
    for i in range(workloads):
        template = pool[i % len(pool)]
        inp = varied(template, i // len(pool))
        config = template["config"]
        cost = min(template["result"][0]) if template["result"][1] == 0 else 1e-3
        for j in range(base + (1 if i < extra else 0)):
            timestamp += 1.0
            failed = rng.random() < FAILURE_RATE
            costs = [1e9] if failed else [cost * rng.uniform(0.9, 3.0)]
            record = {
                "input": inp,
                "config": {**config, "index": config["index"] + j},
                "result": [costs, 4 if failed else 0, rng.uniform(0.5, 4.0), timestamp],
                "version": template.get("version", 0.2),
                "tvm_version": template.get("tvm_version", "0.8.dev0"),
            }
            yield json.dumps(record)


def write_log(n_lines: int, workloads: int, out: Path, seed: int) -> None:
    """Write the log to `out` in chunks (memory stays small)."""
    with out.open("w") as f:
        chunk: list[str] = []
        for line in generate(n_lines, workloads, seed):
            chunk.append(line)
            if len(chunk) >= WRITE_CHUNK:
                f.write("\n".join(chunk) + "\n")
                chunk.clear()
        if chunk:
            f.write("\n".join(chunk) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    """Command line: N WORKLOADS OUT [--seed S]."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("n", type=int)
    parser.add_argument("workloads", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args(argv)
    write_log(args.n, args.workloads, args.out, args.seed)


if __name__ == "__main__":
    main()
