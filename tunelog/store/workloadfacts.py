"""The per-workload facts of migration 12: written once per workload, read by every query.

`workloads.summary.facts_of` computes them (pure); here they are stored in, and read back from,
the `workloads` table's `layer_key`, `facts`, `family`, `shapes` and `flops` columns.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence

from tunelog.workloadinfo import WorkloadFacts, decoded_json

# The columns a reader selects after a workload's own ones, in `decoded`'s order.
FACT_COLUMNS = "layer_key, facts, family, shapes, flops"
FILL_PAGE = 2048  # workloads read and written at a time by `fill_workload_facts`
# `json.dumps(facts, separators=(",", ":"))` without a new encoder per call (the import
# writes one text per workload it adds).
_FACTS_TEXT = json.JSONEncoder(separators=(",", ":")).encode


def fill_workload_facts(conn: sqlite3.Connection) -> int:
    """Compute and store the facts of every workload that has none yet; how many were filled.

    Called at the end of each file's import transaction (the importer stores a new
    workload's facts with it, or has the worker process compute them, `store.factsbeside`:
    this finds none unless the worker left some unanswered or an older tunelog added
    workloads) and once after migration 12. Finding no such workload costs one look at a
    partial index. Read and written a page of workloads at a time, so memory does not grow
    with their number.
    """
    filled = 0
    after = 0
    while True:
        rows = conn.execute(
            """SELECT id, task_name, template_key, args, version, spelling FROM workloads
               WHERE layer_key IS NULL AND id > ? ORDER BY id LIMIT ?""",
            (after, FILL_PAGE),
        ).fetchall()
        if not rows:
            return filled
        updates = [(*columns_of(*row), int(row[0])) for row in rows]
        conn.executemany(
            "UPDATE workloads SET layer_key = ?, facts = ?, family = ?, shapes = ?, flops = ? "
            "WHERE id = ?",
            updates,
        )
        filled += len(updates)
        after = int(rows[-1][0])


def columns_of(
    workload_id: int, task: str, template_key: str, args: str, version: str, spelling: str | None
) -> tuple[str, str, str, str, str | None]:
    """The facts columns of a workload from its own columns (`args`: canonical JSON)."""
    return encoded(computed(task, template_key, args, version, spelling))


def computed(
    task: str, template_key: str, args: str, version: str, spelling: str | None
) -> WorkloadFacts:
    """A workload's facts read from its arguments (canonical JSON), as the import stores them."""
    from tunelog.workloads.summary import facts_of  # the argument readers: writers only

    # json.loads' parser called directly (its Python layers cost a third of what parsing does).
    return facts_of(task, template_key, decoded_json(args), version, spelling)


def encoded(facts: WorkloadFacts) -> tuple[str, str, str, str, str | None]:
    """The column values of a workload's facts."""
    return (
        facts.layer_key,
        _FACTS_TEXT(dict(facts.facts)),
        facts.family,
        facts.shapes,
        None if facts.flops is None else str(facts.flops),
    )


class FactsReader:
    """Facts from the `FACT_COLUMNS` values, each distinct `facts` text decoded once.

    Workloads of one operator and layout that differ only in a size the strategy conditions
    do not test share their facts text (8k texts for 40k workloads in the 80k benchmark): they
    share one mapping, which `layers` uses to judge relay's conditions once for them all.
    """

    def __init__(self) -> None:
        self._parsed: dict[str, Mapping[str, object]] = {}

    def __call__(
        self,
        task: str,
        template_key: str,
        args: str,
        version: str,
        spelling: str | None,
        row: Sequence[object],
    ) -> WorkloadFacts:
        """A workload's facts from its `FACT_COLUMNS` values (`row`), after its own columns.

        A workload whose facts were never filled (written by an older tunelog into a database
        this one has open) has them computed from its arguments.
        """
        layer_key, facts, family, shapes, flop = row
        if layer_key is None:
            return computed(task, template_key, args, version, spelling)
        text = str(facts)
        parsed = self._parsed.get(text)
        if parsed is None:
            # Tuples (a convolution's padding) come back from JSON as lists.
            parsed = self._parsed[text] = {
                name: tuple(value) if isinstance(value, list) else value
                for name, value in json.loads(text).items()
            }
        return WorkloadFacts(
            layer_key=str(layer_key),
            facts=parsed,
            family=str(family),
            shapes=str(shapes),
            flops=None if flop is None else int(str(flop)),
        )
