"""Trial sequences for convergence and knob analysis, read from the records table.

Convergence needs only ids, sources, errors, costs and timestamps, all columns of `records`:
no stored line is decompressed. Knob values are in the lines only, so `layer_trials(...,
with_lines=True)` reads the blocks holding the requested records and no others (LineReader
reads in id order, each block about once).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from tunelog.convergence import Progress, SourceRun
from tunelog.store.codec import LineReader
from tunelog.store.database import Store

K = TypeVar("K", bound=Hashable)


def trial_runs(store: Store, group_of: Mapping[int, K]) -> dict[tuple[K, int], list[SourceRun]]:
    """Per (target group, workload id): each source's run of trials, summarised.

    `group_of` maps a target id to its group; trials of targets in one group form one sequence.
    One pass over the records table in id order (its rowid order, no sort), keeping per
    (group, workload, source) only a `Progress` and the run's start.
    """
    runs: dict[tuple[K, int, int], SourceRun] = {}
    with store.snapshot():
        rows = store.conn.execute(
            "SELECT source_id, target_id, workload_id, error_no, mean_cost, timestamp "
            "FROM records ORDER BY id"
        )
        for source_id, target_id, workload_id, error_no, mean_cost, timestamp in rows:
            key = (group_of[target_id], workload_id, source_id)
            run = runs.get(key)
            if run is None:
                run = runs[key] = SourceRun(source_id, timestamp, Progress())
            elif timestamp < run.start:
                run.start = timestamp
            run.progress.add(mean_cost, error_no)
    found: dict[tuple[K, int], list[SourceRun]] = {}
    for (group, workload_id, _), run in runs.items():
        found.setdefault((group, workload_id), []).append(run)
    return found


@dataclass(frozen=True, slots=True)
class TrialRow:
    """One stored record of a layer: where it comes from and what it measured."""

    record_id: int
    source_id: int
    source: str
    line: int
    target_id: int
    workload_id: int
    config_index: int
    error_no: int
    mean_cost: float
    timestamp: float
    raw: bytes | None  # the original line, when asked for


def layer_trials(
    store: Store,
    workload_ids: Sequence[int],
    target_ids: Sequence[int],
    *,
    with_lines: bool = False,
    extra_ids: Sequence[int] = (),
) -> list[TrialRow]:
    """The records of these workloads on these targets (plus `extra_ids`), in id order."""
    wids = ",".join(str(int(i)) for i in workload_ids) or "NULL"
    tids = ",".join(str(int(i)) for i in target_ids) or "NULL"
    xids = ",".join(str(int(i)) for i in extra_ids) or "NULL"
    with store.snapshot():
        rows = store.conn.execute(
            f"""SELECT r.id, r.source_id, s.path, r.line, r.target_id, r.workload_id,
                       r.config_index, r.error_no, r.mean_cost, r.timestamp
                FROM records r JOIN sources s ON s.id = r.source_id
                WHERE (r.workload_id IN ({wids}) AND r.target_id IN ({tids}))
                   OR r.id IN ({xids})
                ORDER BY r.id"""
        ).fetchall()
        reader = LineReader(store.conn) if with_lines else None
        found: list[TrialRow] = []
        for rid, sid, path, line, tid, wid, index, error_no, cost, timestamp in rows:
            raw = reader.line(rid) if reader is not None else None
            found.append(
                TrialRow(rid, sid, path, line, tid, wid, index, error_no, cost, timestamp, raw)
            )
        return found


def targets(store: Store) -> list[tuple[int, str]]:
    """Every (target id, target string)."""
    return [(int(i), str(t)) for i, t in store.conn.execute("SELECT id, target FROM targets")]
