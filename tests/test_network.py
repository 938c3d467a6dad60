"""network: occurrences, totals and layouts from graph-tuner outputs (real ones)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CORPUS, DATA, REPO, SAMPLE_LOGS, require_shared, runner
from tests.test_ansor import ansor_line
from tunelog import api
from tunelog.cli import app
from tunelog.network import read_graph_log
from tunelog.store import Store

GRAPH = DATA / "network" / "graph224.log"
KERNEL = DATA / "network" / "kernel224.log"
TLCBENCH = "tlc-pack__TLCBench/saved_logs/2020_01_11/autotvm/platinum-8124m/"
TLCBENCH += "resnet_50-B1-float32.graph.log"


def test_a_graph_log_counts_layer_occurrences_in_network_order() -> None:
    graph = read_graph_log(GRAPH.read_bytes().splitlines())
    assert (graph.occurrences, len(graph.layers), graph.rejected) == (21, 15, [])
    assert [layer.first_line for layer in graph.layers][:4] == [1, 2, 3, 4]
    stem = graph.layers[0]
    assert (stem.occurrences, stem.layouts["layout:data"], stem.layouts["layout:out"]) == (
        1,
        "NCHW3c",
        "NCHW8c",
    )
    assert graph.total == pytest.approx(
        sum(layer.latency * layer.occurrences for layer in graph.layers)
    )
    assert sum(graph.share(layer) for layer in graph.layers) == pytest.approx(1.0)


def test_one_workload_kept_with_several_configs_is_one_layer_per_config() -> None:
    graph = read_graph_log(GRAPH.read_bytes().splitlines())
    same = [layer for layer in graph.layers if "[64,64,3,3]" in layer.args_json]
    assert sorted((layer.config_index, layer.occurrences) for layer in same) == [
        (0, 1),
        (2, 2),
        (3, 1),
    ]


def test_with_the_kernel_log_each_layer_gets_its_best_and_best_per_layout(tmp_path: Path) -> None:
    with Store(tmp_path / "k.db") as store:
        api.import_paths(store, [str(KERNEL)])
        graph = api.network(str(GRAPH), store)
    assert all(layer.kernel_best is not None for layer in graph.layers)
    assert all(layer.latency >= (layer.kernel_best or 0) for layer in graph.layers)
    second = graph.layers[1]  # 64x64x3x3: the graph tuner kept NCHW8c, 7 % slower than NCHW16c
    assert second.best_per_layout == pytest.approx({"NCHW8c": 107e-6, "NCHW16c": 100e-6})
    assert graph.kernel_total is not None and graph.kernel_total < graph.total


def test_kernel_bests_measured_on_another_machine_are_warned_about(tmp_path: Path) -> None:
    # The kernel log retargeted to another CPU: its bests answer the graph's target (the cpu
    # key) but were measured elsewhere; the graph keeps its own latencies.
    target = json.loads(KERNEL.read_text().splitlines()[0])["input"][0]
    other = tmp_path / "other.log"
    other.write_text(KERNEL.read_text().replace(json.dumps(target), '"llvm -mcpu=znver3"'))
    with Store(tmp_path / "k.db") as store:
        api.import_paths(store, [str(other)])
        graph = api.network(str(GRAPH), store)
        with Store(tmp_path / "same.db") as same:
            api.import_paths(same, [str(KERNEL)])
            assert api.network(str(GRAPH), same).kernel_warnings == []
    assert all(layer.kernel_best is not None for layer in graph.layers)
    (warning,) = graph.kernel_warnings
    assert warning.startswith(f"answer for {target!r} was measured on 'llvm -mcpu=znver3' (")


def test_the_fastest_kernel_total_takes_the_graph_record_when_the_database_is_slower(
    tmp_path: Path,
) -> None:
    # A kernel log of a slower run: "with each layer's fastest kernel" came out above the
    # graph's own total, and the footer called the difference layout transforms.
    slower = tmp_path / "slower.log"
    lines = []
    for line in KERNEL.read_text().splitlines():
        record = json.loads(line)
        record["result"][0] = [cost * 3 for cost in record["result"][0]]
        lines.append(json.dumps(record))
    slower.write_text("\n".join(lines) + "\n")
    with Store(tmp_path / "k.db") as store:
        api.import_paths(store, [str(slower)])
        graph = api.network(str(GRAPH), store)
    assert all(layer.kernel_best is not None for layer in graph.layers)
    assert graph.kernel_total == pytest.approx(graph.total)


def test_best_per_layout_is_the_answering_machines_when_the_graph_target_has_no_trials(
    tmp_path: Path,
) -> None:
    # Measured under a -model: the graph's target (no model) is another group, without trials
    # of its own, and the column was empty beside each kernel best those records answer.
    target = json.loads(KERNEL.read_text().splitlines()[0])["input"][0]
    other = tmp_path / "other.log"
    measured_on = '"llvm -keys=cpu -mcpu=znver3 -model=epyc"'
    other.write_text(KERNEL.read_text().replace(json.dumps(target), measured_on))
    with Store(tmp_path / "k.db") as store:
        api.import_paths(store, [str(other)])
        graph = api.network(str(GRAPH), store)
    second = graph.layers[1]
    assert second.best_per_layout == pytest.approx({"NCHW8c": 107e-6, "NCHW16c": 100e-6})
    assert all(min(layer.best_per_layout.values()) == layer.kernel_best for layer in graph.layers)


def test_without_a_database_the_kernel_columns_stay_empty() -> None:
    graph = api.network(str(GRAPH))
    assert graph.kernel_total is None and graph.layers[0].best_per_layout == {}


def test_tlcbench_resnet50_graph_log_counts_53_occurrences() -> None:
    require_shared()
    graph = read_graph_log((CORPUS / TLCBENCH).read_bytes().splitlines())
    assert (graph.occurrences, len(graph.layers), graph.doubts) == (53, 22, [])
    by_shape = {layer.args_json: layer.occurrences for layer in graph.layers}
    key = '[["TENSOR",[1,64,56,56],"float32"],["TENSOR",[256,64,1,1],"float32"]'
    assert [n for args, n in by_shape.items() if args.startswith(key)] == [4]


def test_network_command_prints_totals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("COLUMNS", raising=False)
    db = str(tmp_path / "k.db")
    runner.invoke(app, ["--db", db, "import", str(KERNEL)])
    result = runner.invoke(app, ["--db", db, "network", str(GRAPH)])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[2] == (
        "1       1x3x224x224 * 64x3x7x7 s2 p3     1    0         NCHW3c -> NCHW8c    100.0 us   "
        "4.6 %    100.0 us       NCHW3c 100.0 us"
    )
    assert lines[-2:] == [
        "network conv time with the graph tuner's configs: 2.18 ms (21 conv layer occurrences, "
        "12 distinct in 15 rows)",
        "with each layer's fastest kernel: 2.10 ms; the difference pays for layout transforms "
        "between layers, which no log records",
    ]


def test_totals_without_a_graph_log_count_each_layer_once(tmp_path: Path) -> None:
    with Store(tmp_path / "k.db") as store:
        api.import_paths(store, [str(DATA / "diagnose" / "partial224.log")])
        totals = {t.group.label: t for t in api.network_totals(store)}
    cpu = totals["cpu"]
    # The two all-failed layers have no winner; one has only v0.1 records, which TVM >= 0.7
    # skips: three run a fallback config (rules.untuned), out of the total.
    assert (len(cpu.layers), cpu.untuned) == (5, 3)
    assert cpu.total == pytest.approx(sum(s.latency for s in cpu.layers))
    assert cpu.layers[0].latency == max(s.latency for s in cpu.layers)  # slowest first
    assert sum(s.share for s in cpu.layers) == pytest.approx(1.0)
    assert set(totals) == {"cpu", "arm_cpu,cpu (rk3399)", "cuda,gpu (t4)"}


def test_network_totals_command_says_occurrences_are_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("COLUMNS", raising=False)
    db = str(tmp_path / "k.db")
    runner.invoke(app, ["--db", db, "import", str(KERNEL)])
    result = runner.invoke(app, ["--db", db, "network"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == (
        "cpu: total 1.20 ms over 12 layer(s); each layer counted once: a kernel log cannot count "
        "occurrences (a graph-tuner output can: tunelog network GRAPH_LOG)"
    )


def test_a_group_of_only_untuned_layers_has_no_total(tmp_path: Path) -> None:
    """Every trial failed: 'total 0.0 us over 0 layer(s)' read as a network taking no time."""
    line = json.loads((SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[0])
    line["result"] = [[1e9], 6, 10.0, 1.6e9]
    log = tmp_path / "failed.log"
    log.write_text(json.dumps(line) + "\n")
    db = str(tmp_path / "f.db")
    runner.invoke(app, ["--db", db, "import", str(log)])
    result = runner.invoke(app, ["--db", db, "network"])
    assert result.stdout.splitlines()[-1].startswith(
        "cpu: no total over 0 layer(s), 1 untuned layer(s) not counted; "
    )


def test_the_report_shows_totals_per_target_group(tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    out = tmp_path / "r.html"
    with Store(tmp_path / "k.db") as store:
        api.import_paths(store, [str(DATA / "diagnose" / "partial224.log")])
        api.write_report(store, str(out))
    section = out.read_text().split("<h2>Totals per target group</h2>")[1].split("<h2>")[0]
    assert "a kernel log cannot count how often the network runs a layer" in section
    assert (
        '<tr><td>cpu</td><td data-v="0.0005">500.0 us</td><td data-v="5">5</td>'
        '<td data-v="3">3</td>' in section
    )


def _gzipped(path: Path) -> Path:
    import gzip

    path.write_bytes(gzip.compress(GRAPH.read_bytes()))
    return path


def _cr_ended(path: Path) -> Path:
    path.write_bytes(GRAPH.read_bytes().replace(b"\n", b"\r"))
    return path


def _with_a_giant_line(path: Path) -> Path:
    from tunelog.linesplit import MAX_LINE_BYTES

    path.write_bytes(b"x" * (MAX_LINE_BYTES + 1) + b"\n" + GRAPH.read_bytes())
    return path


@pytest.mark.parametrize("make", [_gzipped, _cr_ended, _with_a_giant_line])
def test_a_graph_log_is_read_as_an_import_reads_a_log(
    tmp_path: Path, make: Callable[[Path], Path]
) -> None:
    # Found by review: `network` opened the file raw (no gzip, no CR, no line cap: 5 GB).
    expected = read_graph_log(GRAPH.read_bytes().splitlines())
    graph = api.network(str(make(tmp_path / "graph.log")))
    assert (graph.occurrences, len(graph.layers)) == (expected.occurrences, len(expected.layers))
    assert all("longer than the limit" in reason for _, reason in graph.rejected)


def test_a_graph_log_from_stdin(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["--db", str(tmp_path / "none.db"), "network", "--json", "-"], input=GRAPH.read_bytes()
    )
    assert result.exit_code == 0, result.output
    assert '"occurrences": 21' in result.stdout


NETWORK_READS = (
    "network reads a graph tuner's output log (the database, with the kernel log, is --db; "
    "without a file, network totals it)"
)


@pytest.mark.parametrize(
    ("content", "what"),
    [
        (b"", "(it looks like an empty file) holds no AutoTVM record"),
        (b"# Graph\n\nnot yet\n", "(it looks like Markdown text) holds no AutoTVM record; 1 "),
        (None, "(it looks like an SQLite database) holds no AutoTVM record; "),
        (
            (ansor_line() + "\n").encode(),
            "(it holds auto_scheduler records, which no graph tuner writes) holds no AutoTVM "
            "record; 1 line(s) rejected",
        ),
    ],
    ids=["empty", "markdown", "database", "auto_scheduler"],
)
def test_a_file_holding_no_record_is_refused_as_no_graph_log(
    tmp_path: Path, content: bytes | None, what: str
) -> None:
    """Not a graph log: one Error: line saying what it is, exit 1 (as import refuses it), not
    warnings and an empty table with exit 0."""
    path = tmp_path / ("given.db" if content is None else "given.md" if content else "given.log")
    if content is None:
        with Store(path):
            pass
    else:
        path.write_bytes(content)
    result = runner.invoke(app, ["--db", str(tmp_path / "none.db"), "network", str(path)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(f"Error: {path} {what}")
    assert result.stderr.endswith(f": {NETWORK_READS}\n")
    assert len(result.stderr.splitlines()) == 1


def test_a_real_graph_log_raises_no_doubt_and_a_kernel_log_does() -> None:
    # Found by review: a 200-trial kernel log read as 194 "occurrences" without a word.
    assert read_graph_log(GRAPH.read_bytes().splitlines()).doubts == []
    kernel = read_graph_log((SAMPLE_LOGS / "x86_mini_llvm.log").read_bytes().splitlines())
    assert kernel.doubts == [
        "tasks that are no convolution (dense_nopack.x86, dense_pack.x86)",
        "6 failed trial(s)",
    ]


def test_the_footer_counts_distinct_layers_apart_from_their_rows(tmp_path: Path) -> None:
    """TLCBench's resnet-50 graph gives two layers two configs each (22 rows of 20 layers):
    the footer used to call the 22 rows '22 distinct'."""
    require_shared()
    db = str(tmp_path / "t.db")
    result = runner.invoke(app, ["--db", db, "network", str(CORPUS / TLCBENCH)])
    assert result.exit_code == 0, result.stderr
    assert "(53 conv layer occurrences, 20 distinct in 22 rows)" in result.stdout


def test_the_footer_names_the_rows_the_kernel_log_lacks(tmp_path: Path) -> None:
    kernel = tmp_path / "part.log"
    kernel.write_text(
        "".join(line for line in KERNEL.open() if "[1, 3, 224, 224]" not in line)  # the stem
    )
    db = str(tmp_path / "t.db")
    runner.invoke(app, ["--db", db, "import", str(kernel)])
    result = runner.invoke(app, ["--db", db, "network", str(GRAPH)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith(
        "\nimport the kernel log of the 1 of 15 rows without a kernel best (--db) to compare "
        "with each layer's fastest kernel; a kernel log alone cannot count occurrences\n"
    )


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x1f\x8b\x09\x00garbage", "Unknown compression method"),
        (None, "Compressed file ended before the end-of-stream marker was reached"),
    ],
)
def test_a_damaged_graph_log_is_one_error_line(
    tmp_path: Path, data: bytes | None, reason: str
) -> None:
    """A graph log is read whole: a truncated .gz printed 'Aborted!' (an EOFError), and a bad
    header was blamed on the output."""
    import gzip

    log = tmp_path / "graph.log.gz"
    log.write_bytes(data if data is not None else gzip.compress(GRAPH.read_bytes())[:300])
    result = runner.invoke(app, ["--db", str(tmp_path / "t.db"), "network", str(log)])
    assert (result.exit_code, result.stderr) == (
        1,
        f"Error: cannot read {log}: it is damaged ({reason}); give a complete graph tuner log\n",
    )


def _sample_lines_of(task: str) -> list[bytes]:
    """The sample x86 log's lines of one template."""
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_bytes().splitlines()
    return [line for line in lines if f'"{task}"'.encode() in line]


def test_two_templates_of_one_layer_are_one_distinct_layer() -> None:
    # The footer counted dense_nopack and dense_pack of one dense layer as two layers.
    lines = _sample_lines_of("dense_nopack.x86")[:1] + _sample_lines_of("dense_pack.x86")[:1]
    graph = read_graph_log(lines)
    assert (len(graph.layers), graph.distinct_layers) == (2, 1)
