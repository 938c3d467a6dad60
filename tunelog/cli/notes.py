"""Warnings on stderr that a listing's rows carry, the first WARNINGS_SHOWN of them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from tunelog.cli.output import _err

if TYPE_CHECKING:
    from tunelog.layers import Layer, TemplateResult


WARNINGS_SHOWN = 10  # per command run; the rest are counted (all of them are in --json)
DIFFERENCES_SHOWN = 3  # machine differences named in the cross-machine warning


def _no_answer(template: TemplateResult) -> str:
    """Why a template of a layer has no best: not offered, answered by a v0.1 record that
    TVM >= 0.7 skips (`TemplateResult.skipped_v01`), or none of its records answers."""
    if not template.offered:
        return "not offered to this target"
    return "skipped by TVM >= 0.7" if template.skipped_v01 else "untuned"


def _warn_layers(found: Sequence[Layer], *, listed_by: str) -> None:
    """Cross-machine warnings on stderr (stdout stays the table)."""
    notes = LayerNotes()
    for _ in notes.noted(iter(found)):
        pass
    notes.warn(listed_by=listed_by)


class LayerNotes:
    """The strategy notes and warnings of layers written one at a time, said at the end."""

    def __init__(self, *, untuned_by: str | None = None) -> None:
        """`untuned_by`: also say how many layers only v0.1 records answer, and that this
        command (`tunelog untuned` with the listing's filters) lists them (`untuned` passes
        None: it lists them itself)."""
        self.strategy_notes: set[str] = set()
        self.warnings: list[str] = []
        self.untuned_by = untuned_by
        self.v01_only = 0  # layers TVM >= 0.7 compiles with a fallback config all the same

    def noted(self, found: Iterator[Layer]) -> Iterator[Layer]:
        """`found`, each layer's notes and warnings kept as it passes."""
        # A layer's strategy note is its group's keys' (`Layer.strategy_note`): asked once per
        # keys, not per layer (80k layers at 80k workloads, a few dozen keys).
        from tunelog.rules.untuned import answered_only_by_v01

        keys_seen: set[tuple[str, ...]] = set()
        count_v01 = self.untuned_by is not None
        for lay in found:
            keys = lay.group.keys
            if keys not in keys_seen:
                keys_seen.add(keys)
                note = lay.strategy_note
                if note is not None:
                    self.strategy_notes.add(note)
            if count_v01 and answered_only_by_v01(lay):
                self.v01_only += 1
            if lay.warnings:
                self.warnings += (
                    f"{lay.group.label} {lay.family} {lay.shapes}: {w}" for w in lay.warnings
                )
            yield lay

    def warn(self, *, listed_by: str) -> None:
        """The notes, then the cross-machine warnings, on stderr (stdout stays the table)."""
        for note in sorted(self.strategy_notes):
            _err(f"note: {note}")
        if self.v01_only:
            _err(
                f"note: {self.v01_only} layer(s) are answered only by v0.1 records, which "
                f"TVM >= 0.7 skips: it compiles them with a fallback config (`{self.untuned_by}` "
                "lists them among the untuned layers; `export --include-v01` keeps the records "
                "for an older TVM)"
            )
        _warn_all(self.warnings, listed_by=listed_by)


def _warn_all(notes: Sequence[str], *, listed_by: str) -> None:
    """Warnings on stderr: answers from another machine grouped into one line with a count
    (`listed_by`: the command whose --json lists each); the first WARNINGS_SHOWN others, then
    how many more there are."""
    from tunelog.machines import CROSS_MACHINE_ADVICE, cross_machine_differences

    crossed: dict[str, int] = {}
    others: list[str] = []
    for note in notes:
        differences = cross_machine_differences(note)
        if differences is None:
            others.append(note)
        else:
            crossed[differences] = crossed.get(differences, 0) + 1
    if sum(crossed.values()) == 1:  # one: said in full
        others = list(notes)
        crossed = {}
    for note in others[:WARNINGS_SHOWN]:
        _err(f"warning: {note}")
    if len(others) > WARNINGS_SHOWN:
        _err(f"warning: {len(others) - WARNINGS_SHOWN} more warning(s) (`{listed_by}` lists them)")
    if crossed:
        # The most frequent first; a database of many devices has a hundred of them.
        ranked = sorted(crossed.items(), key=lambda item: -item[1])
        shown = ranked[:DIFFERENCES_SHOWN]
        counts = ", ".join(f"{d.replace('; ', ' and ')} x{n}" for d, n in shown)
        if len(ranked) > len(shown):
            counts += f", and {len(ranked) - len(shown)} other differences"
        _err(
            f"warning: {sum(crossed.values())} answers were measured on another machine than "
            f"the target asked about ({counts}): {CROSS_MACHINE_ADVICE}; "
            f"`{listed_by}` lists each under `warnings`"
        )
