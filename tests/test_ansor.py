"""auto_scheduler (Ansor) records: parsing, the dispatcher's workload identity, slots, export."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tunelog
from tests.conftest import X86, runner
from tunelog import ansor
from tunelog.ansor import AnsorRecord
from tunelog.cli import app
from tunelog.exceptions import MixedFormatsError
from tunelog.records import Measurement, Rejected, parse_line, scan_line
from tunelog.selection import AnsorKeyError, ansor_workload
from tunelog.store import Store

CUDA = "cuda -keys=cuda,gpu -max_num_threads=1024 -thread_warp_size=32"
T4 = "cuda -keys=cuda,gpu -max_num_threads=1024 -model=t4 -thread_warp_size=32"
A = "auto_scheduler record: "
AUTOTVM = json.dumps(
    {
        "input": ["llvm -keys=cpu", "dense_nopack.x86", [["TENSOR", [1, 8], "float32"]], {}],
        "config": {"index": 3, "code_hash": None, "entity": [["tile_y", "sp", [-1, 1]]]},
        "result": [[0.002], 0, 1.0, 1700000000],
        "version": 0.2,
        "tvm_version": "0.9.dev0",
    }
)


def ansor_line(
    key: Any = '["h1", [1, 8], [8, 8]]',
    target: str = CUDA,
    costs: list[float] | None = None,
    error_no: int = 0,
    steps: list[Any] | None = None,
    version: str = "v0.6",
    host: str = "",
) -> str:
    """One auto_scheduler record as TVM 0.8-0.19 writes it."""
    task = [key, target, [-1, 16, 64, 49152, 2147483647, 1024, 8, 32], host, 0, []]
    state = [[], steps if steps is not None else [["SP", 2, 0, 8, [2], 1]]]
    result = [costs if costs is not None else [0.001], error_no, 1.5, 1700000000]
    return json.dumps({"i": [task, state], "r": result, "v": version})


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ('["h", [1, 2], [3]]', ("h", "[1,2,3]")),
        ('["h", 1, 2, 3]', ("h", "[1,2,3]")),
        ('["h", [[1], [2, [3]]]]', ("h", "[1,2,3]")),
        ('["h", 1.0, true]', ("h", "[1,1]")),  # Python: 1.0 == True == 1, one dict key
        ('["h", 1.5, "float32"]', ("h", '[1.5,"float32"]')),
        ('["h"]', ("h", "[]")),
        ("h", ("h", "null")),  # not JSON: the key is the hash, args None (not ())
        ("[]", ("[]", "null")),
        ('"h"', ('"h"', "null")),
    ],
)
def test_workload_is_the_hash_and_the_flattened_args(key: str, expected: tuple[str, str]) -> None:
    assert ansor_workload(key) == expected


@pytest.mark.parametrize("key", ["[1, 2]", '["h", {"a": 1}]', '[["h"], 1]'])
def test_keys_the_dispatcher_cannot_hash_are_refused(key: str) -> None:
    with pytest.raises(AnsorKeyError):
        ansor_workload(key)


def test_a_v06_line_parses_to_its_fields() -> None:
    record = parse_line(ansor_line(costs=[0.001, 0.003]).encode())
    assert isinstance(record, AnsorRecord)
    assert (record.workload, record.target, record.error_no) == (("h1", "[1,8,8,8]"), CUDA, 0)
    assert record.costs == (0.001, 0.003)
    same_steps = parse_line(ansor_line(costs=[9.0]).encode())
    assert isinstance(same_steps, AnsorRecord)
    assert same_steps.config_index == record.config_index
    other_steps = parse_line(ansor_line(steps=[["SP", 2, 0, 8, [4], 1]]).encode())
    assert isinstance(other_steps, AnsorRecord)
    assert other_steps.config_index != record.config_index


@pytest.mark.parametrize("length", [2, 3, 4, 5, 6])
def test_every_task_layout_from_v02_to_v06_is_read(length: int) -> None:
    value = json.loads(ansor_line())
    value["i"][0] = value["i"][0][:length]
    scanned = scan_line(json.dumps(value).encode())
    assert isinstance(scanned, Measurement), scanned
    assert (scanned.log_version, scanned.task_name) == ("ansor", "h1")


def _mutated(path: list[Any], value: Any) -> bytes:
    record = json.loads(ansor_line())
    node = record
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return json.dumps(record).encode()


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (
            b" " + ansor_line().encode(),
            "auto_scheduler record starting with a space: TVM's reader skips it",
        ),
        (_mutated(["x"], 1), "auto_scheduler record with unknown key 'x' (TVM aborts the load)"),
        (_mutated(["r"], [[0.1], 0]), A + "r must be [costs, error_no, all_cost, timestamp]"),
        (_mutated(["r", 1], "0"), A + "error number is not an integer"),
        (_mutated(["i", 0, 0], 5), A + "workload key is not a non-empty string"),
        (_mutated(["i", 0, 0], "[5, 1]"), A + "workload key starts with int, not a hash string"),
        (_mutated(["i", 0, 1], ""), "bad target: empty target string"),
        (_mutated(["i", 0, 2], ["a"]), A + "hardware parameters are not a list of integers"),
        # null too: TVM 0.16's reader aborts ("Check failed: ch == '['"), checked
        (_mutated(["i", 0, 2], None), A + "hardware parameters are not a list of integers"),
        # TVM 0.16's reader aborts on any count but 8 (an export of the line would not load)
        (
            _mutated(["i", 0, 2], [-1, 16, 64, 49152, 2147483647, 1024, 8, 32, 1]),
            A + "9 hardware parameters (8 expected: TVM's reader aborts on the line)",
        ),
        (
            _mutated(["i", 0, 2], []),
            A + "0 hardware parameters (8 expected: TVM's reader aborts on the line)",
        ),
        (_mutated(["i", 1], [[]]), A + "state must be [stages, steps]"),
        (_mutated(["i", 1, 1], [5]), A + "a transform step is not a list starting with its kind"),
        (_mutated(["r", 0], [-1.0]), "negative cost -1.0"),
        # JSON escapes TVM's C++ reader does not read: it aborts the file (TVM 0.16, checked).
        *(
            (
                ansor_line(target="cuda -keys=@gpu").replace("@", escape).encode(),
                f"auto_scheduler record with the JSON escape {escape[:2]}, which TVM's reader "
                "does not read (it aborts the whole file's load)",
            )
            for escape in ("\\u0063", "\\/", "\\b", "\\f")
        ),
        # Named as auto_scheduler records, not by the v0.1 AutoTVM field they lack.
        (
            _mutated(["v"], 6),
            "auto_scheduler record whose version (v) is 6, not a string (TVM's reader aborts "
            "on it)",
        ),
        (
            ansor_line().replace("[0.001]", "[NaN]").encode(),
            "auto_scheduler record v0.6 that is not plain JSON",
        ),
        (
            ansor_line().replace("[0.001]", "[1e400]").encode(),
            "auto_scheduler record v0.6 that is not plain JSON",
        ),
    ],
)
def test_lines_tvm_cannot_read_are_rejected_with_a_reason(raw: bytes, reason: str) -> None:
    assert scan_line(raw) == Rejected(reason)
    assert parse_line(raw) == Rejected(reason)


@pytest.mark.parametrize("escape", ["\\\\u", "\\t", '\\"', "\\n", "\\\\/"])
def test_escapes_tvm_reads_are_read(escape: str) -> None:
    """An escaped backslash before `u` or `/` is no \\u or \\/ escape (`escape`: JSON text)."""
    raw = ansor_line(steps=[["S@P", 2, 0, 8, [2], 1]]).replace("@", escape).encode()
    assert isinstance(parse_line(raw), AnsorRecord)
    assert type(scan_line(raw)).__name__ == "Measurement"


@pytest.mark.parametrize("version", ["v1.0", "V0.6", "0.6", ""])
def test_any_version_string_is_read_as_tvm_reads_it(version: str) -> None:
    """TVM's auto_scheduler reader takes any string as the version (TVM 0.16, checked): such
    lines were refused as 'not plain JSON', and the best could differ from TVM's."""
    raw = ansor_line(version=version).encode()
    parsed = parse_line(raw)
    assert isinstance(parsed, AnsorRecord) and parsed.version == version
    assert scan_line(raw) == scan_line(ansor_line().encode())


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


@given(
    path=st.sampled_from([["i", 0, 0], ["i", 0, 2], ["i", 1], ["r"], ["r", 0], ["v"]]), value=_JSON
)
def test_any_value_anywhere_gives_a_record_or_a_reason(path: list[Any], value: Any) -> None:
    raw = _mutated(path, value)
    scanned = scan_line(raw)
    assert type(scanned).__name__ in ("Measurement", "Rejected")
    assert isinstance(parse_line(raw), (AnsorRecord, Rejected))


_ANSOR_PATHS = [
    ["i", 0],
    ["i", 0, 0],
    ["i", 0, 1],
    ["i", 0, 2],
    ["i", 0, 2, 0],
    ["i", 0, 3],
    ["i", 0, 4],
    ["i", 0, 5],
    ["i", 1],
    ["i", 1, 0],
    ["i", 1, 1],
    ["i", 1, 1, 0],
    ["i", 1, 1, 0, 0],
    ["i", 1, 1, 0, 1],
    ["r"],
    ["r", 0],
    ["r", 0, 0],
    ["r", 1],
    ["r", 2],
    ["r", 3],
    ["v"],
    ["extra"],
]


@pytest.mark.slow
@settings(max_examples=600)
@given(path=st.sampled_from(_ANSOR_PATHS), value=_JSON | st.sampled_from([0.5, 7, "x", [1, 2]]))
def test_the_fast_path_reads_auto_scheduler_lines_as_the_checks_do(
    path: list[Any], value: Any
) -> None:
    """What the msgspec path accepts, `scan_ansor_line` (orjson and parse_ansor) accepts alike."""
    raw = _mutated(path, value)
    fast = ansor.scan_ansor_line_fast(raw)
    if fast is not None:
        assert fast == ansor.scan_ansor_line(raw)
        if b'"v0.' in raw:  # what makes a line an auto_scheduler record to try
            assert scan_line(raw) == (fast[1] if isinstance(fast, tuple) else fast)


@pytest.mark.parametrize("length", [2, 3, 4, 5, 6])
def test_usual_auto_scheduler_lines_take_the_fast_path(length: int) -> None:
    value = json.loads(ansor_line())
    value["i"][0] = value["i"][0][:length]
    raw = json.dumps(value).encode()
    fast = ansor.scan_ansor_line_fast(raw)
    assert isinstance(fast, tuple)
    assert fast == ansor.scan_ansor_line(raw)


def _import(tmp_path: Path, *lines: str) -> Store:
    log = tmp_path / "ansor.json"
    log.write_text("".join(line + "\n" for line in lines))
    store = Store(tmp_path / "a.db")
    tunelog.import_paths(store, [str(log)])
    return store


def test_flat_and_nested_keys_compete_for_one_slot_and_ties_keep_the_first(
    tmp_path: Path,
) -> None:
    lines = [
        ansor_line(key='["h1", [1, 8], [8, 8]]', costs=[0.003]),
        ansor_line(key='["h1", 1, 8, 8, 8]', costs=[0.002], steps=[["SP", 0]]),
        ansor_line(key='["h1", [1, 8, 8, 8]]', costs=[0.002], steps=[["SP", 1]]),  # tie
        ansor_line(costs=[1e10], error_no=4, steps=[["SP", 2]]),  # failed: never competes
        ansor_line(key='["h2", [1, 8], [8, 8]]', costs=[0.001, 0.0005]),
    ]
    with _import(tmp_path, *lines) as store:
        holders = sorted((h.name, h.task_name, h.line, h.mean_cost) for h in store.slot_holders())
    assert holders == [
        ("cuda", "h1", 2, 0.002),
        ("cuda", "h2", 5, 0.00075),
        ("gpu", "h1", 2, 0.002),
        ("gpu", "h2", 5, 0.00075),
    ]


def test_a_model_opens_a_model_slot_and_is_asked_first(tmp_path: Path) -> None:
    lines = [ansor_line(costs=[0.002], target=T4), ansor_line(costs=[0.001])]
    with _import(tmp_path, *lines) as store:
        best_for_t4 = store.best(tunelog.Filters(for_target=T4))
        best_elsewhere = store.best(tunelog.Filters(for_target=CUDA))
    assert [(r.line, r.slots) for r in best_for_t4] == [(1, ["model=t4"])]
    assert [(r.line, r.slots) for r in best_elsewhere] == [(2, ["cuda"])]


def test_a_mixed_file_imports_both_and_exports_one_format_at_a_time(tmp_path: Path) -> None:
    ansor = ansor_line()
    with _import(tmp_path, AUTOTVM, ansor, "# a comment") as store:
        assert store.stats().records == 2
        with pytest.raises(MixedFormatsError):
            tunelog.export(store, str(tmp_path / "both.log"))
        tunelog.export(store, str(tmp_path / "a.json"), log_format="auto_scheduler")
        tunelog.export(store, str(tmp_path / "t.log"), log_format="autotvm")
    assert (tmp_path / "a.json").read_text() == ansor + "\n"
    assert (tmp_path / "t.log").read_text() == AUTOTVM + "\n"
    assert not (tmp_path / "both.log").exists()


def test_cli_export_of_a_mixed_database_says_to_pick_a_format(tmp_path: Path) -> None:
    _import(tmp_path, AUTOTVM, ansor_line()).close()
    db = str(tmp_path / "a.db")
    result = runner.invoke(app, ["--db", db, "export", str(tmp_path / "out.log")])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: the database holds AutoTVM and auto_scheduler records, which TVM loads with "
        "different readers (each aborts on the other's lines): pass --format autotvm or "
        "--format auto_scheduler, one file each\n"
    )
    result = runner.invoke(app, ["--db", db, "export", "--format", "ansor", "-"])
    assert result.exit_code == 2


def test_link_params_is_flagged_and_fixed_for_ansor_lines(tmp_path: Path) -> None:
    target = "llvm -keys=cpu -link-params=0"
    with _import(tmp_path, ansor_line(target=target)) as store:
        report = tunelog.export(store, str(tmp_path / "as_is.json"))
        fixed = tunelog.export(store, str(tmp_path / "fixed.json"), fix_targets=True)
    assert report.unloadable_targets == {target: 1}
    assert fixed.rewritten_targets == 1
    record = parse_line((tmp_path / "fixed.json").read_bytes())
    assert isinstance(record, AnsorRecord) and record.target == "llvm -keys=cpu"


@pytest.mark.parametrize(
    ("target", "host", "fixed_target", "fixed_host"),
    [
        (CUDA, "llvm -keys=cpu -link-params=0", CUDA, "llvm -keys=cpu"),
        # The same string in both fields: each is rewritten.
        (*(["llvm -keys=cpu -link-params=0"] * 2), *(["llvm -keys=cpu"] * 2)),
    ],
)
def test_a_target_host_tvm_refuses_is_flagged_and_fixed(
    tmp_path: Path, target: str, host: str, fixed_target: str, fixed_host: str
) -> None:
    """TVM 0.16's auto_scheduler reader refuses the whole file over a target host with
    -link-params (a TVM 0.8 log's): the export wrote it without a word, --fix-targets too."""
    with _import(tmp_path, ansor_line(target=target, host=host)) as store:
        report = tunelog.export(store, str(tmp_path / "as_is.json"))
        fixed = tunelog.export(store, str(tmp_path / "fixed.json"), fix_targets=True)
    assert report.unloadable_hosts == {host: 1}
    assert report.warnings[-1] == (
        f"1 auto_scheduler record(s) with target host {host!r} cannot be loaded by TVM (TVM >= "
        "0.10 rejects the -link-params target option): TVM's reader refuses the whole file; "
        "pass --fix-targets to drop the option"
    )
    assert (fixed.unloadable_hosts, fixed.unloadable_targets, fixed.warnings) == (
        {},
        {},
        ["rewrote the target string of 1 record(s)"],
    )
    task = json.loads((tmp_path / "fixed.json").read_text())["i"][0]
    assert (task[1], task[3]) == (fixed_target, fixed_host)


def test_workloads_shows_the_key_with_its_shapes(tmp_path: Path) -> None:
    with _import(tmp_path, ansor_line()) as store:
        (layer,) = tunelog.layers(store)
    assert (layer.family, layer.shapes) == ("h1", "[1, 8], [8, 8]")
    assert layer.templates[0].name == "h1 (auto_scheduler)"


@pytest.mark.parametrize("error_no", [2**64, -(2**63) - 1, 2**63])
def test_error_numbers_beyond_64_bits_are_refused_as_the_checks_refuse_them(error_no: int) -> None:
    """orjson reads integers outside [-2**63, 2**64) as floats: not an integer to parse_ansor."""
    raw = ansor_line(error_no=error_no).encode()
    assert isinstance(parse_line(raw), Rejected)
    assert scan_line(raw) == parse_line(raw)


def test_best_rows_for_a_table_skip_the_arguments_only_where_the_short_text_is_stored(
    tmp_path: Path,
) -> None:
    """`args_only_without_shapes` (the `best` table): an AutoTVM row shows its stored short
    text, so its arguments are not decoded; an auto_scheduler row is shown from its key's
    items, and a workload without stored short text from its arguments."""
    log = tmp_path / "ansor.json"
    log.write_text(ansor_line() + "\n")
    with Store(tmp_path / "b.db") as store:
        tunelog.import_paths(store, [str(X86), str(log)])
        # As an older tunelog left a workload: no short text stored.
        store.conn.execute(
            "UPDATE workloads SET shapes = NULL WHERE id = (SELECT min(id) FROM workloads)"
        )
        full = list(store.each_best(as_written=True))
        lean = list(store.each_best(as_written=True, args_only_without_shapes=True))
    kinds = {(row.log_version, row.shapes is None) for row in full}
    assert kinds == {("0.2", False), ("0.2", True), ("ansor", True)}  # every kind of row
    assert lean == [
        dataclasses.replace(row, args=[] if row.shapes is not None else row.args) for row in full
    ]


@pytest.mark.parametrize(
    ("first", "winner", "args"),
    [
        ('["h1", 1.0, 28]', '["h1", 1, 28]', [1, 28]),  # the winning line's own key
        ('["h1", 1, 28]', '["h1", 1.0, 28]', [1.0, 28]),
        ('["h1", [1, 28]]', '["h1", 1, 28]', [1, 28]),  # nested or flat: one workload
        ('["h1", 1, 28]', '["h1", 1, 28]', [1, 28]),
    ],
)
def test_best_shows_the_arguments_as_the_winning_line_writes_its_key(
    tmp_path: Path, first: str, winner: str, args: list[object]
) -> None:
    log = tmp_path / "keys.json"
    log.write_text(ansor_line(first, costs=[5e-5]) + "\n" + ansor_line(winner, costs=[1e-5]) + "\n")
    with Store(tmp_path / "k.db") as store:
        tunelog.import_paths(store, [str(log)])
        (row,) = store.each_best(as_written=True)
        (plain,) = store.best()
        tunelog.api.ansor_args_as_written(store, [plain])  # the API's own way to them
        merged = tmp_path / "m.db"
        with Store(merged) as other:
            tunelog.merge(other, [str(tmp_path / "k.db")])
            (again,) = other.each_best(as_written=True)
    # as JSON: 1.0 == 1 in Python, not as written
    assert (row.line, json.dumps(row.args)) == (2, json.dumps(args))
    assert json.dumps(again.args) == json.dumps(plain.args) == json.dumps(args)


def test_knobs_of_an_auto_scheduler_layer_says_it_has_none(tmp_path: Path) -> None:
    """Its config is a list of steps: 'knobs' used to print '0 trials, 0 distinct configs' and
    a warning that every stored line had no readable knobs."""
    from tunelog.cli import app

    log = tmp_path / "ansor.json"
    log.write_text(ansor_line('["h1", [1, 64, 56, 56], [128, 64, 3, 3]]') + "\n")
    db = str(tmp_path / "a.db")
    assert runner.invoke(app, ["--db", db, "import", str(log)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "knobs", "h1"])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines()[1] == (
        "auto_scheduler records have no knobs (a config is a list of transform steps): "
        "`tunelog curve` shows its trials"
    )
    # Relay picks among AutoTVM templates, not auto_scheduler tasks: TVM uses its record.
    assert result.stdout.splitlines()[0].endswith("h1 (auto_scheduler)  (TVM uses it)")
    # Its trials count all the same (--json said 0 trials of a layer `curve` shows 1 of).
    (entry,) = json.loads(runner.invoke(app, ["--db", db, "knobs", "h1", "--json"]).stdout)
    assert (entry["coverage"]["trials"], entry["coverage"]["distinct_configs"]) == (1, 1)
    assert entry["knobs"] == []
