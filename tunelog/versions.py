"""The record kinds the store files workloads under (`workloads.version`): AutoTVM's log versions
("0.1", "0.2"), auto_scheduler and MetaSchedule.

Their one home: tunelog.ansor and tunelog.selection re-export them, and commands that only
compare a stored version with them (export, the listings of layers) import them from here
without loading those modules (json, hashlib, orjson).
"""

from __future__ import annotations

# AutoTVM's log versions. TVM >= 0.7 skips v0.1 lines (TVM <= 0.6 wrote and read them), so a
# v0.1 record answers only an old TVM.
V01 = "0.1"
V02 = "0.2"
# auto_scheduler records: their own "v" stays in the line, and v0.4 and v0.6 records of one
# workload compete for one slot.
ANSOR_VERSION = "ansor"
METASCHEDULE_VERSION = "metaschedule"  # MetaSchedule JSONDatabase records
# The task name of every MetaSchedule workload; its arguments are the module's identity, then
# what it computes (tunelog.msmodule.summary_args).
METASCHEDULE_TASK = "metaschedule"
