"""Migration 12: each workload's facts are stored once, and read back as they are computed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tunelog
from tests.conftest import undo_migrations
from tunelog import api
from tunelog.store import Store
from tunelog.store.workloadfacts import computed, encoded, fill_workload_facts
from tunelog.versions import ANSOR_VERSION
from tunelog.workloadinfo import WorkloadFacts, WorkloadInfo
from tunelog.workloads import flops, layer_facts, layer_key, operator_family, short_args

ROOT = Path(__file__).parent.parent
SHARED = ROOT.parent / "shared" / "corpus"
LOGS = [
    ROOT / "sample_logs",
    ROOT / "tests" / "data" / "nchwc_blocks.log",
    ROOT / "tests" / "data" / "x86_mini_pick_best.log",
    ROOT / "tests" / "data" / "metaschedule_real" / "two_targets",
]
# Real auto_scheduler and AutoTVM logs of the corpus, when ../shared is there.
CORPUS = [
    SHARED / "AndrewZhaoLuo__TVM-Sandbox" / "resnet-18-NHWC-B1-llvm.json",
    SHARED / "Kovelja009__int8_tvm_benchmark" / "resnet18-cuda.log",
    SHARED / "WoongQ__RoboticAI2023_TVM" / "conv2d.json",
]


# Workloads those logs hold at least: the repository's alone, or with the corpus.
MIN_WORKLOADS = 20 if SHARED.exists() else 10


def _imported(path: Path) -> Store:
    """A database of LOGS and, when ../shared is there, CORPUS (every file of it: a file
    renamed there fails here rather than leaving the test fewer workloads)."""
    corpus = CORPUS if SHARED.exists() else []
    assert all(p.exists() for p in corpus), [str(p) for p in corpus if not p.exists()]
    store = Store(path)
    tunelog.import_paths(store, [str(p) for p in LOGS + corpus])
    return store


def _recomputed(workload: WorkloadInfo) -> WorkloadFacts:
    w = workload
    return computed(w.task_name, w.template_key, w.args_json, w.version, w.spelling)


def test_stored_facts_are_the_facts_the_arguments_give(tmp_path: Path) -> None:
    with _imported(tmp_path / "t.db") as store:
        workloads = store.layer_inputs()[1]
        assert len(workloads) > MIN_WORKLOADS
        assert all(w.stored is not None for w in workloads)
        for workload in workloads:
            assert workload.stored == _recomputed(workload), workload


@pytest.mark.parametrize("sort", [None, "latency"])
def test_layers_are_the_same_whether_facts_are_stored_or_computed(
    tmp_path: Path, sort: str | None
) -> None:
    with _imported(tmp_path / "t.db") as store:
        stored = [api.layer_as_dict(lay) for lay in api.layers(store, sort=sort)]
        store.conn.execute("UPDATE workloads SET layer_key = NULL")
        assert store.conn.execute(
            "SELECT count(*) FROM workloads WHERE layer_key IS NOT NULL"
        ).fetchone() == (0,)
        # A reader meeting workloads without stored facts computes them from the arguments.
        assert all(w.stored == _recomputed(w) for w in store.layer_inputs()[1])
        # The listings group layers by the stored key in SQL: facts computed again, stored.
        assert fill_workload_facts(store.conn) > MIN_WORKLOADS
        computed = [api.layer_as_dict(lay) for lay in api.layers(store, sort=sort)]
    assert stored == computed
    assert stored


def test_an_older_database_gets_its_facts_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "v11.db"
    with _imported(path) as store:
        expected = [api.layer_as_dict(lay) for lay in api.layers(store)]
        undo_migrations(store.conn, 11)
    with Store(path) as store:
        assert store.conn.execute(
            "SELECT count(*) FROM workloads WHERE layer_key IS NULL"
        ).fetchone() == (0,)
        assert [api.layer_as_dict(lay) for lay in api.layers(store)] == expected


def test_a_selection_of_sources_has_its_workloads_facts(tmp_path: Path) -> None:
    with _imported(tmp_path / "t.db") as store:
        first = store.sources()[0]
        with store.selected(tunelog.Filters(source=str(first.id))) as (chosen, _):
            assert chosen is not store
            workloads = chosen.layer_inputs()[1]
    assert workloads
    assert all(w.stored is not None for w in workloads)


def test_facts_read_at_once_are_each_readers_answer(tmp_path: Path) -> None:
    # facts_of reads the arguments once for all its facts: each must be what its own reader
    # (layer_key, layer_facts, short_args, flops, operator_family) says.
    with _imported(tmp_path / "t.db") as store:
        workloads = store.layer_inputs()[1]
    assert any(w.stored is not None and w.stored.flops is not None for w in workloads)
    for w in workloads:
        facts = _recomputed(w)
        args = json.loads(w.args_json)
        assert facts.layer_key == layer_key(w.task_name, w.template_key, args), w
        assert dict(facts.facts) == layer_facts(w.task_name, args), w
        assert facts.family == operator_family(w.task_name, w.template_key), w
        assert facts.flops == flops(w.task_name, w.template_key, args), w
        if w.version != ANSOR_VERSION:
            assert facts.shapes == short_args(w.task_name, args), w


@pytest.mark.parametrize(
    "text",
    [
        '[["TENSOR",[1,64,56,56],"float32"],[1,1],"NCHW"]',
        "[]",
        " [1, 2] ",
        '[1e400, -0.0, "\\u00e9"]',
    ],
    ids=["canonical", "empty", "spaced", "special-values"],
)
def test_stored_arguments_decode_as_json_loads_decodes_them(text: str) -> None:
    facts = WorkloadFacts("key", {}, "conv2d", "1x64", None)
    info = WorkloadInfo(1, "conv2d_nchw.cuda", "", text, "0.2", None, facts)
    assert info.args == json.loads(text)
    assert info.args is not info.args  # a new list each time


@pytest.mark.parametrize("text", ["[1] x", "[1", ""])
def test_stored_arguments_that_are_not_json_raise_as_json_loads_does(text: str) -> None:
    facts = WorkloadFacts("key", {}, "conv2d", "1x64", None)
    info = WorkloadInfo(1, "conv2d_nchw.cuda", "", text, "0.2", None, facts)
    with pytest.raises(json.JSONDecodeError):
        info.args  # noqa: B018


@pytest.mark.parametrize(
    "dtype, size",
    [
        ("float32", 64),
        ("f\u00e9", 64),  # non-ASCII: escaped
        ("f\x7f", 64),  # DEL: escaped
        ('f"\\\n', 64),  # a quote, a backslash, a line end
        ("float32", 2**40),  # in/out channels beyond 64 bits
    ],
    ids=["plain", "non-ascii", "del", "escapes", "huge-channels"],
)
def test_the_stored_facts_text_is_json_dumps_of_the_facts(dtype: str, size: int) -> None:
    args: list[object] = [["TENSOR", [1, 32, 56, 56], dtype], ["TENSOR", [size, size, 3, 3], dtype]]
    args += [[1, 1], [1, 1, 1, 1], [1, 1], "float32"]
    facts = computed("depthwise_conv2d_nchw.cuda", "", json.dumps(args), "0.2", None)
    text = encoded(facts)[1]
    assert text == json.dumps(dict(facts.facts), separators=(",", ":"))
    assert "in_channels" in text
