"""Selecting records by source, label and exact target; removing a source as if never imported."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import tunelog
from tests.conftest import (
    CORPUS,
    EDGE,
    REPO,
    SAMPLE_LOGS,
    X86,
    assert_run_marks_kept,
    assert_tallies_match_records,
    require_shared,
    runner,
)
from tunelog import api
from tunelog.cli import app
from tunelog.exceptions import SourceNotFoundError, UnknownSourceError
from tunelog.store import Store

SHORT = SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz"


def _short_plain(tmp_path: Path) -> Path:
    path = tmp_path / "short.log"
    path.write_bytes(gzip.decompress(SHORT.read_bytes()))
    return path


def _state(store: Store, tmp_path: Path, name: str) -> dict[str, object]:
    """Everything a user sees, without ids: exports, slots, layers, tallies, stats."""
    out = tmp_path / f"{name}.log"
    top = tmp_path / f"{name}.top3.log"
    if store.has_slot_winners():
        api.export(store, str(out))
        api.export(store, str(top), top_k=3)
    stats = store.stats().model_dump()
    stats.pop("sources")
    return {
        "export": out.read_bytes() if out.exists() else b"",
        "top3": top.read_bytes() if top.exists() else b"",
        "slots": sorted(
            (h.kind, h.name, h.workload_json, h.line, h.config_index, h.mean_cost)
            for h in store.slot_holders()
        ),
        "layers": sorted(json.dumps(api.layer_as_dict(lay)) for lay in api.layers(store)),
        "tallies": sorted(
            store.conn.execute(
                """SELECT t.target, w.task_name, w.args, c.error_no, c.records, c.min_all_cost,
                          c.max_all_cost
                   FROM tallies c JOIN targets t ON t.id = c.target_id
                   JOIN workloads w ON w.id = c.workload_id"""
            ).fetchall()
        ),
        "targets": sorted(t for (t,) in store.conn.execute("SELECT target FROM targets")),
        "stats": stats,
    }


def _imported(path: Path, logs: list[Path]) -> Store:
    store = Store(path)
    for log in logs:
        tunelog.import_paths(store, [str(log)])
    return store


@pytest.mark.parametrize("removed", [0, 1, 2])
def test_removing_a_source_equals_never_having_imported_it(tmp_path: Path, removed: int) -> None:
    logs = [X86, EDGE, _short_plain(tmp_path)]
    with _imported(tmp_path / "all.db", logs) as store:
        (gone,) = api.remove_sources(store, str(removed + 1))
        assert gone.path == str(logs[removed])
        after = _state(store, tmp_path, "after")
        assert_tallies_match_records(store.conn)
        assert_run_marks_kept(store.conn)
        holes = store.conn.execute(
            """SELECT count(*) FROM records r WHERE NOT EXISTS
               (SELECT 1 FROM content_hashes h WHERE h.record_id = r.id)"""
        ).fetchone()[0]
        assert holes == 0
        assert store.conn.execute("SELECT count(*) FROM content_hashes").fetchone()[0] == (
            store.stats().records
        )
    kept = [log for n, log in enumerate(logs) if n != removed]
    with _imported(tmp_path / "never.db", kept) as never:
        assert after == _state(never, tmp_path, "never")


def test_removing_then_importing_again_stores_the_file_anew(tmp_path: Path) -> None:
    with _imported(tmp_path / "a.db", [X86, EDGE]) as store:
        before = _state(store, tmp_path, "before")
        api.remove_sources(store, "1")
        (report,) = tunelog.import_paths(store, [str(X86)])
        assert report.new == 200 and report.already_imported_as is None
        assert store.stats().records == before["stats"]["records"]  # type: ignore[index]


def test_a_line_shared_with_a_later_source_stays_with_it(tmp_path: Path) -> None:
    """A source is the lines its file held: removing the first of two overlapping files keeps
    the lines the later one also held, as if the first had never been imported."""
    lines = X86.read_bytes().splitlines(keepends=True)
    first = tmp_path / "first.log"
    grown = tmp_path / "grown.log"
    first.write_bytes(b"".join(lines[:50]))
    grown.write_bytes(b"".join(lines[:80]))
    with _imported(tmp_path / "s.db", [first, grown]) as store:
        (removed,) = api.remove_sources(store, "1")
        assert removed.records == 0  # every line it held, the grown file held too
        assert store.stats().records == 80
        (source,) = store.sources()
        assert (source.records, source.duplicates, source.held, source.shared) == (80, 0, 80, 0)
        after = _state(store, tmp_path, "after")
        (again,) = tunelog.import_paths(store, [str(grown)])
        assert (again.new, again.already_imported_as) == (0, f"#2 {grown}")
    with _imported(tmp_path / "never.db", [grown]) as never:
        assert after == _state(never, tmp_path, "never")


def test_remove_by_label_removes_every_source_with_it(tmp_path: Path) -> None:
    with Store(tmp_path / "l.db") as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)], label="box1")
        tunelog.import_paths(store, [str(SHORT)], label="box2")
        removed = api.remove_sources(store, "box1")
        assert [r.id for r in removed] == [1, 2]
        assert [s.label for s in store.sources()] == ["box2"]
        with pytest.raises(UnknownSourceError, match="no imported source"):
            api.remove_sources(store, "box1")


def test_a_dry_run_lists_what_remove_would_take_and_removes_nothing(tmp_path: Path) -> None:
    # A label names every file imported with it: `sources remove box1` took both at once.
    db = str(tmp_path / "l.db")
    with Store(db) as store:
        tunelog.import_paths(store, [str(X86), str(EDGE)], label="box1")
        tunelog.import_paths(store, [str(SHORT)], label="box2")
        assert [s.id for s in api.sources_to_remove(store, "box1")] == [1, 2]
        before = store.sources()
    result = runner.invoke(app, ["--db", db, "sources", "remove", "box1", "--dry-run"])
    assert (result.exit_code, result.stdout) == (0, (
        f"would remove #1 {X86.relative_to(REPO)} (box1): it held 200 record line(s)\n"
        f"would remove #2 {EDGE.relative_to(REPO)} (box1): it held 9 record line(s)\n"
    ))  # fmt: skip
    assert result.stderr == (
        "nothing removed (--dry-run); a record a remaining source also holds would stay\n"
    )
    with Store(db) as store:
        assert store.sources() == before


def test_a_removed_sources_id_is_never_given_to_another_file(tmp_path: Path) -> None:
    # SQLite gave the newest source's id to the next file: `sources remove 2` in a script then
    # named another file.
    with Store(tmp_path / "i.db") as store:
        tunelog.import_paths(store, [str(X86)])
        tunelog.import_paths(store, [str(EDGE)])
        api.remove_sources(store, "2")
        tunelog.import_paths(store, [str(SHORT)])
        copy = tmp_path / "copy.log"  # known bytes at another path: a source of its own
        copy.write_bytes(X86.read_bytes())
        tunelog.import_paths(store, [str(copy)])
        assert [s.id for s in store.sources()] == [1, 3, 4]
        with pytest.raises(SourceNotFoundError):
            api.find_source(store, "2")


# -- filters -------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("filters", "sources"),
    [
        (tunelog.Filters(source="1"), {"x86_mini_llvm.log"}),
        (tunelog.Filters(source="sample_logs/edge_cases.log"), {"edge_cases.log"}),
        (tunelog.Filters(label="short"), {"x86_mini_short_timeouts.log.gz"}),
        (tunelog.Filters(source="3", label="short"), {"x86_mini_short_timeouts.log.gz"}),
    ],
)
def test_source_and_label_filters_select_the_records_of_those_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filters: tunelog.Filters, sources: set[str]
) -> None:
    monkeypatch.chdir(REPO)
    with Store(tmp_path / "f.db") as store:
        tunelog.import_paths(store, ["sample_logs/x86_mini_llvm.log", "sample_logs/edge_cases.log"])
        tunelog.import_paths(store, ["sample_logs/x86_mini_short_timeouts.log.gz"], label="short")
        rows = store.best(filters)
        found = api.layers(store, filters)
    assert rows and {Path(r.source).name for r in rows} == sources
    # The layers shown are those of the selected files alone.
    with Store(tmp_path / "alone.db") as alone:
        tunelog.import_paths(alone, [f"sample_logs/{name}" for name in sorted(sources)])
        expected = {(lay.group.label, lay.key) for lay in api.layers(alone)}
    assert {(lay.group.label, lay.key) for lay in found} == expected


def test_target_filter_is_an_exact_string(tmp_path: Path) -> None:
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(EDGE)])
        exact = "cuda -model=t4"
        rows = store.best(tunelog.Filters(target=exact))
        by_model = store.best(tunelog.Filters(model="t4"))
        found = api.layers(store, tunelog.Filters(target=exact))
        nothing = store.best(tunelog.Filters(target="cuda  -model=t4"))
    assert rows and {r.target for r in rows} == {exact}
    assert {r.target for r in by_model} > {exact}
    assert found and all(lay.group.model == "t4" for lay in found)
    assert nothing == []


def test_an_unknown_source_is_one_error_line(tmp_path: Path) -> None:
    from tunelog.cli import app

    db = str(tmp_path / "e.db")
    runner.invoke(app, ["--db", db, "import", str(X86)])
    result = runner.invoke(app, ["--db", db, "workloads", "--source", "9"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: no imported source matches source '9': see `tunelog sources` for ids, "
        "paths and labels\n"
    )
    result = runner.invoke(app, ["--db", db, "sources", "remove", "1"])
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == f"removed #1 {X86}: 200 record(s)\n"


@pytest.mark.slow
def test_removing_a_corpus_log_then_exporting_equals_never_importing_it(tmp_path: Path) -> None:
    require_shared()
    tophub = CORPUS / "tophub"
    logs = [tophub / "cuda_v0.10.log", tophub / "adreno_v0.02.log", tophub / "opencl_v0.04.log"]
    with _imported(tmp_path / "all.db", logs) as store:
        api.remove_sources(store, "2")
        after = _state(store, tmp_path, "after")
    with _imported(tmp_path / "never.db", [logs[0], logs[2]]) as never:
        assert after == _state(never, tmp_path, "never")
