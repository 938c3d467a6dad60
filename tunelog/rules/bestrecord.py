"""The best-record rule: which of two valid records holds a slot (ApplyHistoryBest).

TVM offers the records in file order and replaces a slot's holder only for a strictly smaller
mean cost, so of equal means the earlier record keeps the slot. Record ids grow in file order
(also across files), so the rule needs no order of offers: the smaller (mean, id) wins. That
lets the importer offer a batch's best records in any order, batch after batch.
"""

from __future__ import annotations

import operator
from collections.abc import Callable


def beats(mean: float, record_id: int, holder_mean: float, holder_id: int) -> bool:
    """Whether a record (`mean`, `record_id`) takes a slot held by (`holder_mean`, `holder_id`).

    Strictly smaller mean wins; of equal means the earlier record (smaller id) wins. A NaN
    mean never wins, as in TVM (`holder > nan` is false).
    """
    return holder_mean > mean or (holder_mean == mean and record_id < holder_id)


# Whether a record offered after the best so far (in file order) replaces it:
# `improves(mean, best_mean)` is `mean < best_mean` (a NaN mean never improves).
# The comparison itself, a C function: the importer asks it once per valid record, and a
# Python function around `<` cost a frame a line.
improves: Callable[[float, float], bool] = operator.lt


# The same rule as one upsert per (slot, offer): the importer and merging apply it to the
# `slots` table (kind, name, workload_id, record_id, mean_cost) without reading holders first.
OFFER_SLOT_SQL = """INSERT INTO slots (kind, name, workload_id, record_id, mean_cost)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (kind, name, workload_id) DO UPDATE
                    SET record_id = excluded.record_id, mean_cost = excluded.mean_cost
                    WHERE excluded.mean_cost < slots.mean_cost
                       OR (excluded.mean_cost = slots.mean_cost
                           AND excluded.record_id < slots.record_id)"""
