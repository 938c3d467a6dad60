"""Trial sequences for convergence and knob analysis.

Convergence reads the `trial_runs` table the importer keeps (schema migration 8; each run's
`convergence.run_marks` beside it since migration 15), not the
records: no stored line is decompressed, and a million records cost nothing extra. Knob values
are in the lines only, so `layer_trials(..., with_lines=True)` reads the blocks holding the
requested records and no others (LineReader reads in id order, each block about once).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from tunelog.convergence import (
    Convergence,
    Progress,
    SourceRun,
    is_best_only,
    is_best_only_total,
    join_runs,
    marked_summary,
)
from tunelog.store.database import Store

if TYPE_CHECKING:
    from tunelog.store.codec import LineReader

K = TypeVar("K", bound=Hashable)


def trial_runs(store: Store, group_of: Mapping[int, K]) -> dict[tuple[K, int], list[SourceRun]]:
    """Per (target group, workload id): each source's run of trials, summarised.

    `group_of` maps a target id to its group; trials of targets in one group form one sequence.
    Read from `trial_runs`, kept on import per (source, target, workload): no record is read,
    except where one source holds trials of several targets of a group for one workload (their
    trials interleave): those records are read in id order (`scan_trial_runs`).
    """
    return dict(each_trial_run(store, group_of))


def each_trial_run(
    store: Store, group_of: Mapping[int, K]
) -> Iterator[tuple[tuple[K, int], list[SourceRun]]]:
    """`trial_runs`' entries one workload at a time (only one workload's rows held)."""
    with store.snapshot():
        best_only = best_only_sources(store)
        rows = store.conn.execute(_RUNS_BY_WORKLOAD)
        for workload_id, same in itertools.groupby(_with_steps(rows), _workload_of):
            yield from _runs_of(store, workload_id, list(same), group_of, best_only)


_RUNS_BY_WORKLOAD = """SELECT source_id, target_id, workload_id, trials, valid, start, first_id,
                              last_id, improvements FROM trial_runs
                       ORDER BY workload_id, source_id, target_id"""


def best_only_sources(store: Store) -> set[int]:
    """The sources that are best-only files (`convergence.is_best_only`): the listings' and
    `curve`'s verdicts say BEST_ONLY of a sequence whose every trial is theirs."""
    return {
        source_id
        for source_id, trials, sequences in store.conn.execute(
            "SELECT source_id, SUM(trials), COUNT(*) FROM trial_runs GROUP BY source_id"
        )
        if is_best_only_total(trials, sequences)
    }


def convergence_by_group(
    store: Store, group_of: Mapping[int, K]
) -> dict[tuple[K, int], Convergence]:
    """Per (target group, workload id): its convergence summary (`convergence.join_runs` of
    `trial_runs`' entries), the runs of the targets `group_of` maps only.

    Each stored run is summarised from its columns, its marks among them
    (`convergence.marked_summary`: no improvements decoded, no SourceRun or Progress built),
    read in the table's own order (nothing sorted). The (group, workload)s of several runs
    (sources, or targets of one group) are then joined from their runs as `each_trial_run`
    gives them: their workloads' runs are read again in workload order, or, when they are
    more than one workload in JOINED_SHARE, every run is (one sort of the whole table costs
    less than finding that many workloads' runs).
    """
    found: dict[tuple[K, int], Convergence] = {}
    joined: set[int] = set()  # the workloads of a (group, workload) of several runs
    workloads: set[int] = set()
    with store.snapshot():
        best_only = best_only_sources(store)
        for (
            source_id,
            target_id,
            workload_id,
            trials,
            valid,
            to_best,
            cost,
            last,
        ) in store.conn.execute(_MARKED_RUNS):
            group = group_of.get(target_id)
            if group is None:  # a target left out (`--target`)
                continue
            key = (group, workload_id)
            if key in found:
                joined.add(workload_id)
            workloads.add(workload_id)
            found[key] = marked_summary(
                trials, valid, (to_best, cost, last), best_only=source_id in best_only
            )
        if not joined:
            return found
        if len(joined) * JOINED_SHARE > len(workloads):
            rows = store.conn.execute(_RUNS_BY_WORKLOAD)
        else:
            rows = store.conn.execute(_RUNS_OF_WORKLOADS, (json.dumps(sorted(joined)),))
        for workload_id, same in itertools.groupby(_with_steps(rows), _workload_of):
            if workload_id in joined:
                kept = [run for run in same if run[0][1] in group_of]
                for key, runs in _runs_of(store, workload_id, kept, group_of, best_only):
                    found[key] = join_runs(runs)
    return found


JOINED_SHARE = 4


# Each run's counts and marks (schema migration 15), in primary-key order.
_MARKED_RUNS = """SELECT source_id, target_id, workload_id, trials, valid, to_best, best_cost,
                         last_significant FROM trial_runs
                  ORDER BY source_id, target_id, workload_id"""
# `_RUNS_BY_WORKLOAD` of the workloads in a JSON list.
_RUNS_OF_WORKLOADS = """SELECT source_id, target_id, workload_id, trials, valid, start, first_id,
                               last_id, improvements FROM trial_runs
                        WHERE workload_id IN (SELECT value FROM json_each(?))
                        ORDER BY workload_id, source_id, target_id"""


RUNS_READ = 1024  # trial_runs rows read, and their improvements decoded, at a time


def _with_steps(rows: sqlite3.Cursor) -> Iterator[tuple[tuple[Any, ...], list[list[Any]]]]:
    """Each row with its `improvements` decoded: `[[trial, cost], ...]`.

    A chunk of rows' values decoded as one JSON array (80k rows at 80k workloads: one
    json.loads each costs three times more; a stored value is always one JSON array,
    `codec.improvements_text`)."""
    while chunk := rows.fetchmany(RUNS_READ):
        steps: list[list[list[Any]]] = json.loads("[" + ",".join(row[8] for row in chunk) + "]")
        yield from zip(chunk, steps, strict=True)


def _workload_of(row_and_steps: tuple[tuple[Any, ...], list[list[Any]]]) -> int:
    return int(row_and_steps[0][2])


def _runs_of(
    store: Store,
    workload_id: int,
    rows: Sequence[tuple[tuple[Any, ...], list[list[Any]]]],
    group_of: Mapping[int, K],
    best_only: set[int],
) -> Iterator[tuple[tuple[K, int], list[SourceRun]]]:
    """One workload's (group, workload) entries from its rows (one per source and target),
    each with its improvements decoded."""
    if len(rows) == 1:  # the usual: one source's run on one target
        (source_id, target_id, _, trials, valid, start, _, _, _), steps = rows[0]
        run = SourceRun(source_id, start, _progress(trials, valid, steps))
        run.best_only = source_id in best_only
        yield (group_of[target_id], workload_id), [run]
        return
    parts: dict[tuple[K, int], list[tuple[tuple[Any, ...], list[list[Any]]]]] = {}
    for row, steps in rows:  # by (group, source)
        parts.setdefault((group_of[row[1]], row[0]), []).append((row, steps))
    found: dict[tuple[K, int], list[SourceRun]] = {}
    for (group, source_id), runs in parts.items():
        if len(runs) == 1:
            (_, _, _, trials, valid, start, _, _, _), steps = runs[0]
            run = SourceRun(source_id, start, _progress(trials, valid, steps))
        else:
            run = _interleaved_run(store, source_id, workload_id, [row for row, _ in runs])
        run.best_only = source_id in best_only
        found.setdefault((group, workload_id), []).append(run)
    yield from found.items()


def _progress(trials: int, valid: int, steps: list[list[Any]]) -> Progress:
    """A stored run's progress from its `trial_runs` columns (`steps`: its improvements)."""
    return Progress(trials, valid, [(n, c) for n, c in steps])


def _interleaved_run(
    store: Store, source_id: int, workload_id: int, runs: Sequence[tuple[Any, ...]]
) -> SourceRun:
    """One source's run of a group whose trials come from several targets, read in id order."""
    targets = ",".join(str(int(r[1])) for r in runs)
    progress = Progress()
    with store.snapshot():
        for error_no, mean in store.conn.execute(
            # Another source's records may lie between (a file imported again when grown).
            f"""SELECT error_no, mean_cost FROM records
                WHERE id BETWEEN ? AND ? AND workload_id = ? AND target_id IN ({targets})
                AND source_id = ? ORDER BY id""",
            (min(r[6] for r in runs), max(r[7] for r in runs), workload_id, source_id),
        ):
            progress.add(mean, error_no)
    return SourceRun(source_id, min(r[5] for r in runs), progress)


def scan_trial_runs(
    store: Store, group_of: Mapping[int, K]
) -> dict[tuple[K, int], list[SourceRun]]:
    """`trial_runs` computed from every record in id order (what the table must agree with)."""
    runs: dict[tuple[K, int, int], SourceRun] = {}
    sequences: dict[tuple[int, int, int], int] = {}  # (source, target, workload) -> trials
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
            sequence = (source_id, target_id, workload_id)
            sequences[sequence] = sequences.get(sequence, 0) + 1
    counts: dict[int, list[int]] = {}
    for (source_id, _, _), trials in sequences.items():
        counts.setdefault(source_id, []).append(trials)
    found: dict[tuple[K, int], list[SourceRun]] = {}
    for (group, workload_id, source_id), run in runs.items():
        run.best_only = is_best_only(counts[source_id])
        found.setdefault((group, workload_id), []).append(run)
    return found


# A NamedTuple, not a frozen dataclass: one dataclass less to create (~0.5 ms) per layer listing.
class TrialRow(NamedTuple):
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
        reader: LineReader | None = None
        if with_lines:  # the codec loads xxhash: convergence alone reads no line
            from tunelog.store.codec import LineReader

            reader = LineReader(store.conn)
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
