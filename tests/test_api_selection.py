"""The Python API under --source/--label: layers found in a selection keep answering from it.

`api.layers(store, Filters(label=...))` answers from a temporary database of the chosen files;
curves, knobs and convergence asked later about those layers must describe the same files, as
the CLI's `curve --label` does (found by review: they read the whole database's ids).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLE_LOGS
from tunelog import api
from tunelog.filters import Filters
from tunelog.layers import Layer
from tunelog.store import Store

SHORT = str(SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz")
FULL = str(SAMPLE_LOGS / "x86_mini_llvm.log")


def _described(store: Store, found: list[Layer]) -> list[object]:
    convergence = api.layer_convergence(store, found)
    out: list[object] = []
    for lay in found:
        for template in lay.templates:
            out.append((lay.key, template.workload.task_name, convergence.of(lay, template)))
        out.append([[(r.trial, r.line, r.cost) for r in c.rows] for c in api.curves(store, lay)])
        out.append([(k.values, k.coverage) for k in api.knobs(store, lay)])
    return out


def test_layers_found_under_a_label_answer_curves_knobs_and_convergence_from_that_label(
    tmp_path: Path,
) -> None:
    with Store(str(tmp_path / "both.db")) as both, Store(str(tmp_path / "alone.db")) as alone:
        api.import_paths(both, [FULL], label="full")
        api.import_paths(both, [SHORT], label="short")
        api.import_paths(alone, [SHORT])
        chosen = api.layers(both, Filters(label="short"))
        assert _described(both, chosen) == _described(alone, api.layers(alone))


@pytest.mark.parametrize(
    "filters", [Filters(label="short"), Filters(source="2")], ids=["label", "source"]
)
@pytest.mark.parametrize("given_layers", [True, False], ids=["layers given", "every layer"])
def test_convergence_under_a_selection_is_the_selected_files_own(
    tmp_path: Path, filters: Filters, given_layers: bool
) -> None:
    """`layer_convergence(store, filters=...)` without layers (as `workloads` asks before
    reading them one at a time) read every file's runs: 65 trials where the label's file has
    25 (found by a new user of the API)."""
    with Store(str(tmp_path / "both.db")) as both, Store(str(tmp_path / "alone.db")) as alone:
        api.import_paths(both, [FULL], label="full")
        api.import_paths(both, [SHORT], label="short")
        api.import_paths(alone, [SHORT])
        chosen = api.layers(both, filters)
        convergence = api.layer_convergence(both, chosen if given_layers else None, filters=filters)
        expected = api.layer_convergence(alone)
        assert [convergence.of_layer(lay) for lay in chosen] == [
            expected.of_layer(lay) for lay in api.layers(alone)
        ]


def test_curves_and_knobs_take_a_layer_or_its_name(tmp_path: Path) -> None:
    """As `tunelog curve NAME` and `knobs NAME` do (a string used to end in AttributeError)."""
    import pytest

    from tunelog.exceptions import UnknownLayerError

    with Store(tmp_path / "t.db") as store:
        api.import_paths(store, [str(SAMPLE_LOGS / "x86_mini_llvm.log")])
        (layer,) = [lay for lay in api.layers(store) if lay.shapes == "1x8192 * 10x8192"]
        by_name = api.curves(store, "1x8192 * 10x8192")
        assert [(c.template.name, len(c.rows)) for c in by_name] == [
            (c.template.name, len(c.rows)) for c in api.curves(store, layer)
        ]
        assert len(api.knobs(store, "1x8192 * 10x8192")) == len(api.knobs(store, layer)) == 2
        with pytest.raises(UnknownLayerError):
            api.curves(store, "no such layer")


def _retargeted(log: Path, out: Path, target: str, slower: float) -> Path:
    """`log`'s records measured on `target`, each run `slower` times as long, written to `out`."""
    import json

    lines = []
    for line in log.read_text().splitlines():
        record = json.loads(line)
        record["input"][0] = target
        record["result"][0] = [cost * slower for cost in record["result"][0]]
        lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


def test_best_and_export_under_target_answer_as_a_database_of_its_records_alone(
    tmp_path: Path,
) -> None:
    """Its records compete among themselves, as TVM given only them decides: in the whole
    database a faster machine's records held the shared `cpu` key slot, so `export --target`
    wrote none of them and a build for that target fell back on every layer it tuned."""
    own = _retargeted(
        Path(FULL), tmp_path / "znver3.log", "llvm -keys=cpu -mcpu=znver3", 2.0
    )  # no model: the key slot only
    with Store(tmp_path / "both.db") as both, Store(tmp_path / "alone.db") as alone:
        api.import_paths(both, [FULL, str(own)])
        api.import_paths(alone, [str(own)])
        chosen = Filters(target="llvm -keys=cpu -mcpu=znver3")
        rows = [(r.workload_id, r.config_index, r.slots) for r in api.best(both, chosen)]
        assert rows == [(r.workload_id, r.config_index, r.slots) for r in api.best(alone)]
        assert len(rows) >= 5
        api.export(both, str(tmp_path / "chosen.log"), filters=chosen)
        api.export(alone, str(tmp_path / "alone.log"))
    assert (tmp_path / "chosen.log").read_bytes() == (tmp_path / "alone.log").read_bytes()


CUDA_ONLY = Path(__file__).parent / "data" / "diagnose" / "cuda_only.log"
T4 = "cuda -keys=cuda,gpu -arch=sm_75 -max_num_threads=1024 -model=t4 -thread_warp_size=32"


@pytest.mark.parametrize(
    "beside",
    [
        [],  # alone: the whole database answers, filtered
        ["cuda -keys=cuda,gpu -model=t4"],  # its group's other target string: its trials count
        ["cuda -keys=cuda,gpu -model=v100"],  # slower, on its key slots: its warnings differ
    ],
    ids=["alone", "same-group", "rival"],
)
def test_target_answers_as_its_records_alone_whichever_way_it_is_read(
    tmp_path: Path, beside: list[str]
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    others = [
        str(_retargeted(CUDA_ONLY, logs / f"copy{n}.log", target, 3.0))
        for n, target in enumerate(beside)
    ]
    with Store(tmp_path / "all.db") as every, Store(tmp_path / "alone.db") as alone:
        api.import_paths(every, [FULL, str(CUDA_ONLY), *others])
        api.import_paths(alone, [str(CUDA_ONLY)])
        chosen = api.best(every, Filters(target=T4))
        expected = api.best(alone)
        api.export(every, str(tmp_path / "chosen.log"), filters=Filters(target=T4))
        api.export(alone, str(tmp_path / "alone.log"))
    shown = [(r.config_index, r.slots, r.trials, r.line, r.warnings) for r in chosen]
    assert shown == [(r.config_index, r.slots, r.trials, r.line, r.warnings) for r in expected]
    assert (tmp_path / "chosen.log").read_bytes() == (tmp_path / "alone.log").read_bytes()
