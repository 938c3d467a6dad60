"""Why auto_scheduler's ApplyHistoryBest found no record for a workload it named ("Cannot find
tuned schedules"): the rule, beside `diagnosis`' for AutoTVM's templates."""

from __future__ import annotations

import json

from tunelog.diagnoses import (
    ALL_FAILED,
    ANSWERED,
    NO_RECORD,
    OTHER_TARGET,
    Diagnosis,
    diagnosis_of,
    group_of,
    seconds_text,
)
from tunelog.errorcodes import error_name
from tunelog.layers import query
from tunelog.recordindex import RecordIndex, reaches
from tunelog.targets import Target
from tunelog.tvmmessages import Workload, as_json_list


def classify_ansor(index: RecordIndex, asked: Target, workload: Workload) -> Diagnosis:
    """An auto_scheduler workload (its key's items) auto_scheduler's ApplyHistoryBest found no
    record for: answered by the database (the same slots as AutoTVM's: model, then keys), all
    its records on reachable targets failed, tuned only on targets it never asks, or none."""
    from tunelog.selection import ansor_workload

    key_hash, args = ansor_workload(json.dumps(as_json_list(workload)))
    wid = index.ansor.get((key_hash, args))
    if wid is None:
        return diagnosis_of(
            asked,
            workload,
            NO_RECORD,
            f"no auto_scheduler record of this workload (key {key_hash}) for any target: tune "
            "its task",
        )
    holder = query(index.slots, group_of(asked), wid)
    if holder is not None:
        detail = (
            f"auto_scheduler's ApplyHistoryBest answers it: the record at "
            f"{index.show_path(holder.source)}:{holder.line} ({seconds_text(holder.mean_cost)}, "
            f"tuned on {holder.target}); a build that said otherwise read another file: "
            f"export this database (tunelog export --for-target '{asked.raw}' tuned.log) and "
            "build with that"
        )
        return diagnosis_of(asked, workload, ANSWERED, detail)
    counts: dict[int, int] = {}
    elsewhere: set[str] = set()
    for target_id, by_error in index.recorded[wid].by_target.items():
        parsed = index.parsed(target_id)
        if reaches(asked, parsed):
            for error_no, records in by_error.items():
                counts[error_no] = counts.get(error_no, 0) + records
        else:
            elsewhere.add(parsed.raw)
    if counts:  # reachable records, none valid (a valid one would hold a slot asked)
        failed = ", ".join(f"{error_name(e)} x{n}" for e, n in sorted(counts.items()))
        detail = f"every auto_scheduler record of it on targets this one asks failed ({failed})"
        return diagnosis_of(asked, workload, ALL_FAILED, detail)
    named = sorted(elsewhere)
    detail = (
        f"tuned only under {', '.join(named[:3])}{' and more' if len(named) > 3 else ''}; "
        f"this target asks model {asked.model} and keys {','.join(asked.keys)}, never theirs: "
        "tune on this device"
    )
    return diagnosis_of(asked, workload, OTHER_TARGET, detail)
