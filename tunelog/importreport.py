"""What an import reports: FileReport and its RejectedLines (also names of tunelog.models).

Apart from tunelog.models, which every command loads, so that commands that neither import
nor list rejected lines do not create these dataclasses (about a millisecond of start-up).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tunelog.plaindata import Dumpable as _Dumpable
from tunelog.rules.lineaccounting import is_accounted

__all__ = ["FileReport", "RejectedLine"]


@dataclass(slots=True)
class RejectedLine(_Dumpable):
    """A line that was not imported, and why (line WHOLE_FILE: no line of the file could be)."""

    line: int
    reason: str


WHOLE_FILE = 0


# How the reject of a damaged compressed stream starts (`unreadable input after line 40: ...`):
# stored with the source, so that importing the file again can say it is damaged.
DAMAGED_REJECT = "unreadable input"


def damaged_text(reason: str) -> str:
    """`FileReport.damaged` from its reject's reason: where reading stopped, and why."""
    return "unreadable" + reason.removeprefix(DAMAGED_REJECT)


@dataclass(slots=True)
class FileReport(_Dumpable):
    """What importing one file did.

    Every line is counted once (`accounted`, the rule in tunelog.rules.lineaccounting):
    `lines + split == new + duplicates + discarded + comments + blank + rejected`
    (`split`: the extra records `--repair` found run together in one line). A resumed
    import counts only the lines it read (after `skipped_lines`). `repaired` counts the
    records recovered by `--repair`. `discarded` counts the new records of a file that
    `--strict` rolled back (nothing of it is stored).
    """

    path: str
    lines: int = 0
    split: int = 0
    new: int = 0
    duplicates: int = 0
    discarded: int = 0
    comments: int = 0
    blank: int = 0
    rejected: int = 0
    repaired: int = 0
    rejects: list[RejectedLine] = field(default_factory=list)
    sha256: str | None = None
    source_id: int | None = None
    already_imported_as: str | None = None
    rolled_back: bool = False
    # Resumed imports (a file grown since it was imported from the same path): the counts
    # above are for the lines read; `skipped_lines` earlier lines were not read again.
    skipped_lines: int = 0
    # Bytes of an unterminated last line left for the next import (`follow`: a tuner mid-write).
    held_back_bytes: int = 0
    # The file no longer starts with the bytes imported from its path before: read in full.
    prefix_changed: bool = False
    # Why the entry could not be read at all (it vanished, is unreadable, a dangling symlink,
    # an unreadable directory); None for a file read. Such an entry counts no line.
    unreadable: str | None = None
    # Why reading stopped early: a compressed stream found damaged (a CRC error, truncated)
    # after some lines were read. Those lines count; the lines before may be garbled.
    damaged: str | None = None
    # The damage was found after the stream gave the lines read (a failed CRC, invalid data):
    # any of them may be garbled, so nothing of the file is kept (`rolled_back`).
    garbled: bool = False
    # Sources of the same bytes imported before without --repair that held only rejected
    # lines: this --repair import read them, so they were removed (`#id`).
    superseded: list[int] = field(default_factory=list)
    # Imported again with another --label: the source now has this import's label.
    relabelled: bool = False
    # Bytes imported before (`already_imported_as`): the records their source holds (a read
    # with the other --repair setting, counted above, may find none: a log all the same).
    held_before: int = 0
    # The records file of a MetaSchedule database (read with its workload file).
    metaschedule: bool = False
    # Its database's workloads that no record names (TVM compiles them with no tuned
    # schedule); None when not known: not such a file, or not read whole.
    workloads_without_records: int | None = None
    # What each of them computes (`main: 16x16 -> 16x16 float32`).
    unrecorded_workloads: list[str] = field(default_factory=list)
    # Its workload file's lines TVM cannot read (`line N: why`): TVM's JSONDatabase refuses
    # the whole database over one, named by a record or not.
    workload_problems: list[str] = field(default_factory=list)
    # Bytes a source holds as read with the other --repair setting (`already_imported_as`):
    # this read's rejects ("use --repair") are no fault of the database's.
    other_repair: bool = False

    @property
    def repair_hint(self) -> str | None:
        """The first rejected line's reason that `--repair` would recover (typographic
        quotes, records run together, ...), if any: what to say of a file that holds no
        record as it is."""
        return next((r.reason for r in self.rejects if "--repair" in r.reason), None)

    @property
    def accounted(self) -> bool:
        """True when every line read is counted exactly once."""
        return is_accounted(
            self.lines,
            self.split,
            new=self.new,
            duplicates=self.duplicates,
            discarded=self.discarded,
            comments=self.comments,
            blank=self.blank,
            rejected=self.rejected,
        )
