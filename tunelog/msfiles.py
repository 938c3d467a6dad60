"""Which files of a directory form a MetaSchedule JSONDatabase: a file's kind by its first
line, and each records file's workload file (tvm-reference §9).

Pure (reads file heads and names; no SQLite). TVM is given both files' paths; tunelog finds the
pair: by name, else by what is beside them (`metaschedule_files`).
"""

from __future__ import annotations

import re
from pathlib import Path

METASCHEDULE_RECORD_FILE = "database_tuning_record.json"
METASCHEDULE_WORKLOAD_FILE = "database_workload.json"
METASCHEDULE_RECORDS = "records"
METASCHEDULE_WORKLOADS = "workloads"
_MS_RECORD_START = re.compile(rb"\[\s*-?\d+\s*,\s*\[")
_MS_WORKLOAD_START = re.compile(rb'\[\s*"')


def metaschedule_kind(path: Path) -> str | None:
    """`records` or `workloads` for the files of a MetaSchedule database (by their first line)."""
    try:
        with open(path, "rb") as file:
            head = file.read(64)
    except OSError:
        return None
    head = head.lstrip()
    if _MS_RECORD_START.match(head):
        return METASCHEDULE_RECORDS
    if _MS_WORKLOAD_START.match(head):
        return METASCHEDULE_WORKLOADS
    return None


def metaschedule_files(path: Path) -> tuple[Path, Path | None] | None:
    """(records file, its workload file or None) of the database PATH belongs to; None if none.

    The partner of a file is, among the files of the other kind's content beside it: the one
    named as PATH with the kinds' words swapped (`a_records.json` / `a_workloads.json`,
    `x_tuning_record.json` / `x_workload.json`: two databases may share a directory), else
    the default-named one, else the only one (several and none of those names: unknown), if
    no other file beside it is named as its partner (it is another database's). A
    workload file without a records file belongs to no database worth reading (None).
    """
    kind = metaschedule_kind(path)
    if kind is None:
        return None
    if kind == METASCHEDULE_RECORDS:
        return path, _partner(path, METASCHEDULE_WORKLOADS, METASCHEDULE_WORKLOAD_FILE)
    records = _partner(path, METASCHEDULE_RECORDS, METASCHEDULE_RECORD_FILE)
    return None if records is None else (records, path)


# The words that name a file's kind, as (records, workloads) spellings, longest first: the
# partner of `a_records.json` is `a_workloads.json`, of `database_tuning_record.json`
# `database_workload.json`.
_KIND_WORDS = (("tuning_record", "workload"), ("records", "workloads"), ("record", "workload"))


def _partner(path: Path, kind: str, default_name: str) -> Path | None:
    found = [
        p
        for p in sorted(path.parent.iterdir())
        if p != path and p.is_file() and metaschedule_kind(p) == kind
    ]
    names = {p.name: p for p in found}
    for records_word, workloads_word in _KIND_WORDS:
        mine, theirs = (
            (records_word, workloads_word)
            if kind == METASCHEDULE_WORKLOADS
            else (workloads_word, records_word)
        )
        if mine in path.name and path.name.replace(mine, theirs) in names:
            return names[path.name.replace(mine, theirs)]
    # Not by name: the default-named one, else the only one, unless another file of PATH's
    # kind is named as its partner (the other database's file beside it: pairing the two
    # read one database's records against another's modules).
    if default_name in names and not _named_partner_beside(names[default_name], kind, path):
        return names[default_name]
    if len(found) == 1 and not _named_partner_beside(found[0], kind, path):
        return found[0]
    if not found and kind == METASCHEDULE_WORKLOADS:
        # A workload file whose first line is unreadable is not known by its content: by its
        # name, then (its lines that cannot be read are the records' rejects, one by one, not
        # "no workload file beside it" of a database that has one).
        for named in _swapped_names(path.name):
            if (path.parent / named).is_file() and named != path.name:
                return path.parent / named
        fallback = path.parent / default_name
        if fallback.is_file() and not _named_partner_beside(fallback, kind, path):
            return fallback
    return None


def _named_partner_beside(candidate: Path, kind: str, path: Path) -> bool:
    """Whether a file beside `candidate` (of `kind`), other than `path`, is named as its
    partner (`_KIND_WORDS`) and has the other kind's content, and `path` is no earlier copy
    of that file (a database's files only grow: a copy kept before starts as it starts, and
    TVM reads it against the same partner)."""
    if kind == METASCHEDULE_WORKLOADS:
        own_kind, swaps = METASCHEDULE_RECORDS, [(w, r) for r, w in _KIND_WORDS]
    else:
        own_kind, swaps = METASCHEDULE_WORKLOADS, list(_KIND_WORDS)
    for mine, theirs in swaps:
        if mine in candidate.name:
            named = candidate.parent / candidate.name.replace(mine, theirs)
            if named != path and named.is_file() and metaschedule_kind(named) == own_kind:
                return _first_line(path) != _first_line(named)
    return False


def _first_line(path: Path) -> bytes | None:
    """The file's first line, read up to 1 MiB (a workload line may be long); None if unread."""
    try:
        with open(path, "rb") as file:
            return file.readline(1 << 20).rstrip(b"\r\n")
    except OSError:
        return None


def workload_file_named_for(records_name: str) -> str:
    """The workload file name a records file called `records_name` pairs with first: its name
    with the kinds' words swapped (`_KIND_WORDS`), else the default one."""
    return next(iter(_swapped_names(records_name)), METASCHEDULE_WORKLOAD_FILE)


def _swapped_names(name: str) -> list[str]:
    """The workload file names a records file called `name` pairs with (`_KIND_WORDS`)."""
    return [
        name.replace(records, workloads) for records, workloads in _KIND_WORDS if records in name
    ]
