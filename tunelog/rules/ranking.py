"""Top-k ranking: a (target, workload)'s best distinct configs, for `export --top-k`.

Each config is ranked by its best valid record, and configs by (mean cost, record id): the
earliest of equal means first, as the best-record rule ranks slot holders. The importer keeps
TOP_CONFIGS_KEPT configs per (target, workload) this way (store.importer) and the table is
filled from records by the same ranking in SQL (store.schema.fill_top_configs);
tests/test_rules.py runs every case through both.
"""

from __future__ import annotations

from collections.abc import Mapping

Rank = tuple[float, int]  # (mean cost, record id): smaller ranks first


def better_config(candidates: dict[int, Rank], index: int, rank: Rank) -> None:
    """Offer a valid record (`rank`) of config `index`: a config keeps its best record."""
    known = candidates.get(index)
    if known is None or rank < known:
        candidates[index] = rank


def best_configs(candidates: Mapping[int, Rank], k: int) -> list[tuple[Rank, int]]:
    """The `k` best configs, best first: `((mean, record id), config index)`."""
    return sorted((rank, index) for index, rank in candidates.items())[:k]
