"""tunelog's MetaSchedule answers against a real apache-tvm JSONDatabase.

The databases in tests/data/metaschedule_real were tuned by apache-tvm (tests/realtvm/
make_fixtures.py) and `answers.json` holds what its JSONDatabase answered for each workload
line: `get_top_k(5)` and `query_tuning_record`, as record line numbers. The comparisons with
those recorded answers run without TVM; the ones that load tunelog's exports into TVM skip
without it (CI installs it).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import DATA, runner
from tunelog.api import export_metaschedule
from tunelog.exceptions import MixedTvmVersionsError
from tunelog.filters import Filters
from tunelog.metaschedule import Workload, read_workloads
from tunelog.selection import metaschedule_mean
from tunelog.store import Store

REAL = DATA / "metaschedule_real"
ANSWERS: dict[str, list[dict[str, Any]]] = json.loads((REAL / "answers.json").read_text())
CASES = sorted(ANSWERS)
RECORDS = "database_tuning_record.json"


def _identities(directory: Path) -> list[str]:
    found = read_workloads(directory)
    assert all(isinstance(w, Workload) for w in found)
    return [w.identity for w in found if isinstance(w, Workload)]


def _record_numbers(directory: Path) -> dict[bytes, int]:
    """Each record line, without its workload index, -> its 0-based line number."""
    numbers: dict[bytes, int] = {}
    for number, line in enumerate((directory / RECORDS).read_bytes().splitlines()):
        numbers.setdefault(line.split(b",", 1)[1], number)
    return numbers


def _exported(tmp_path: Path, case: str, top_k: int) -> Path:
    out = tmp_path / f"{case}_top{top_k}"
    with Store(tmp_path / f"{case}.db") as store:
        (report,) = tunelog.import_paths(store, [str(REAL / case)])
        assert report.accounted and report.rejected == 0
        export_metaschedule(store, str(out), top_k=top_k)
    return out


def _exported_per_workload(tmp_path: Path, case: str, top_k: int) -> dict[str, list[int]]:
    """Workload identity -> the original line numbers of the records the export kept."""
    out = _exported(tmp_path, case, top_k)
    identities = _identities(out)
    numbers = _record_numbers(REAL / case)
    kept: dict[str, list[int]] = {}
    for line in (out / RECORDS).read_bytes().splitlines():
        index, rest = line.split(b",", 1)
        kept.setdefault(identities[int(index.lstrip(b"["))], []).append(numbers[rest])
    return kept


def _ranked(case: str, numbers: list[int]) -> list[int]:
    """Record line numbers in get_top_k's order: mean run time, then file order."""
    lines = (REAL / case / RECORDS).read_text().splitlines()

    def mean(number: int) -> float:
        return metaschedule_mean(json.loads(lines[number])[1][1])

    return sorted(numbers, key=lambda n: (mean(n), n))


@pytest.mark.parametrize("case", CASES)
def test_the_best_record_is_get_top_k_1_of_the_real_database(tmp_path: Path, case: str) -> None:
    identities = _identities(REAL / case)
    with Store(tmp_path / "ms.db") as store:
        tunelog.import_paths(store, [str(REAL / case)])
        best = {row.args[0]: row.line - 1 for row in store.best()}
    for identity, answer in zip(identities, ANSWERS[case], strict=True):
        assert best.get(identity) == (answer["top"][0] if answer["top"] else None)
        assert answer["query"] == best.get(identity)


@pytest.mark.slow
@pytest.mark.parametrize("top_k", [1, 2, 5])
@pytest.mark.parametrize("case", CASES)
def test_the_top_k_export_keeps_get_top_k_of_the_real_database(
    tmp_path: Path, case: str, top_k: int
) -> None:
    kept = _exported_per_workload(tmp_path, case, top_k)
    for identity, answer in zip(_identities(REAL / case), ANSWERS[case], strict=True):
        assert _ranked(case, kept.get(identity, [])) == answer["top"][:top_k]


def test_the_fixtures_hold_both_rule_cases() -> None:
    """No schedule rules: the fastest record starts with EnterPostproc and TVM answers another;
    renamed buffers: two workload lines that are one workload."""
    lines = [json.loads(line) for line in (REAL / "no_rules" / RECORDS).open()]
    measured = [n for n, line in enumerate(lines) if line[1][1] != [1e10]]
    fastest = _ranked("no_rules", measured)[0]
    assert lines[fastest][1][0][0][0][0] == "EnterPostproc"
    (answer,) = ANSWERS["no_rules"]
    assert answer["top"] and fastest not in answer["top"]
    first, second = _identities(REAL / "renamed")
    assert first == second
    texts = [json.loads(line)[1] for line in (REAL / "renamed" / "database_workload.json").open()]
    assert texts[0] != texts[1]
    assert ANSWERS["renamed"][0] == ANSWERS["renamed"][1] and ANSWERS["renamed"][0]["top"]


# -- with apache-tvm installed ------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_the_recorded_answers_are_what_this_tvm_answers(case: str) -> None:
    pytest.importorskip("tvm")
    from tests.realtvm.oracle import answers_of

    assert answers_of(REAL / case) == ANSWERS[case]


@pytest.mark.parametrize("top_k", [1, 3])
@pytest.mark.parametrize("case", CASES)
def test_tvm_answers_the_same_from_the_export(tmp_path: Path, case: str, top_k: int) -> None:
    pytest.importorskip("tvm")
    from tests.realtvm.oracle import answers_of

    out = _exported(tmp_path, case, top_k)
    exported_lines = (out / RECORDS).read_bytes().splitlines()
    numbers = _record_numbers(REAL / case)
    original = [numbers[line.split(b",", 1)[1]] for line in exported_lines]
    for answer, expected in zip(answers_of(out, REAL / case), ANSWERS[case], strict=True):
        assert [original[n] for n in answer["top"]] == expected["top"][:top_k]
        query = answer["query"]
        assert (None if query is None else original[query]) == expected["query"]


def _workload_files() -> list[Path]:
    files = [REAL / case / "database_workload.json" for case in CASES]
    return [*files, DATA / "metaschedule_gmm" / "database_workload.json"]


@pytest.mark.parametrize("path", _workload_files(), ids=lambda p: p.parent.name)
def test_the_flops_are_what_tvm_estimates_from_the_tir(path: Path) -> None:
    pytest.importorskip("tvm")
    from tvm.s_tir.analysis import estimate_tir_flops

    from tests.realtvm.oracle import modules

    for module, workload in zip(modules(path.parent), read_workloads(path), strict=True):
        assert isinstance(workload, Workload) and workload.summary is not None
        assert workload.summary.flops == (int(estimate_tir_flops(module)) or None)


# -- databases of two TVM releases --------------------------------------------------------------

OTHER_RELEASE = REAL / "other_release"  # tuned by apache-tvm 0.26.0


def test_databases_of_two_releases_warn_and_are_exported_one_release_at_a_time(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "ms.db") as store:
        tunelog.import_paths(store, [str(OTHER_RELEASE), str(REAL / "no_rules")])
        assert tunelog.api.metaschedule_version_warning(store) == (
            "the MetaSchedule databases come from TVM 0.26.0, 0.27.0.post1, which no one TVM "
            "loads together: `export --metaschedule` writes one release at a time (--source or "
            "--label)"
        )
        with pytest.raises(MixedTvmVersionsError, match=r"TVM 0\.26\.0, 0\.27\.0\.post1"):
            export_metaschedule(store, str(tmp_path / "mixed"))
        assert not (tmp_path / "mixed" / RECORDS).exists()
        export_metaschedule(store, str(tmp_path / "new"), filters=Filters(source="2"))
    assert (tmp_path / "new" / "database_workload.json").read_bytes() == (
        REAL / "no_rules" / "database_workload.json"
    ).read_bytes()


def test_this_tvm_cannot_read_the_other_releases_database() -> None:
    """Why the export refuses: apache-tvm 0.27 fails on a 0.26 database."""
    pytest.importorskip("tvm")
    from tests.realtvm.oracle import modules

    with pytest.raises(TypeError, match="Cannot convert from type"):
        modules(OTHER_RELEASE)


def test_merging_a_database_of_another_release_warns(tmp_path: Path) -> None:
    from tunelog.cli import app

    old, new = str(tmp_path / "old.db"), str(tmp_path / "new.db")
    assert runner.invoke(app, ["--db", old, "import", str(OTHER_RELEASE)]).exit_code == 0
    assert runner.invoke(app, ["--db", new, "import", str(REAL / "no_rules")]).exit_code == 0
    result = runner.invoke(app, ["--db", new, "merge", old])
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        "warning: the MetaSchedule databases come from TVM 0.26.0, 0.27.0.post1, which no one "
        "TVM loads together: `export --metaschedule` writes one release at a time (--source or "
        f"--label)\nmerged 6 new record(s) from 1 database(s) into {new}\n"
    )


def _renamed_block_database(directory: Path) -> Path:
    """`failures`' matmul workload twice, as written and with its block C named D (one workload
    up to names); its records against the first line, and one more, the fastest, measured
    against the second (its trace gets block D)."""
    source = REAL / "failures"
    (line,) = (source / "database_workload.json").read_text().splitlines()[1:]
    hash_text, encoded = json.loads(line)
    raw = base64.b64decode(encoded)
    graph = raw[8:].decode()
    named_c = '"type": "ffi.String",\n      "data": "C"'
    assert graph.count(named_c) == 1
    renamed = raw[:8] + graph.replace(named_c, named_c.replace('"C"', '"D"')).encode()
    directory.mkdir()
    (directory / "database_workload.json").write_text(
        line + "\n" + json.dumps([hash_text, base64.b64encode(renamed).decode()]) + "\n"
    )
    records = [
        json.loads(r) for r in (source / RECORDS).read_text().splitlines() if r.startswith("[1,")
    ]
    fastest = json.loads(json.dumps(records[0]))
    fastest[0], fastest[1][1] = 1, [1e-6]
    text = json.dumps(fastest).replace('["C", "main"]', '["D", "main"]')
    assert '["D", "main"]' in text
    lines = [json.dumps([0, r[1]]) for r in records] + [text]
    (directory / RECORDS).write_text("\n".join(lines) + "\n")
    return directory


@pytest.mark.parametrize("top_k", [1, 3])
def test_each_exported_record_keeps_the_workload_line_its_trace_was_measured_against(
    tmp_path: Path, top_k: int
) -> None:
    database = _renamed_block_database(tmp_path / "db")
    workload_lines = (database / "database_workload.json").read_text().splitlines()
    out = tmp_path / "out"
    with Store(tmp_path / "ms.db") as store:
        (report,) = tunelog.import_paths(store, [str(database)])
        assert report.rejected == 0
        (best,) = store.best()  # one workload: the two lines differ only in a block's name
        assert (best.line, best.mean_cost) == (7, 1e-6)  # the last record, against line 2
        written = export_metaschedule(store, str(out), top_k=top_k)
        assert (written.workloads, written.records) == (1, top_k)
    exported = (out / "database_workload.json").read_text().splitlines()
    for record in (out / RECORDS).read_text().splitlines():
        index = json.loads(record)[0]
        own = workload_lines[1] if '["D", "main"]' in record else workload_lines[0]
        assert exported[index] == own, record[:80]
    # the best was measured against the renamed block; the two next against the other line
    assert exported == ([workload_lines[1]] if top_k == 1 else workload_lines)


def test_tvm_loads_an_export_whose_records_name_blocks_otherwise(tmp_path: Path) -> None:
    pytest.importorskip("tvm")
    from tests.realtvm.oracle import load

    database = _renamed_block_database(tmp_path / "db")
    out = tmp_path / "out"
    with Store(tmp_path / "ms.db") as store:
        tunelog.import_paths(store, [str(database)])
        export_metaschedule(store, str(out), top_k=3)
    original = [float(r.run_secs[0]) for r in load(database).get_all_tuning_records()]
    exported = [float(r.run_secs[0]) for r in load(out).get_all_tuning_records()]
    assert 1e-6 in original and 1e-6 in exported and len(exported) == 3


def _exported_lines(store: Store, out: Path, filters: Filters | None = None) -> dict[str, str]:
    """Each exported record (after its workload index) -> the workload line it points at
    (top 3)."""
    export_metaschedule(store, str(out), top_k=3, filters=filters)
    lines = (out / "database_workload.json").read_text().splitlines()
    return {
        record.split(",", 1)[1]: lines[json.loads(record)[0]]
        for record in (out / RECORDS).read_text().splitlines()
    }


def test_own_workload_lines_survive_merge_removal_and_source_selection(tmp_path: Path) -> None:
    from tests.conftest import database_contents

    database = _renamed_block_database(tmp_path / "db")
    with Store(tmp_path / "direct.db") as direct:
        tunelog.import_paths(direct, [str(database)])
        expected = _exported_lines(direct, tmp_path / "direct")
        held = database_contents(direct.conn)["own spellings"]
    assert len(held) == 1  # the record measured against the renamed block
    # merged into another database
    with Store(tmp_path / "merged.db") as merged:
        tunelog.merge(merged, [str(tmp_path / "direct.db")])
        assert _exported_lines(merged, tmp_path / "merged") == expected
    # an earlier source gave the workload the renamed block's line: the other records keep
    # theirs, also when that source is removed and the later one replayed whole (its first
    # line, the renamed record's, was stored by the removed source)
    *against_c, against_d = (database / RECORDS).read_text().splitlines()
    first, second = tmp_path / "first", tmp_path / "second"
    for directory, records in ((first, [against_d]), (second, [against_d, *against_c])):
        directory.mkdir()
        (directory / "database_workload.json").write_bytes(
            (database / "database_workload.json").read_bytes()
        )
        (directory / RECORDS).write_text("\n".join(records) + "\n")
    with Store(tmp_path / "removed.db") as removed:
        tunelog.import_paths(removed, [str(first), str(second)])
        assert len(database_contents(removed.conn)["own spellings"]) == 6
        assert _exported_lines(removed, tmp_path / "both") == expected
        removed.remove_sources("1")
        assert len(database_contents(removed.conn)["own spellings"]) == 6
        assert removed.conn.execute("SELECT count(*) FROM spelling_texts").fetchone() == (1,)
        assert _exported_lines(removed, tmp_path / "removed") == expected
        # one source chosen (a temporary database of its lines)
        chosen = _exported_lines(removed, tmp_path / "chosen", Filters(source="2"))
        assert chosen == expected


def test_a_loop_whose_extent_is_not_read_gives_no_gflops(tmp_path: Path) -> None:
    """apache-tvm 0.26's matmul, whose shapes tunelog reads as `?`: its loops counted as one
    trip each, 2 FLOPs, and `workloads` showed 0.0 GFLOPS (found by a new user)."""
    with Store(tmp_path / "o.db") as store:
        tunelog.import_paths(store, [str(OTHER_RELEASE)])
        (layer,) = tunelog.layers(store)
    assert layer.shapes == "main: ?x? x ?x? -> ?x? float32"
    assert layer.gflops is None
