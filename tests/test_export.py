"""Export: equivalent to the concatenated inputs for every query, top-k, atomic, honest."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

import tunelog
from tests.conftest import (
    CORPUS,
    EDGE,
    SAMPLE_LOGS,
    X86,
    autotvm_history,
    require_shared,
    undo_migrations,
    write_mixed_version_log,
)
from tunelog import exporting
from tunelog.exceptions import NothingToExportError, OutputExistsError
from tunelog.records import TuningRecord, parse_line
from tunelog.store import Filters, Store, exports
from tunelog.targets import parse_target


def _records(paths: list[Path]) -> list[TuningRecord]:
    """Records as modern AutoTVM reads the concatenated files (v0.1 lines skipped)."""
    found: list[TuningRecord] = []
    for path in paths:
        for raw in path.read_bytes().splitlines():
            parsed = parse_line(raw)
            if isinstance(parsed, TuningRecord) and parsed.log_version == "0.2":
                found.append(parsed)
    return found


def _index_and_cost(record: TuningRecord, _: bytes) -> tuple[int, float]:
    return (record.config_index, record.mean_cost)


def _assert_export_equivalent(paths: list[Path], tmp_path: Path) -> int:
    out = tmp_path / "best.log"
    with Store(tmp_path / "e.db") as store:
        tunelog.import_paths(store, [str(p) for p in paths])
        tunelog.export(store, str(out))
    full = _records(paths)
    lines = [raw for path in paths for raw in path.read_bytes().splitlines()]
    want = autotvm_history(lines, _index_and_cost, skip_other_lines=True)
    got = autotvm_history(out.read_bytes().splitlines(), _index_and_cost)  # only records
    queries = {(r.target, r.workload_json) for r in full}
    for target, workload in queries:
        expected, actual = want.query(target, workload), got.query(target, workload)
        assert (expected and expected.ref) == (actual and actual.ref), (target, workload)
    return len(queries)


@pytest.mark.slow
def test_all_tophub_cuda_files_together_match_their_concatenation(tmp_path: Path) -> None:
    require_shared()
    paths = sorted((CORPUS / "tophub").glob("cuda_v0.*.log"))
    assert len(paths) == 10
    assert _assert_export_equivalent(paths, tmp_path) > 800


@pytest.mark.slow
def test_a_mixed_database_of_several_targets_matches_the_concatenation(tmp_path: Path) -> None:
    require_shared()
    names = [
        "tophub/cuda_v0.10.log",
        "tophub/rocm_v0.05.log",
        "tophub/mali_v0.06.log",
        "tophub/arm_cpu_v0.08.log",
        "tophub/vta_v0.10.log",
        "tophub/opencl_v0.04.log",
        "tophub/llvm_v0.04.log",
        "generated/x86_mini_llvm.log",
        "tom-gall__tvm-bench/db845.inception-v3f.log",
        "SamMichaelson__MachineLearningThesis/resnet-18.log",
        "tlc-pack__TLCBench/saved_logs/2020_01_11/autotvm/t4/bert-B1-float32.kernel.log",
    ]
    assert _assert_export_equivalent([CORPUS / n for n in names], tmp_path) > 3000


def test_sample_logs_export_matches_their_concatenation(tmp_path: Path) -> None:
    assert _assert_export_equivalent([EDGE, X86], tmp_path) == 9


def test_top_k_keeps_at_most_k_distinct_configs_per_slot_the_best_ones(tmp_path: Path) -> None:
    out = tmp_path / "top3.log"
    with Store(tmp_path / "k.db") as store:
        tunelog.import_paths(store, [str(X86)])
        tunelog.export(store, str(out), top_k=3)
    exported = [r for r in map(parse_line, out.read_bytes().splitlines())]
    records = [r for r in _records([X86]) if r.error_no == 0]
    for workload in {r.workload_json for r in records}:
        mine = [r for r in exported if isinstance(r, TuningRecord) and r.workload_json == workload]
        configs = {r.config_index for r in mine}
        assert len(configs) == len(mine) <= 3
        by_config: dict[int, float] = {}
        for r in records:
            if r.workload_json == workload:
                by_config[r.config_index] = min(by_config.get(r.config_index, 1e99), r.mean_cost)
        best3 = sorted(by_config, key=by_config.__getitem__)[:3]
        assert configs == set(best3)


@pytest.mark.parametrize(
    ("options", "exported"),
    [
        ({}, {("a", 0), ("b", 1), ("a", 2)}),
        ({"target": "llvm -keys=cpu -mcpu=a"}, {("a", 0), ("a", 2), ("a", 4)}),
        # b's records alone, as TVM given only them ranks them (in the whole database b
        # holds no slot: a-records win the shared key `cpu`)
        ({"target": "llvm -keys=cpu -mcpu=b"}, {("b", 1), ("b", 3)}),
        ({"target": "llvm -keys=cpu -mcpu=c"}, set()),  # no record of it
        ({"model": "unknown"}, {("a", 0), ("b", 1), ("a", 2)}),
    ],
)
def test_top_k_ranks_only_the_records_the_filters_select(
    tmp_path: Path, options: dict[str, str], exported: set[tuple[str, int]]
) -> None:
    """A filter selects records: the runners-up of `export --top-k --target X` are X's, never
    another target's that shares the slot (`-mcpu=a` and `-mcpu=b` both answer key `cpu`)."""
    template = json.loads(X86.read_bytes().splitlines()[0])
    lines = []
    for n, (mcpu, cost) in enumerate(
        [("a", 1e-4), ("b", 1.5e-4), ("a", 2e-4), ("b", 2.5e-4), ("a", 3e-4)]
    ):
        record = json.loads(json.dumps(template))
        record["input"][0] = f"llvm -keys=cpu -mcpu={mcpu}"
        record["config"]["index"] = n
        record["result"] = [[cost], 0, 1.0, 1.6e9 + n]
        lines.append(json.dumps(record))
    log = tmp_path / "two.log"
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "top3.log"
    with Store(tmp_path / "k.db") as store:
        tunelog.import_paths(store, [str(log)])
        if not exported:
            with pytest.raises(NothingToExportError):
                tunelog.export(store, str(out), top_k=3, filters=Filters(**options))
            return
        tunelog.export(store, str(out), top_k=3, filters=Filters(**options))
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["input"][0][-1], r["config"]["index"]) for r in written} == exported


def test_export_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    out = tmp_path / "best.log"
    out.write_text("precious\n")
    with Store(tmp_path / "o.db") as store:
        tunelog.import_paths(store, [str(X86)])
        with pytest.raises(OutputExistsError, match="--force"):
            tunelog.export(store, str(out))
        assert out.read_text() == "precious\n"
        report = tunelog.export(store, str(out), force=True)
    assert report.written == 5
    assert not list(tmp_path.glob(".best.log.*"))  # no temporary file left behind


def test_unloadable_records_are_reported_not_silently_exported(tmp_path: Path) -> None:
    out = tmp_path / "best.log"
    with Store(tmp_path / "u.db") as store:
        tunelog.import_paths(store, [str(EDGE)])
        report = tunelog.export(store, str(out))
        assert report.skipped_v01 == 1
        assert report.unloadable_targets == {
            "llvm -keys=cpu -link-params=0 -mcpu=skylake-avx512": 2
        }
        assert any("--fix-targets" in w for w in report.warnings)
        assert any("--include-v01" in w for w in report.warnings)
        fixed = tunelog.export(store, str(out), force=True, fix_targets=True)
    assert fixed.rewritten_targets == 2
    targets = {
        r.target
        for r in map(parse_line, out.read_bytes().splitlines())
        if isinstance(r, TuningRecord)
    }
    assert all(not parse_target(t).load_problems for t in targets)


@pytest.mark.parametrize(
    ("target", "left"),
    [
        ("cuda -model=t4 -model=t4", "cuda -model=t4 -model=t4"),  # --fix-targets cannot choose
        ("cuda -model=t4 -model=t4 -link-params=0", "cuda -model=t4 -model=t4"),
        ("cuda -model=t4 -link-params=0", None),  # fixed
    ],
)
def test_fix_targets_still_says_what_it_could_not_fix(
    tmp_path: Path, target: str, left: str | None
) -> None:
    """A line --fix-targets could not make loadable was written without a word (found by a
    review: an option given twice is a load problem it cannot drop)."""
    import json

    record = json.loads(X86.read_text().splitlines()[0])
    record["input"][0] = target
    log = tmp_path / "t.log"
    log.write_text(json.dumps(record) + "\n")
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(log)])
        report = tunelog.export(store, str(tmp_path / "out.log"), fix_targets=True)
    assert report.unloadable_targets == ({left: 1} if left is not None else {})
    if left is not None:
        assert "--fix-targets" not in " ".join(report.warnings)


def test_a_log_where_every_trial_failed_has_nothing_to_export(tmp_path: Path) -> None:
    failed = tmp_path / "failed.log"
    failed.write_bytes(
        b"\n".join(line for line in X86.read_bytes().splitlines() if b"[1000000000.0], 6" in line)
    )
    with Store(tmp_path / "f.db") as store:
        tunelog.import_paths(store, [str(failed)])
        with pytest.raises(NothingToExportError):
            tunelog.export(store, str(tmp_path / "out.log"))
    assert not (tmp_path / "out.log").exists()


def test_filters_limit_the_export(tmp_path: Path) -> None:
    out = tmp_path / "dense.log"
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(X86)])
        report = tunelog.export(store, str(out), filters=Filters(task="dense"))
    assert report.written == 2
    assert all(b"dense_" in line for line in out.read_bytes().splitlines())


def test_export_gets_ordinary_permissions_or_keeps_the_replaced_files(tmp_path: Path) -> None:
    import os

    out, kept = tmp_path / "new.log", tmp_path / "kept.log"
    kept.write_text("old\n")
    kept.chmod(0o640)
    old_umask = os.umask(0o022)
    try:
        with Store(tmp_path / "p.db") as store:
            tunelog.import_paths(store, [str(X86)])
            tunelog.export(store, str(out))
            tunelog.export(store, str(kept), force=True)
    finally:
        os.umask(old_umask)
    assert out.stat().st_mode & 0o777 == 0o644
    assert kept.stat().st_mode & 0o777 == 0o640


def test_v01_records_never_hide_a_v02_winner_of_the_same_workload(tmp_path: Path) -> None:
    """Modern TVM skips v0.1 lines, so they must not compete with v0.2 records."""
    log = write_mixed_version_log(tmp_path)
    out = tmp_path / "best.log"
    with Store(tmp_path / "m.db") as store:
        tunelog.import_paths(store, [str(log)])
        report = tunelog.export(store, str(out))
    assert report.skipped_v01 == 1
    assert out.read_text() == log.read_text().splitlines(keepends=True)[1]  # the v0.2 line


def _top_k_ids(store: Store, k: int, monkeypatch: pytest.MonkeyPatch, *, scan: bool) -> list[int]:
    """Record ids `export --top-k` writes: from the kept configs, or by ranking every record."""
    with monkeypatch.context() as patch:
        if scan:
            patch.setattr(exports, "TOP_CONFIGS_KEPT", 0)
        return [line.record_id for line in store.winner_lines(top_k=k)]


def _many_configs_log(path: Path, configs: int, seed: int) -> Path:
    """One workload tuned `configs` times in random order, some configs measured twice."""
    rng = random.Random(seed)
    template = json.loads(X86.read_bytes().splitlines()[0])
    lines = []
    for n in range(configs):
        record = json.loads(json.dumps(template))
        record["config"]["index"] = rng.randrange(configs // 2)
        record["result"] = [[rng.choice([1e-3, 2e-3]) * rng.randint(1, 40)], 0, 1.0, 1.6e9 + n]
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("k", [1, 2, 3, 7, 16])
def test_top_k_from_the_kept_configs_equals_ranking_every_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    short = tmp_path / "short.log"
    with gzip.open(SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz") as packed:
        short.write_bytes(packed.read())
    merged = tmp_path / "merged.log"
    merged.write_bytes(short.read_bytes() + X86.read_bytes()[:20000])
    many = _many_configs_log(tmp_path / "many.log", 400, seed=k)
    more = _many_configs_log(tmp_path / "more.log", 300, seed=k + 100)
    with Store(tmp_path / "k.db") as store:
        tunelog.import_paths(store, [str(p) for p in (X86, merged, many, EDGE, more, short)])
        kept = _top_k_ids(store, k, monkeypatch, scan=False)
        assert kept == _top_k_ids(store, k, monkeypatch, scan=True)
        assert len(kept) > k


def test_a_schema_3_database_gets_its_top_configs_on_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "v3.db"
    with Store(path) as store:
        tunelog.import_paths(store, [str(X86), str(_many_configs_log(tmp_path / "m.log", 200, 1))])
        undo_migrations(store.conn, 3)
    with Store(path) as store:
        assert store.conn.execute("SELECT count(*) FROM top_configs").fetchone()[0] > 16
        assert _top_k_ids(store, 5, monkeypatch, scan=False) == _top_k_ids(
            store, 5, monkeypatch, scan=True
        )


def test_the_temporary_file_takes_a_name_nobody_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A taken temporary name (another export's) is skipped, never opened or replaced."""
    draws = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr("tunelog.exporting.os.urandom", lambda n: next(draws))
    taken = tmp_path / ".best.log.000000000000.tmp"
    taken.write_bytes(b"someone else's")
    out = tmp_path / "best.log"
    assert exporting.write_lines_atomically(str(out), [b"a", b"b"]) == 2
    assert out.read_bytes() == b"a\nb\n"
    assert taken.read_bytes() == b"someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == [taken.name, "best.log"]


def test_export_for_a_target_warns_of_answers_from_another_machine_as_best_does(
    tmp_path: Path,
) -> None:
    """The records `export --for-target` writes are `best --for-target`'s answers: those
    measured on another machine are warned about the same way (they used not to be)."""
    from tests.conftest import run

    db, out, asked = str(tmp_path / "x.db"), tmp_path / "zen.log", "llvm -keys=cpu -mcpu=znver3"
    assert run("--db", db, "import", str(X86))[0] == 0
    code, _, err = run("--db", db, "export", "--for-target", asked, str(out))
    assert code == 0
    assert err == (
        "warning: 5 answers were measured on another machine than the target asked about "
        "(-mcpu skylake-avx512 vs znver3 and -mtriple x86_64-pc-linux-gnu vs none x5): re-tune "
        "on this machine, or filter with --target; `tunelog best --for-target "
        f"'{asked}' --json` lists each under `warnings`\n"
        f"wrote 5 record(s) to {out}\n"
    )
    with Store(db) as store:
        report = tunelog.export(store, str(tmp_path / "api.log"), filters=Filters(for_target=asked))
    assert sum(report.cross_machine.values()) == 5
    (crossed,) = report.warnings  # the API's warnings hold them too, with their count
    assert crossed.startswith(f"answer for {asked!r} was measured on ") and crossed.endswith(
        "(x5 records)"
    )
    code, _, err = run("--db", db, "best", "--for-target", asked)
    assert err.endswith(  # the command whose --json lists them (it used to drop --for-target)
        f"`tunelog best --for-target '{asked}' --json` lists each under `warnings`\n"
    )
    code, _, err = run("--db", db, "export", "--for-target", X86_TARGET, str(tmp_path / "s.log"))
    assert (code, err) == (0, f"wrote 5 record(s) to {tmp_path / 's.log'}\n")


X86_TARGET = "llvm -keys=cpu -mcpu=skylake-avx512 -mtriple=x86_64-pc-linux-gnu"


def test_an_unknown_target_kind_is_not_told_to_drop_an_option(tmp_path: Path) -> None:
    """--fix-targets drops options TVM rejects; a kind TVM does not know ('cdua') it cannot
    fix, and the warning used to say to pass it all the same."""
    record = json.loads(X86.read_bytes().splitlines()[0])
    record["input"][0] = "cdua -model=t4"
    log = tmp_path / "cdua.log"
    log.write_text(json.dumps(record) + "\n")
    with Store(tmp_path / "c.db") as store:
        tunelog.import_paths(store, [str(log)])
        report = tunelog.export(store, str(tmp_path / "out.log"))
    assert report.warnings == [
        "1 record(s) with target 'cdua -model=t4' cannot be loaded by TVM >= 0.10 (unknown "
        "target kind 'cdua'): TVM cannot read this target string: re-tune with one it knows, "
        "or leave these records out (--target-key, --target)"
    ]
