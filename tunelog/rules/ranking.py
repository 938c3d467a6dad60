"""Top-k ranking: a (target, workload)'s best distinct configs, for `export --top-k`.

`export --top-k` reads records in `RANK_ORDER_SQL` order and keeps each slot's first records
of distinct configs (`takes_config`), from the kept configs or every valid record.

Each config is ranked by its best valid record, and configs by (mean cost, record id): the
earliest of equal means first, as the best-record rule ranks slot holders. The importer keeps
each (target, workload)'s best configs of a file in a `TopConfigs` and merges them with the
stored ones by `better_config` / `best_configs` (store.groupstate); the table is filled from
records by the same ranking in SQL (store.migrations_tables.fill_top_configs, frozen with
migration 4); tests/test_rules.py runs every case through all three.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

Rank = tuple[float, int]  # (mean cost, record id): smaller ranks first

# `Rank` as SQL: the ORDER BY that lists records (or kept configs) best first, `{id}` the
# record id's column. `export --top-k` and `store.removal` rank with it; tests/test_rules.py
# holds it equal to sorting by `Rank`.
RANK_ORDER_SQL = "mean_cost, {id}"


def takes_config(seen: set[int], index: int, k: int) -> bool:
    """Whether a slot's top `k` take a record of config `index`, records offered best first
    (`RANK_ORDER_SQL`): the first record of each config, until `k` configs (`seen`: those
    taken, updated)."""
    if len(seen) < k and index not in seen:
        seen.add(index)
        return True
    return False


def better_config(candidates: dict[int, Rank], index: int, rank: Rank) -> None:
    """Offer a valid record (`rank`) of config `index`: a config keeps its best record."""
    known = candidates.get(index)
    if known is None or rank < known:
        candidates[index] = rank


def best_configs(candidates: Mapping[int, Rank], k: int) -> list[tuple[Rank, int]]:
    """The `k` best configs, best first: `((mean, record id), config index)`."""
    return sorted((rank, index) for index, rank in candidates.items())[:k]


class TopConfigs:
    """The `kept` best configs of a sequence of valid records offered in id order (a file's
    records of one (target, workload)), in memory bounded by `kept`."""

    __slots__ = ("bound", "ids", "kept", "means")

    def __init__(self, kept: int) -> None:
        self.kept = kept
        # Per config index, its best record so far (two dicts of scalars rather than one of
        # tuples: nothing for the garbage collector to traverse). Set and deleted together,
        # so both hold the same keys in the same order.
        self.means: dict[int, float] = {}
        self.ids: dict[int, int] = {}
        # Once configs were forgotten, the mean a record must beat to rank (see `_forget`).
        self.bound = math.inf

    def __bool__(self) -> bool:
        return bool(self.means)

    def offer(self, index: int, mean: float, record_id: int) -> None:
        """A valid record of config `index`, offered after every record of a smaller id: as
        it comes later, it ranks before a record of the same mean only if strictly smaller."""
        if mean < self.bound:
            means = self.means
            known = means.get(index)
            if known is None or mean < known:
                means[index] = mean
                self.ids[index] = record_id
                if len(means) > 4 * self.kept:
                    self._forget()

    def _forget(self) -> None:
        """Forget all but the `kept` best configs. A config forgotten was beaten by that many
        others, which only get better, so it cannot rank at the end; nor can a record that
        does not beat the last config kept (`bound`): a later record of equal mean ranks
        after it."""
        best = self.ranked()
        self.means = {index: mean for (mean, _), index in best}
        self.ids = {index: record_id for (_, record_id), index in best}
        self.bound = best[-1][0][0]

    def ranked(self) -> list[tuple[Rank, int]]:
        """The `kept` best configs, best first: `((mean, record id), config index)`."""
        means, ids = self.means, self.ids
        ranks = zip(means.values(), ids.values(), strict=True)
        return sorted(zip(ranks, means, strict=True))[: self.kept]

    def kept_record_ids(self) -> list[int]:
        """The best record of each of the `kept` best configs, in no order."""
        return list(self.kept_configs()[1])

    def kept_configs(self) -> tuple[Iterable[int], Iterable[int], Iterable[float]]:
        """The `kept` best configs as columns, in no order: config indexes, record ids, means
        (the ones known as they are when they are no more than `kept`: nothing to sort)."""
        means = self.means
        if len(means) <= self.kept:
            return means.keys(), self.ids.values(), means.values()
        best = self.ranked()
        return (
            [index for _, index in best],
            [rid for (_, rid), _ in best],
            [mean for (mean, _), _ in best],
        )

    def merged(self, stored: dict[int, Rank]) -> list[tuple[Rank, int]]:
        """The `kept` best configs of these and of `stored` (configs ranked before, changed
        in place), best first."""
        for index, rid, mean in zip(*self.kept_configs(), strict=True):
            better_config(stored, index, (mean, rid))
        return best_configs(stored, self.kept)
