"""`best`'s rows, streamed: one ordered query over the slots and their records, with the
workloads and the tallies read alongside in the same (workload id) order.

No slot, workload or tally is held in Python beyond the workload being written: the query
sorts only narrow rows (slot label, record, ids), and the wide workload text (arguments) is
read once per workload by its primary key, not carried through the sort once per slot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from tunelog.rules.slots import SLOT_LABEL_SQL
from tunelog.versions import ANSOR_VERSION

if TYPE_CHECKING:
    from tunelog.models import BestRow

# json (not orjson: a table of `best` loads it only for its rows' arguments), tunelog.models,
# the machines' rules and the codec (xxhash, for --knobs) are imported where they are used.


def each_best_row(
    conn: sqlite3.Connection,
    where: str,
    params: Sequence[Any],
    *,
    for_target: str | None = None,
    knobs: bool = False,
    as_written: bool = False,
    args_only_without_shapes: bool = False,
) -> Iterator[BestRow]:
    """The slot winners the WHERE clause over `slots s JOIN records r` keeps, one BestRow per
    (workload, winning record), in (workload id, record id) order, a workload's rows yielded
    as its last record's slots end (their warnings judged together).

    `for_target`: the target string every row's machine warning is judged against (else the
    targets that measured the workload and compete for one of the row's slots). `as_written`:
    an auto_scheduler row's `args` with the structure its key is written with, instead of
    the flattened tuple that is its identity (see `args_as_written`).
    `args_only_without_shapes`: a row with `shapes` (its workload's stored short text) comes
    with empty `args`, for a table that shows `shapes` (decoding every row's arguments was a
    sixth of `best`).
    """
    import json

    from tunelog.models import BestRow

    # No BEGIN: a connection stays in one read transaction while a statement is pending, so
    # the tables read below, once this query has a row, are of its state; and a generator
    # dropped after the store is closed has no transaction to end.
    rows = conn.execute(
        f"""SELECT {SLOT_LABEL_SQL}, r.id, r.workload_id, r.target_id, r.config_index,
                   r.mean_cost, r.source_id, r.line
            FROM slots s JOIN records r ON r.id = s.record_id
            {where}
            ORDER BY r.workload_id, r.id, s.kind DESC, s.name""",
        params,
    )
    first = next(rows, None)
    if first is None:
        return
    targets = _Targets(conn)
    paths = {int(i): str(p) for i, p in conn.execute("SELECT id, path FROM sources")}
    workloads = _Workloads(conn)
    tallies = _Tallies(conn, targets)
    warnings = _MachineWarnings(for_target)
    # Without a filter, a workload's rows are every slot it holds: who answers each target
    # is known from them, no slot looked up (see _HeldSlots).
    every_slot = not where.strip()
    reader = None
    if knobs:
        from tunelog.store.codec import LineReader

        reader = LineReader(conn)
    pending: BestRow | None = None  # a record's slots are consecutive rows
    held: list[BestRow] = []  # the rows of the workload read, warned about when it ends
    measured = _Measured((), {})
    for label, record_id, workload_id, target_id, config_index, mean_cost, source_id, line in chain(
        (first,), rows
    ):
        if pending is not None:
            if pending.record_id == record_id:
                pending.slots.append(label)
                continue
            held.append(pending)
            if workload_id != held[0].workload_id:
                yield from warnings.of(held, measured.targets, _HeldSlots(conn, held, every_slot))
                held = []
        _, task_name, template_key, args_text, version, shapes = workloads.of(workload_id)
        measured = tallies.of(workload_id)
        target, group = targets.of[target_id]
        if version == ANSOR_VERSION:
            shapes = None  # shown from its key's items (`args`)
        args: list[object] = []
        if not args_only_without_shapes or shapes is None:
            args = json.loads(args_text)
            if as_written and version == ANSOR_VERSION:
                # the winning line's own key, else its workload's (the first seen)
                args = own_args(conn, record_id, task_name, args) or args_as_written(
                    conn, task_name, args
                )
        pending = BestRow(
            slots=[label],
            target=target,
            task_name=task_name,
            template_key=template_key,
            args=args,
            config_index=config_index,
            mean_cost=mean_cost,
            source=paths[source_id],
            line=line,
            log_version=version,
            record_id=record_id,
            trials=measured.trials.get(group),  # type: ignore[arg-type]
            knobs=_knobs(reader.line(record_id)) if reader is not None else None,
            shapes=shapes,
            workload_id=workload_id,
        )
    if pending is not None:
        held.append(pending)
        yield from warnings.of(held, measured.targets, _HeldSlots(conn, held, every_slot))


class _Targets:
    """Each target id's string and (keys, model) group: the few targets, read once."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.of: dict[int, tuple[str, tuple[str, str]]] = {
            int(i): (str(target), (str(keys), str(model)))
            for i, target, keys, model in conn.execute(
                "SELECT id, target, keys, model FROM targets"
            )
        }


class _Workloads:
    """The workloads' columns `best` shows, read in id order alongside the rows."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._rows = conn.execute(
            """SELECT id, task_name, template_key, args, version, shapes
               FROM workloads ORDER BY id"""
        )
        self._found: tuple[int, str, str, str, str, str | None] = (-1, "", "", "", "", None)

    def of(self, workload_id: int) -> tuple[int, str, str, str, str, str | None]:
        """(id, task name, template key, args JSON, version, shapes) of a workload; ids asked
        never decrease."""
        found = self._found
        while found[0] < workload_id:
            found = next(self._rows)
        self._found = found
        return found


class _Measured:
    """One workload's tallies: the targets that measured it (sorted), its trials per
    (keys, model) group (every record, valid or failed, as `best` counts them)."""

    __slots__ = ("targets", "trials")

    def __init__(self, targets: tuple[str, ...], trials: dict[tuple[str, str], int]) -> None:
        self.targets = targets
        self.trials = trials


class _Tallies:
    """The tallies, summed per (workload, target) and read in workload id order alongside
    the rows: a workload's are gathered when it is first asked about."""

    def __init__(self, conn: sqlite3.Connection, targets: _Targets) -> None:
        self._targets = targets.of
        self._rows = conn.execute(
            """SELECT workload_id, target_id, sum(records) FROM tallies
               GROUP BY workload_id, target_id ORDER BY workload_id"""
        )
        self._next: tuple[int, int, int] | None = next(self._rows, None)
        self._id = -1
        self._found = _Measured((), {})

    def of(self, workload_id: int) -> _Measured:
        """The workload's tallies; ids asked never decrease."""
        if workload_id == self._id:
            return self._found
        names: list[str] = []
        trials: dict[tuple[str, str], int] = {}
        following = self._next
        while following is not None and following[0] <= workload_id:
            if following[0] == workload_id:
                name, group = self._targets[following[1]]
                names.append(name)
                trials[group] = trials.get(group, 0) + following[2]
            following = next(self._rows, None)
        self._next = following
        self._id, self._found = workload_id, _Measured(tuple(sorted(names)), trials)
        return self._found


class _MachineWarnings:
    """The warnings of `best`'s rows whose winner another machine measured than a target
    asked about.

    Asked about: the --for-target string (whose answers are the rows), or else every target
    that measured the same workload and whose query the row's record answers (a target of
    another model competes for the row's key slots, but its own model slot, when held,
    answers it first: `rules.slots.first_held` over `query_slots`). Each (asked targets,
    slots, winner's target) is judged once, the answers per workload.
    """

    def __init__(self, for_target: str | None) -> None:
        self._for_target = for_target
        self._judged: dict[
            tuple[tuple[str, ...], tuple[str, ...], str], tuple[tuple[str, str], ...]
        ] = {}
        self._orders: dict[str, list[tuple[str, str]]] = {}

    def of(self, rows: list[BestRow], measured: tuple[str, ...], held: _HeldSlots) -> list[BestRow]:
        """One workload's rows, each with its warnings; `measured`: the targets with tallies
        of the workload, sorted; `held`: its slots."""
        for row in rows:
            key = (measured if self._for_target is None else (), tuple(row.slots), row.target)
            found = self._judged.get(key)
            if found is None:
                found = self._judged[key] = self._judge(row.target, key[1], measured)
            row.warnings = [
                warning
                for asked, warning in found
                if self._for_target is not None or self._answer(asked, held) == row.record_id
            ]
        return rows

    def _judge(
        self, winner: str, slots: tuple[str, ...], measured: tuple[str, ...]
    ) -> tuple[tuple[str, str], ...]:
        from tunelog.machines import cross_machine_warning
        from tunelog.rules.slots import competes_for_labels
        from tunelog.targets import parse_target

        if self._for_target is not None:
            asked = [self._for_target]
        else:
            asked = [t for t in measured if competes_for_labels(parse_target(t), slots)]
        found = ((target, cross_machine_warning(target, winner)) for target in asked)
        return tuple((target, warning) for target, warning in found if warning is not None)

    def _answer(self, target: str, held: _HeldSlots) -> int | None:
        """The record answering `target` (a stored target string) for the workload."""
        from tunelog.rules.slots import first_held, query_slots
        from tunelog.targets import parse_target

        order = self._orders.get(target)
        if order is None:
            parsed = parse_target(target)
            order = self._orders[target] = query_slots(parsed.keys, parsed.model)
        return first_held(order, held)


class _HeldSlots:
    """One workload's slots as `first_held` reads them, (kind, name) -> record id: those of
    its rows at once; any other, when the rows may not be all of them (a filter chose
    them), read when asked, through the primary key."""

    def __init__(self, conn: sqlite3.Connection, rows: list[BestRow], every_slot: bool) -> None:
        from tunelog.rules.slots import slot_label

        self._conn = conn
        self._label = slot_label
        self._rows = rows
        self._holders: dict[str, int] | None = None  # made when a row may warn
        self._every_slot = every_slot

    def get(self, slot: tuple[str, str], /) -> int | None:
        """The record holding the slot, or None."""
        holders = self._holders
        if holders is None:
            holders = self._holders = {
                label: row.record_id for row in self._rows for label in row.slots
            }
        holder = holders.get(self._label(*slot))
        if holder is not None or self._every_slot:
            return holder
        found = self._conn.execute(
            "SELECT record_id FROM slots WHERE kind = ? AND name = ? AND workload_id = ?",
            (*slot, self._rows[0].workload_id),
        ).fetchone()
        return None if found is None else int(found[0])


def own_args(
    conn: sqlite3.Connection, record_id: int, task_name: str, args: list[object]
) -> list[object] | None:
    """An auto_scheduler record's arguments as its own key writes them, when its key is not
    spelled as its workload's (migration 16) and is a spelling of (`task_name`, `args`), the
    workload asked about (a row of another database's ids names another record); else None."""
    import json

    from tunelog.selection import ansor_workload

    found = conn.execute(
        """SELECT t.spelling FROM record_spellings rs JOIN spelling_texts t
           ON t.id = rs.spelling_id WHERE rs.record_id = ?""",
        (record_id,),
    ).fetchone()
    if found is None:
        return None
    try:
        head, identity = ansor_workload(found[0])
    except ValueError:  # AnsorKeyError: a key TVM could not use
        return None
    if head != task_name or json.loads(identity) != args:
        return None
    return _items_after_hash(found[0])


def _items_after_hash(spelling: str) -> list[object] | None:
    """The items of an auto_scheduler key as written after its hash; None when the key is
    no JSON list with a hash."""
    import json

    try:
        items = json.loads(spelling)
    except ValueError:
        return None
    return items[1:] if isinstance(items, list) and items else None


def args_as_written(conn: sqlite3.Connection, task_name: str, args: list[object]) -> list[object]:
    """An auto_scheduler workload's arguments as its key was first written: the items after
    the hash of a workload of this task name (the key's hash) whose flattened arguments are
    `args`, or `args` when no spelling of it reads as a list. Several workloads with equal
    arguments: the last one's, by id.

    Its identity is the flattened tuple, which says nothing of which number belongs to which
    tensor; the key as written (`[[1, 64, 56, 56], [128, 64, 3, 3], ...]`) does.
    """
    import json

    from tunelog.rules.workloadidentity import sorted_json

    wanted = sorted_json(args)
    found = args
    for stored_args, spelling in conn.execute(
        """SELECT args, spelling FROM workloads
           WHERE task_name = ? AND version = ? AND spelling IS NOT NULL ORDER BY id""",
        (task_name, ANSOR_VERSION),
    ):
        if sorted_json(json.loads(stored_args)) != wanted:
            continue
        items = _items_after_hash(spelling)
        if items is not None:
            found = items
    return found


def _knobs(raw: bytes) -> list[list[object]] | None:
    from tunelog.recordmodels import TuningRecord
    from tunelog.records import parse_line

    parsed = parse_line(raw)
    if isinstance(parsed, TuningRecord):
        return [[name, value] for name, _type, value in parsed.entity]
    return None
