"""Relay's strategy table: which templates compete for a target, and warnings across machines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tunelog
from tests.conftest import CORPUS, SHARED, require_shared, runner
from tunelog import api
from tunelog.machines import cross_machine_warning, machine_differences
from tunelog.store import Store
from tunelog.strategies import (
    Offer,
    may_offer,
    offered_templates,
    relay_offers,
    strategy_note,
)
from tunelog.strategy_table import (
    KNOWN_TEMPLATES,
    NOT_OFFERED,
    STRATEGIES,
)
from tunelog.targets import parse_target
from tunelog.workloads import layer_facts

TOPHUB = CORPUS / "tophub"


def test_every_registered_template_is_in_the_table_or_documented_as_not_offered() -> None:
    listing = SHARED / "autotvm_templates.txt"
    if not listing.is_file():
        pytest.skip("../shared/autotvm_templates.txt is not beside this checkout")
    registered = set(listing.read_text().split())
    assert len(registered) == 141
    assert registered - KNOWN_TEMPLATES == set()


def test_no_template_is_both_offered_and_documented_as_not_offered() -> None:
    offered = {name for table in STRATEGIES.values() for names in table.values() for name in names}
    assert offered & set(NOT_OFFERED) == set()


@pytest.mark.parametrize(
    ("target", "offered", "not_offered"),
    [
        (
            "cuda -model=t4",
            ["conv2d_nchw.cuda", "conv2d_nchw_winograd.cuda", "dense_small_batch.gpu"],
            ["conv2d_nchwc.image2d", "conv2d_nchw_spatial_pack.mali", "conv2d_NCHWc.x86"],
        ),
        (
            "opencl -device=adreno",
            ["conv2d_nchwc.image2d", "conv2d_nchw.cuda", "dense_small_batch.gpu"],
            ["conv2d_nchw_winograd.cuda", "conv2d_nchw_spatial_pack.mali"],
        ),
        (
            "opencl -device=mali",
            ["conv2d_nchw_spatial_pack.mali", "dense.mali", "batch_matmul.cuda"],
            ["conv2d_nchw.cuda", "dense_small_batch.gpu", "conv2d_nchwc.image2d"],
        ),
        (
            "opencl -device=bifrost",
            ["conv2d_nchw_spatial_pack.bifrost", "dense.bifrost"],
            ["conv2d_nchw_spatial_pack.mali", "conv2d_nchw.cuda"],
        ),
        ("opencl", ["conv2d_nchw.cuda", "conv2d_nchw_winograd.cuda"], ["conv2d_nchwc.image2d"]),
        ("vulkan -model=v1000", ["conv2d_nchw.cuda", "depthwise_conv2d_nchw.cuda"], ["dense.mali"]),
        (
            "rocm -model=gfx900",
            ["conv2d_nchw.cuda", "conv2d_nchw_miopen.rocm", "dense_rocblas.rocm"],
            ["conv2d_nchw_spatial_pack.mali"],
        ),
        (
            "opencl -device=intel_graphics",
            ["conv2d_NCHWc.intel_graphics", "batch_matmul.cuda"],
            ["conv2d_nchw.cuda", "conv2d_NCHWc.x86"],
        ),
        (
            "llvm -mcpu=skylake-avx512",
            ["conv2d_NCHWc.x86", "dense_pack.x86", "batch_matmul.x86"],
            ["conv2d_nchw_spatial_pack.arm_cpu", "conv2d_nchw.cuda", "dense_nopack.riscv"],
        ),
        # arm_cpu's conv2d strategy offers the x86 NCHWc template; batch_matmul comes from x86.
        (
            "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu",
            [
                "conv2d_nchw_spatial_pack.arm_cpu",
                "conv2d_NCHWc.x86",
                "batch_matmul.x86",
                "dense_pack.x86",
            ],
            ["group_conv2d_nchw.x86", "conv2d_nchw_dnnl.x86", "conv2d_nchw.cuda"],
        ),
        (
            "llvm -mtriple=aarch64-linux-gnu",
            ["conv2d_nchw_winograd.arm_cpu"],
            ["conv2d_nchw_dnnl.x86"],
        ),
        (
            "hexagon",
            ["conv3d_ncdhw.x86"],
            ["dense_pack.x86", "batch_matmul.x86", "conv2d_NCHWc.x86"],
        ),
    ],
)
def test_relay_offers_a_target_the_templates_of_its_first_registered_key(
    target: str, offered: list[str], not_offered: list[str]
) -> None:
    keys = parse_target(target).keys
    assert all(may_offer(keys, name) for name in offered), keys
    assert not any(may_offer(keys, name) for name in not_offered), keys


@pytest.mark.parametrize(
    ("target", "note"),
    [
        (
            "ext_dev -device=vta -keys=cpu",
            "target key(s) vta have no relay strategy in TVM: relay's choice is read from keys "
            "cpu, as TVM skips such a key; a template only a strategy registered for it outside "
            "TVM would offer competes conditionally",
        ),
        (
            "llvm -keys=foo",
            "no relay strategy table for target keys foo: every template competes, conditionally",
        ),
        (
            "llvm -device=riscv_cpu",
            "target key(s) riscv_cpu have no relay strategy in TVM: relay's choice is read from "
            "keys cpu, as TVM skips such a key; a template only a strategy registered for it "
            "outside TVM would offer competes conditionally",
        ),
    ],
)
def test_unknown_keys_are_skipped_and_the_note_says_so(target: str, note: str) -> None:
    keys = parse_target(target).keys
    assert offered_templates(keys) is None
    assert may_offer(keys, "conv2d_nchw.cuda") and may_offer(keys, "conv2d_packed.vta")
    assert strategy_note(keys) == note
    assert strategy_note(("cuda", "gpu")) is None


@pytest.mark.parametrize(
    ("keys", "task", "offer"),
    [
        # the other keys decide, as relay skips a key with no strategy: cuda's templates...
        (("foo", "cuda", "gpu"), "conv2d_nchw.cuda", Offer(True)),
        # ...and one only a strategy registered for foo outside TVM could offer, conditionally
        (
            ("foo", "cuda", "gpu"),
            "conv2d_nchw_spatial_pack.mali",
            Offer(True, False, ("a strategy registered for key foo",)),
        ),
        (("foo",), "conv2d_nchw.cuda", Offer(True, False, ("a strategy registered for key foo",))),
        (("foo", "cuda", "gpu"), "topi_nn_conv2d", Offer(True)),  # an unknown template
    ],
)
def test_a_target_with_an_unknown_key_is_read_by_its_other_keys(
    keys: tuple[str, ...], task: str, offer: Offer
) -> None:
    """`cuda -device=foo` (keys foo,cuda,gpu): relay offers conv2d_nchw.cuda only (TVM 0.16's
    strategy, checked); tunelog offered every template, certainly, and --winners-only dropped
    the cuda record relay uses because a mali template was faster."""
    facts = layer_facts(
        task,
        [["TENSOR", [1, 512, 14, 14], "float32"], ["TENSOR", [128, 512, 1, 1], "float32"],
         [1, 1], [0, 0, 0, 0], [1, 1], "float32"],
    )  # fmt: skip
    assert relay_offers(keys, task, facts) == offer


def _unknown_key_log(tmp_path: Path) -> Path:
    """One layer measured on `cuda -device=foo` (conv2d_nchw.cuda, 200 us) and on a mali
    (its spatial pack template, 100 us), which relay never offers a cuda target."""
    args = [["TENSOR", [1, 512, 14, 14], "float32"], ["TENSOR", [128, 512, 1, 1], "float32"],
            [1, 1], [0, 0, 0, 0], [1, 1], "float32"]  # fmt: skip
    log = tmp_path / "two.log"
    log.write_text(
        "".join(
            json.dumps(
                {
                    "input": [target, task, args, {}],
                    "config": {"index": index, "code_hash": None, "entity": []},
                    "result": [[cost], 0, 1.0, 1700000000],
                    "version": 0.2,
                    "tvm_version": "0.16.0",
                }
            )
            + "\n"
            for target, task, index, cost in [
                ("cuda -device=foo", "conv2d_nchw.cuda", 1, 2e-4),
                ("opencl -device=mali", "conv2d_nchw_spatial_pack.mali", 2, 1e-4),
            ]
        )
    )
    return log


def test_winners_only_keeps_the_template_relay_offers_a_target_with_an_unknown_key(
    tmp_path: Path,
) -> None:
    log = _unknown_key_log(tmp_path)
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(log)])
        report = api.export(store, str(tmp_path / "out.log"), winners_only=True)
    assert (report.written, report.skipped_losing_templates) == (2, 0)
    assert '"conv2d_nchw.cuda"' in (tmp_path / "out.log").read_text()


@pytest.mark.parametrize("task", ["topi_nn_conv2d", "conv2d_packed.vta", "my_matmul"])
def test_unknown_templates_are_kept_for_every_target(task: str) -> None:
    assert may_offer(("cuda", "gpu"), task)
    assert may_offer(("mali", "opencl", "gpu"), task)


@pytest.mark.parametrize(
    ("asked", "measured", "differences"),
    [
        ("llvm", "llvm -mcpu=skylake-avx512", ["-mcpu skylake-avx512 vs none"]),
        ("cuda -model=t4 -arch=sm_75", "cuda -model=t4", ["-arch none vs sm_75"]),
        ("opencl -device=adreno", "cuda -model=1080ti",
         ["target kind cuda vs opencl", "-model 1080ti vs none", "-device none vs adreno"]),
        ("llvm -device=arm_cpu -target=aarch64-linux-gnu",
         "llvm -device=arm_cpu -mtriple=aarch64-linux-gnu", []),
        ("llvm -mcpu=a -libs=cblas", "llvm -mcpu=a", []),
        ("llvm -mtriple=x86_64 -mcpu=a", "llvm -mcpu=a", ["-mtriple none vs x86_64"]),
    ],
)  # fmt: skip
def test_machine_differences_name_the_options_that_identify_a_machine(
    asked: str, measured: str, differences: list[str]
) -> None:
    assert machine_differences(parse_target(asked), parse_target(measured)) == differences
    warning = cross_machine_warning(asked, measured)
    assert (warning is None) == (not differences)


# -- on real logs -------------------------------------------------------------------------------


def _both(tmp_path: Path) -> Store:
    store = Store(tmp_path / "both.db")
    tunelog.import_paths(store, [str(TOPHUB / "cuda_v0.10.log"), str(TOPHUB / "adreno_v0.02.log")])
    return store


@pytest.mark.slow
def test_cuda_groups_name_only_cuda_templates_beside_adreno_logs(tmp_path: Path) -> None:
    require_shared()
    with _both(tmp_path) as store:
        found = api.layers(store)
        nano = api.layers(store, tunelog.Filters(model="jetson-nano"))
    cuda = [lay for lay in found if lay.group.keys == ("cuda", "gpu")]
    assert cuda and nano
    for layer in cuda + nano:
        names = {t.workload.task_name for t in layer.templates}
        assert all(name.endswith((".cuda", ".gpu")) for name in names), names
        assert layer.winner is not None
    adreno = [lay for lay in found if "adreno" in lay.group.keys]
    assert any(lay.winner and lay.winner.name.endswith(".image2d") for lay in adreno)


@pytest.mark.slow
def test_no_layer_of_the_whole_corpus_names_a_winner_its_strategy_cannot_offer(
    tmp_path: Path,
) -> None:
    require_shared()
    with Store(tmp_path / "all.db") as store:
        tunelog.import_paths(store, [str(CORPUS)])
        found = api.layers(store)
    assert len(found) > 3000
    offending = [
        (lay.group.label, lay.winner.workload.task_name)
        for lay in found
        if lay.winner is not None and not may_offer(lay.group.keys, lay.winner.workload.task_name)
    ]
    assert offending == []
    # ... and the table did decide something: cross-device templates were ruled out.
    assert sum(1 for lay in found if lay.group.keys == ("cuda", "gpu")) > 0


def test_a_template_tuned_on_a_target_that_never_offers_it_is_listed_but_never_wins(
    tmp_path: Path,
) -> None:
    line = {
        "input": ["opencl -device=mali", "conv2d_nchw.cuda",
                  [["TENSOR", [1, 8, 8, 8], "float32"], ["TENSOR", [8, 8, 3, 3], "float32"],
                   [1, 1], [1, 1, 1, 1], [1, 1], "float32"], {}],
        "config": {"index": 1, "code_hash": None, "entity": []},
        "result": [[0.001], 0, 1.0, 1.6e9], "version": 0.2, "tvm_version": "0.9.dev0",
    }  # fmt: skip
    log = tmp_path / "mali.log"
    log.write_text(json.dumps(line) + "\n")
    with Store(tmp_path / "m.db") as store:
        tunelog.import_paths(store, [str(log)])
        (layer,) = api.layers(store)
        (untuned,) = api.untuned(store)
        data = api.layer_as_dict(layer)
    assert layer.winner is None and untuned.key == layer.key
    assert data["templates"][0]["offered"] is False  # type: ignore[index]


def test_an_adreno_target_asks_cuda_templates_only_below_4_output_channels(tmp_path: Path) -> None:
    """The issue's case: CUDA records of the same shapes must not win Adreno's layers."""
    require_shared()
    with _both(tmp_path) as store:
        found = api.layers(store, tunelog.Filters(for_target="opencl -device=adreno -model=x"))
    cuda_wins = [lay for lay in found if lay.winner and lay.winner.name == "conv2d_nchw.cuda"]
    texture_wins = [lay for lay in found if lay.winner and lay.winner.name.endswith(".image2d")]
    assert len(texture_wins) > 400
    assert cuda_wins  # the 2-channel heads: only conv2d_nchw.cuda is asked
    for layer in cuda_wins:
        (kernel, *_) = layer.key.split("|")[3:]
        assert int(kernel.split("x")[0]) < 4, layer.key
        assert not any(t.offered for t in layer.templates if t.name.endswith(".image2d"))


def _conv_record(task: str, extra: list[object], cost: float, index: int) -> str:
    args = [
        ["TENSOR", [1, 16, 8, 8], "float32"],
        ["TENSOR", [16, 16, 3, 3], "float32"],
        [1, 1],
        [1, 1, 1, 1],
        [1, 1],
        *extra,
        "float32",
    ]
    return json.dumps({
        "input": ["cuda -model=t4", task, args, {}],
        "config": {"index": index, "code_hash": None, "entity": []},
        "result": [[cost], 0, 1.0, 1.6e9], "version": 0.2, "tvm_version": "0.9.dev0",
    })  # fmt: skip


def test_a_template_offered_only_with_some_libs_never_drops_another_from_winners_only(
    tmp_path: Path,
) -> None:
    log = tmp_path / "cudnn.log"
    log.write_text(
        "\n".join(
            [
                _conv_record("conv2d_nchw.cuda", [], 3e-5, 1),
                _conv_record("conv2d_nchw_winograd.cuda", [], 2e-5, 2),
                _conv_record("conv2d_cudnn.cuda", [1, "NCHW"], 1e-5, 3),
            ]
        )
        + "\n"
    )
    out = tmp_path / "w.log"
    with Store(tmp_path / "c.db") as store:
        tunelog.import_paths(store, [str(log)])
        (layer,) = api.layers(store)
        data = api.layer_as_dict(layer)
        report = api.export(store, str(out), winners_only=True)
    assert layer.winner is not None and layer.winner.name == "conv2d_cudnn.cuda"
    conditions = {t["template"]: t["offer_condition"] for t in data["templates"]}  # type: ignore[attr-defined]
    assert conditions == {
        "conv2d_cudnn.cuda": "offered depending on the target kind, -libs=cudnn",
        "conv2d_nchw_winograd.cuda": None,
        "conv2d_nchw.cuda": None,
    }
    # without -libs=cudnn relay picks winograd, which stays; the slower direct one goes
    kept = {json.loads(line)["input"][1] for line in out.read_text().splitlines()}
    assert kept == {"conv2d_cudnn.cuda", "conv2d_nchw_winograd.cuda"}
    assert report.skipped_losing_templates == 1


def _dense_record(target: str, cost: float, index: int, batch: int = 1, error_no: int = 0) -> str:
    return json.dumps(
        {
            "input": [target, "dense_pack.x86",
                      [["TENSOR", [batch, 512], "float32"], ["TENSOR", [1000, 512], "float32"],
                       None, "float32"], {}],
            "config": {"index": index, "code_hash": None, "entity": []},
            "result": [[cost], error_no, 1.0, 1.6e9], "version": 0.2,
            "tvm_version": "0.9.dev0",
        }
    )  # fmt: skip


BOX_A = "llvm -mcpu=skylake-avx512"
BOX_B = "llvm -mcpu=znver3"


def test_best_warns_when_one_box_gets_another_boxs_config(tmp_path: Path) -> None:
    log = tmp_path / "boxes.log"
    log.write_text(_dense_record(BOX_A, 2.88e-5, 1) + "\n" + _dense_record(BOX_B, 2.877e-4, 2))
    with Store(tmp_path / "b.db") as store:
        tunelog.import_paths(store, [str(log)])
        (row,) = store.best(tunelog.Filters(target_key="cpu"))
        (asked_b,) = store.best(tunelog.Filters(for_target=BOX_B))
        (asked_a,) = store.best(tunelog.Filters(for_target=BOX_A))
        (layer,) = api.layers(store)
        (untuned,) = api.untuned(store)
    assert row.target == BOX_A
    assert row.warnings == [
        f"answer for {BOX_B!r} was measured on {BOX_A!r} (-mcpu skylake-avx512 vs znver3): "
        "re-tune on this machine, or filter with --target"
    ]
    assert asked_b.warnings == row.warnings and asked_a.warnings == []
    assert layer.warnings == row.warnings and untuned is not None


BOX_C = "llvm -mcpu=cascadelake"


@pytest.mark.parametrize(
    ("for_target", "warned"),
    [
        # each row is warned about the boxes that measured its own workload (batch)
        (None, {1: [BOX_B], 2: [], 3: [BOX_C, BOX_B], 4: []}),  # by target string
        (BOX_C, {1: [BOX_C], 2: [BOX_C], 3: [BOX_C], 4: []}),
    ],
)
def test_best_warns_each_row_about_the_boxes_that_measured_its_workload(
    tmp_path: Path, for_target: str | None, warned: dict[int, list[str]]
) -> None:
    # (box, batch, cost), workloads interleaved in import order; the fastest box answers.
    # Batch 5 only failed (on box C): no row, and box C measured nothing of batch 2.
    measured = [(BOX_A, 1, 1e-5), (BOX_C, 5, 1e-5), (BOX_B, 2, 1e-5), (BOX_C, 3, 3e-5)]
    measured += [(BOX_A, 3, 1e-5), (BOX_C, 4, 1e-5), (BOX_B, 1, 5e-5), (BOX_B, 3, 2e-5)]
    log = tmp_path / "boxes.log"
    log.write_text(
        "\n".join(
            _dense_record(box, cost, i, batch, error_no=4 if batch == 5 else 0)
            for i, (box, batch, cost) in enumerate(measured)
        )
    )
    filters = tunelog.Filters(for_target=for_target)
    with Store(tmp_path / "b.db") as store:
        tunelog.import_paths(store, [str(log)])
        rows = list(store.each_best(filters))
        assert rows == store.best(filters) == api.best(store, filters)
    winners = {1: BOX_A, 2: BOX_B, 3: BOX_A, 4: BOX_C}
    got = {row.args[0][1][0]: (row.target, row.warnings) for row in rows}  # type: ignore[index]
    assert got == {
        batch: (winners[batch], [cross_machine_warning(box, winners[batch]) for box in boxes])
        for batch, boxes in warned.items()
    }


@pytest.mark.parametrize(
    ("b_failed", "warned"),
    [
        # -model=b is answered by its own model slot: warned about only for box B, whose
        # query (no model) gets -model=a's record through the cpu key
        (False, {"llvm -model=a": ["llvm -mcpu=znver3"], "llvm -model=b": []}),
        # -model=b's one record failed: its query gets -model=a's record too
        (True, {"llvm -model=a": ["llvm -mcpu=znver3", "llvm -model=b"]}),
    ],
)
def test_best_warns_only_about_the_targets_a_row_answers(
    tmp_path: Path, b_failed: bool, warned: dict[str, list[str]]
) -> None:
    log = tmp_path / "models.log"
    log.write_text(
        "\n".join(
            [
                _dense_record("llvm -model=a", 1e-5, 1),
                _dense_record("llvm -model=b", 2e-5, 2, error_no=4 if b_failed else 0),
                _dense_record("llvm -mcpu=znver3", 3e-5, 3),
            ]
        )
    )
    with Store(tmp_path / "m.db") as store:
        tunelog.import_paths(store, [str(log)])
        rows = store.best()
        # -model=a's row alone: the slots of the rows left out are looked up
        (alone,) = store.best(tunelog.Filters(model="a"))
    assert {row.target: row.warnings for row in rows} == {
        winner: [cross_machine_warning(asked, winner) for asked in targets]
        for winner, targets in warned.items()
    }
    assert alone.warnings == rows[0].warnings


def test_one_machine_gets_no_warning(tmp_path: Path) -> None:
    log = tmp_path / "one.log"
    log.write_text(_dense_record(BOX_A, 2.88e-5, 1) + "\n" + _dense_record(BOX_A, 3e-5, 2))
    with Store(tmp_path / "o.db") as store:
        tunelog.import_paths(store, [str(log)])
        (row,) = store.best()
        (layer,) = api.layers(store)
        assert api.untuned(store) == []
    assert row.warnings == [] and layer.warnings == []


UNTUNED_BOXES = """\
target    operator    shapes            templates       trials    errors    answered by
--------  ----------  ----------------  --------------  --------  --------  --------------------------------------------------------------------
cpu       dense       1x512 * 1000x512  dense_pack.x86  2                   dense_pack.x86 measured on 'llvm -mcpu=skylake-avx512' (boxes.log:1)
"""  # noqa: E501
BOXES_WARNING = (
    "warning: cpu dense 1x512 * 1000x512: answer for 'llvm -mcpu=znver3' was measured on "
    "'llvm -mcpu=skylake-avx512' (-mcpu skylake-avx512 vs znver3): re-tune on this machine, or "
    "filter with --target\n"
)


def test_untuned_lists_a_layer_answered_only_by_another_box(tmp_path: Path) -> None:
    from tunelog.cli import app

    log = tmp_path / "boxes.log"
    log.write_text(_dense_record(BOX_A, 2.88e-5, 1) + "\n" + _dense_record(BOX_B, 2.877e-4, 2))
    db = str(tmp_path / "cli.db")
    runner.invoke(app, ["--db", db, "import", str(log)])
    result = runner.invoke(app, ["--db", db, "untuned"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, UNTUNED_BOXES, BOXES_WARNING)
    result = runner.invoke(app, ["--db", db, "workloads", "--for-target", BOX_A])
    assert (result.exit_code, result.stderr) == (0, "")


def test_untuned_does_not_list_one_machine_spelled_two_ways(tmp_path: Path) -> None:
    """-mtriple given in one string only: maybe the same box; workloads warns, untuned not."""
    spelled = "llvm -mcpu=skylake-avx512 -mtriple=x86_64-pc-linux-gnu"
    log = tmp_path / "spellings.log"
    log.write_text(_dense_record(BOX_A, 2.88e-5, 1) + "\n" + _dense_record(spelled, 3e-5, 2))
    with Store(tmp_path / "s.db") as store:
        tunelog.import_paths(store, [str(log)])
        (layer,) = api.layers(store)
        assert layer.warnings  # the answer for `spelled` was measured on BOX_A
        assert api.untuned(store) == []
        assert api.untuned(store, tunelog.Filters(for_target=spelled)) == []
        assert api.untuned(store, tunelog.Filters(for_target="llvm -mcpu=znver3")) != []


def test_workloads_names_the_template_relay_offers_a_target_with_an_unknown_key(
    tmp_path: Path,
) -> None:
    """`cuda -device=foo`: relay (TVM 0.16) picks conv2d_nchw.cuda at 200 us; `workloads` named
    the faster mali template only a strategy registered for `foo` outside TVM could offer (found
    by a new user). It stays listed, conditional, and no margin is taken from it."""
    log = _unknown_key_log(tmp_path)
    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(log)])
        (layer,) = [lay for lay in tunelog.layers(store) if "foo" in lay.group.keys]
    assert layer.winner is not None and layer.winner.workload.task_name == "conv2d_nchw.cuda"
    assert [t.workload.task_name for t in layer.templates] == [
        "conv2d_nchw.cuda",
        "conv2d_nchw_spatial_pack.mali",
    ]
    assert layer.margin is None
