"""Line accounting: every line read is counted exactly once.

`lines + split == new + duplicates + discarded + comments + blank + rejected`. With
`--repair`, a line holding k records run together counts k entries (`split` = k - 1). A
stored source has nothing discarded (a file `--strict` rolled back is not stored), so its row
in `sources` keeps `lines + split = records + duplicates + comments + blank + rejected`, the
SQL below. The importer (store.importer) counts the lines as it reads them; merging moves a
source's counts to another database (`duplicates_when_moved`).
"""

from __future__ import annotations


def entries(
    new: int, duplicates: int, discarded: int, comments: int, blank: int, rejected: int
) -> int:
    """The entries the lines were counted as (a split line counts once per record)."""
    return new + duplicates + discarded + comments + blank + rejected


def is_accounted(
    lines: int,
    split: int,
    *,
    new: int,
    duplicates: int,
    discarded: int,
    comments: int,
    blank: int,
    rejected: int,
) -> bool:
    """True when every line read is counted exactly once."""
    return lines + split == entries(new, duplicates, discarded, comments, blank, rejected)


def duplicates_when_moved(records: int, duplicates: int, new: int) -> int:
    """A source's duplicates after its record entries (`records` stored and `duplicates`) were
    imported elsewhere and `new` of them were new there: the rest are duplicates there."""
    return records + duplicates - new


# `duplicates_when_moved(records, duplicates, 0)` over a source's columns: a copy of a file
# (the same bytes at another path) holds each of its lines as a duplicate (store.knownfiles).
ALL_DUPLICATES_SQL = "records + duplicates"

# The same check on a stored source, for queries over `sources`.
SOURCE_ACCOUNTED_SQL = "lines + split = records + duplicates + comments + blank + rejected"


def repaired_text(repaired: int, split: int) -> str:
    """What `--repair` did to a file, as the import and `sources` tables note it: the records
    it recovered and, when some were run together on a line, how many more records than lines
    that makes (so that the table's counts add up: lines + split = records + dup + ...)."""
    if not repaired:
        return ""
    text = f"repaired {repaired} record(s)"
    return text + f" (+{split}: several on one line)" if split else text
