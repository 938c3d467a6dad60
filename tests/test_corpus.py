"""Every file of ../shared/corpus imports without a traceback and with exact accounting."""

from __future__ import annotations

from pathlib import Path

import pytest

import tunelog
from tests.conftest import (
    CORPUS,
    assert_run_marks_kept,
    assert_tallies_match_records,
    require_shared,
)
from tunelog.store import Store


def _corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        p
        for p in CORPUS.rglob("*")
        if p.is_file() and "_tools" not in p.parts and not _read_with_its_records(p)
    )


def _read_with_its_records(path: Path) -> bool:
    # A MetaSchedule workload file is imported with the records file beside it.
    return (
        path.name == "database_workload.json"
        and (path.parent / "database_tuning_record.json").is_file()
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", _corpus_files(), ids=[str(p.relative_to(CORPUS)) for p in _corpus_files()]
)
def test_corpus_file_imports_with_exact_accounting(path: Path, tmp_path: Path) -> None:
    require_shared()
    with Store(tmp_path / "c.db") as store:
        (report,) = tunelog.import_paths(store, [str(path)])
        assert report.accounted
        assert report.lines == len(path.read_bytes().splitlines())
        assert store.stats().records == report.new
        assert_tallies_match_records(store.conn)
        assert_run_marks_kept(store.conn)


def test_the_debug_text_file_is_rejected_line_by_line_and_others_still_import(
    tmp_path: Path,
) -> None:
    require_shared()
    text = CORPUS / "dan-zheng__cs590-project/baseline/conv2d_c12_itervar_n100_full.txt"
    log = CORPUS / "generated/x86_mini_llvm.log"
    with Store(tmp_path / "c.db") as store:
        bad, good = tunelog.import_paths(store, [str(text), str(log)])
    assert bad.new == 0 and bad.rejected == bad.lines - bad.blank == 720
    assert all(r.reason for r in bad.rejects)
    assert good.new == 200


@pytest.mark.slow
def test_importing_the_corpus_twice_leaves_the_record_count_unchanged(tmp_path: Path) -> None:
    require_shared()
    with Store(tmp_path / "c.db") as store:
        tunelog.import_paths(store, [str(CORPUS / "tophub"), str(CORPUS / "generated")])
        first = store.stats().records
        again = tunelog.import_paths(store, [str(CORPUS / "tophub"), str(CORPUS / "generated")])
        assert store.stats().records == first
        assert sum(r.new for r in again) == 0
        assert_tallies_match_records(store.conn)
        assert_run_marks_kept(store.conn)
