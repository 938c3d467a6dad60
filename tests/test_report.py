"""`tunelog report`: the page's content, its best-so-far curves, and the page in a real browser."""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import subprocess
import time
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tunelog
from tests.conftest import REPO, SAMPLE_LOGS, runner
from tunelog import api, reportfigures
from tunelog.cli import app
from tunelog.store import Store

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the sample logs."""
    work = tmp_path_factory.mktemp("report")
    db = str(work / "r.db")
    assert runner.invoke(app, ["--db", db, "import", str(SAMPLE_LOGS)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "report", str(work / "report.html")])
    assert result.exit_code == 0, result.stderr
    return work / "report.html"


# -- best so far ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trials", "points"),
    [
        ([], []),
        ([(6, 1e9)], []),  # failures only: no curve
        ([(0, 3.0)], [(1, 3.0)]),
        ([(0, 3.0), (0, 2.0), (0, 2.5)], [(1, 3.0), (2, 2.0), (3, 2.0)]),
        ([(1, 1e9), (0, 3.0), (6, 0.1), (0, 3.0)], [(2, 3.0), (4, 3.0)]),  # failures count
        ([(0, 2.0), (0, 2.0)], [(1, 2.0), (2, 2.0)]),  # a tie is no improvement
    ],
)
def test_best_so_far_steps(
    trials: list[tuple[int, float]], points: list[tuple[int, float]]
) -> None:
    from tunelog.layers import Layer, TargetGroup, TemplateResult
    from tunelog.workloadinfo import WorkloadFacts, WorkloadInfo

    layer = Layer(TargetGroup(("cpu",), "unknown", ("llvm",)), "k", "dense", "", [])
    facts = WorkloadFacts("k", {}, "dense", "", None)
    workload = WorkloadInfo(7, "dense_pack.x86", "", "[]", "0.2", None, facts)
    layer.templates = [TemplateResult(workload)]
    rows = [("llvm", 7, e, c) for e, c in trials]
    noise = [("cuda", 7, 0, 0.5), ("llvm", 8, 0, 0.5)]  # another target, another workload
    curves = reportfigures.best_so_far_curves(
        [*noise, *rows, *noise], [layer], [frozenset({"llvm"})]
    )
    assert curves == [points]


# -- content ---------------------------------------------------------------------------------------


def test_the_cli_says_what_it_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner.invoke(app, ["--db", "t.db", "import", str(SAMPLE_LOGS / "x86_mini_llvm.log")])
    result = runner.invoke(
        app, ["--db", "t.db", "report", "r.html", "--template", "dense_pack.x86"]
    )
    assert result.exit_code == 0
    assert result.stdout == ""
    # Only the selected template's failures (errors' rows are templates): dense_pack.x86's.
    assert re.fullmatch(
        r"wrote r\.html \(4\.\d MB\): 1 layer\(s\), 0 untuned, 1 template\(s\) with failures\n",
        result.stderr,
    )
    again = runner.invoke(app, ["--db", "t.db", "report", "r.html"])
    assert (again.exit_code, again.stderr) == (
        1,
        "Error: r.html already exists (an earlier report?): choose another path or pass "
        "--force to replace it\n",
    )


def test_without_plotly_one_error_line_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.resources

    def missing(name: str) -> Any:
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(importlib.resources, "files", missing)
    Store(tmp_path / "t.db").close()  # an empty database: report is refused before reading it
    result = runner.invoke(app, ["--db", str(tmp_path / "t.db"), "report", str(tmp_path / "r")])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: tunelog report draws its charts with plotly.js from the plotly package, which "
        "is not installed: pip install 'tunelog[report]' (in a checkout: pip install -e "
        "'.[report]')\n"
    )
    assert not (tmp_path / "r").exists()


def test_the_page_is_self_contained(page: Path) -> None:
    text = page.read_text()
    assert text.count("<script") == 2  # plotly.js once, then the figures and the sort code
    assert not re.search(r"""<(script|link|img|iframe)[^>]*\b(src|href)=""", text)
    assert "@import" not in text and "url(http" not in text


def test_the_page_shows_every_section(page: Path) -> None:
    text = page.read_text()
    body = text[text.index("<body>") :]
    for heading in (
        "Where the time goes: latency per layer",
        "Layers",
        "Best so far per layer",
        "Failures",
        "Untuned layers",
    ):
        assert f"<h2>{heading}</h2>" in body
    # Summary counts of the sample logs (`tunelog stats`): 3 sources, 333 records, 25 failed.
    cards = re.findall(r"<div class=n>([\d,]+)</div><div class=l>(\w+)</div>", body)
    assert dict((name, value) for value, name in cards) == {
        "sources": "3",
        "targets": "5",
        "records": "333",
        "valid": "308",
        "failed": "25",
        "layers": "7",
        # edge_cases.log's cuda dense layer has only a v0.1 record, which TVM >= 0.7 skips
        "tuned": "6",
        "untuned": "1",
    }
    assert "All 12 failures are BUILD_TIMEOUT" in body  # the diagnosis
    assert '<td>BUILD_TIMEOUT</td><td data-v="24">24</td>' in body


def test_the_totals_say_a_layer_answered_by_another_machine_is_summed(tmp_path: Path) -> None:
    # One box measured the layer, another failed it: the second's layer is untuned (another
    # machine's answer) in the summary, and summed with that answer in its group's total.
    line = json.loads((SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[0])
    failed = json.loads(json.dumps(line))
    failed["input"][0] = "llvm -keys=cpu -mcpu=znver3"
    failed["result"] = [[1e9], 6, 10.0, 1.6e9]
    log = tmp_path / "boxes.log"
    log.write_text(json.dumps(line) + "\n" + json.dumps(failed) + "\n")
    db, out = str(tmp_path / "t.db"), tmp_path / "r.html"
    runner.invoke(app, ["--db", db, "import", str(log)])
    assert runner.invoke(app, ["--db", db, "report", str(out)]).exit_code == 0
    text = out.read_text()
    cards = re.findall(r"<div class=n>([\d,]+)</div><div class=l>(\w+)</div>", text)
    assert ("0", "tuned") in cards and ("1", "untuned") in cards
    assert (
        "<th>layers summed</th><th>fallback configs</th><th>slowest layer (share)</th></tr>"
        '</thead><tbody><tr><td>cpu</td><td data-v="3.11259999913697e-05">31.1 us</td>'
        '<td data-v="1">1</td><td data-v="0">0</td>'
    ) in text
    assert "answered only by another machine's record (an untuned layer above) is" in text


def test_a_for_target_curve_holds_only_the_trials_its_layer_counts(tmp_path: Path) -> None:
    """--for-target: the curve took every target sharing a key, so model a's layer (1 trial at
    40 us) drew model b's faster trial as reached; a layer of no trial of its own drew one."""
    from tunelog.api.reporting import _report_data

    line = json.loads((SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[0])
    lines = []
    for model, cost in (("b", 1e-5), ("a", 4e-5)):
        line["input"][0] = f"llvm -keys=cpu -model={model}"
        line["result"] = [[cost], 0, 1.0, 1.6e9]
        lines.append(json.dumps(line))
    log = tmp_path / "models.log"
    log.write_text("\n".join(lines) + "\n")
    with Store(tmp_path / "t.db") as store:
        tunelog.import_paths(store, [str(log)])
        for query, curve in (("llvm -model=a", [(1, 4e-5)]), ("llvm -model=c", [])):
            data = _report_data(store, tunelog.Filters(for_target=query))
            assert [lay.trials for lay in data.layers] == [len(curve)]
            assert data.curves == [curve]


def test_untuned_layers_are_listed(tmp_path: Path) -> None:
    line = json.loads((SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[0])
    line["result"] = [[1e9], 6, 10.0, 1.6e9]
    log = tmp_path / "failed.log"
    log.write_text(json.dumps(line) + "\n")
    db, out = str(tmp_path / "t.db"), tmp_path / "r.html"
    runner.invoke(app, ["--db", db, "import", str(log)])
    assert runner.invoke(app, ["--db", db, "report", str(out)]).exit_code == 0
    untuned = out.read_text().split("<h2>Untuned layers</h2>")[1]
    assert '<td>conv2d_NCHWc.x86</td><td data-v="1">1</td>' in untuned
    page = out.read_text()
    assert "No tuned layer." in page and "No layer with a valid trial." in page
    # No chart of nothing (an empty plot drew bare axes; found by a new user).
    assert 'id="latency-chart"' not in page and 'id="curves-chart"' not in page
    # Its group sums no layer: no total (it said 0.0 us, a network that takes no time).
    assert '<tr><td>cpu</td><td data-v="-1">-</td><td data-v="0">0</td>' in out.read_text()


def test_control_characters_of_log_text_are_shown_escaped_in_the_page(tmp_path: Path) -> None:
    # A NUL is not allowed in HTML, and `report -` may go to a terminal: ESC and NUL were
    # written raw.
    line = json.loads((SAMPLE_LOGS / "x86_mini_llvm.log").read_text().splitlines()[0])
    line["input"][1] = "conv2d_NCHWc.x86\x1b[2J\x00"
    log = tmp_path / "hostile.log"
    log.write_text(json.dumps(line) + "\n")
    db = str(tmp_path / "t.db")
    runner.invoke(app, ["--db", db, "import", str(log)])
    result = runner.invoke(app, ["--db", db, "report", "-"])
    assert result.exit_code == 0
    # (plotly.js itself holds a few control characters in its strings: not log text)
    assert "\x1b" not in result.stdout and "\x00" not in result.stdout
    assert "conv2d_NCHWc.x86\\x1b[2J\\x00" in result.stdout


# -- in a browser ----------------------------------------------------------------------------------


class Browser:
    """Headless Chromium driven over the DevTools protocol (one page)."""

    def __init__(self, profile: Path) -> None:
        self.process = subprocess.Popen(
            [
                str(CHROMIUM),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "--window-size=1300,1000",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
            targets = json.load(reply)
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        from websockets.sync.client import connect

        self.ws = connect(url, max_size=None, open_timeout=10)
        self.ws.__enter__()  # websockets >= 14 warns about a connection used without `with`
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=30))
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                result: dict[str, Any] = message["result"]
                return result
            self.events.append(message)

    def wait_for(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(json.loads(self.ws.recv(timeout=deadline - time.monotonic())))

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in reply, reply
        return reply["result"].get("value")

    def close(self) -> None:
        self.ws.__exit__(None, None, None)
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip("headless Chromium is not installed: apt-get install -y chromium")
    opened = Browser(tmp_path / "profile")
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.slow
def test_the_report_renders_offline_in_chromium(page: Path, browser: Browser) -> None:
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable")
    browser.send("Page.navigate", url=page.as_uri())
    browser.wait_for("Page.loadEventFired")
    assert browser.evaluate("document.querySelectorAll('.js-plotly-plot .main-svg').length") >= 2
    time.sleep(0.5)  # let plotly finish drawing
    errors = [
        e
        for e in browser.events
        if e.get("method") == "Runtime.exceptionThrown"
        or (
            e.get("method") == "Runtime.consoleAPICalled"
            and e["params"]["type"] in ("error", "assert")
        )
        or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")
    ]
    assert errors == []
    requested = [
        e["params"]["request"]["url"]
        for e in browser.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    assert requested == [page.as_uri()]  # the page itself, nothing else
    for chart, minimum in (("latency-chart", 5000), ("curves-chart", 800)):
        assert coloured_pixels(screenshot_of(browser, chart)) > minimum, chart


@pytest.mark.slow
def test_the_layers_table_sorts_on_click(page: Path, browser: Browser) -> None:
    browser.send("Page.enable")
    browser.send("Page.navigate", url=page.as_uri())
    browser.wait_for("Page.loadEventFired")
    latency_column = (
        "[...document.querySelectorAll('#layers-table tbody tr')].map(r => r.cells[5].textContent)"
    )
    header = "document.querySelectorAll('#layers-table th')[5]"
    browser.evaluate(f"{header}.click()")
    ascending = browser.evaluate(latency_column)
    browser.evaluate(f"{header}.click()")
    descending = browser.evaluate(latency_column)
    assert ascending[0] == "11.3 us" and ascending[-1] == "116.0 us"
    assert descending == ascending[::-1]


def screenshot_of(browser: Browser, element_id: str) -> list[tuple[int, int, int]]:
    """The RGB pixels of an element, as the browser draws it."""
    box = browser.evaluate(
        f"(() => {{ const r = document.getElementById('{element_id}').getBoundingClientRect();"
        " return [r.x + scrollX, r.y + scrollY, r.width, r.height]; })()"
    )
    x, y, width, height = box
    assert width > 100 and height > 100
    shot = browser.send(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": x, "y": y, "width": width, "height": height, "scale": 1},
    )
    return decode_png(base64.b64decode(shot["data"]))


def coloured_pixels(pixels: list[tuple[int, int, int]]) -> int:
    """Pixels that are neither white nor grey (axes, grid and text are grey or black)."""
    return sum(1 for r, g, b in pixels if max(r, g, b) - min(r, g, b) > 40)


def decode_png(data: bytes) -> list[tuple[int, int, int]]:
    """A minimal PNG reader (8-bit RGB or RGBA, not interlaced): what Chromium writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        pixels += [tuple(line[i : i + 3]) for i in range(0, stride, channels)]  # type: ignore[misc]
        previous = line
    return pixels


def test_docs_screenshot_is_committed() -> None:
    shot = REPO / "docs" / "report.png"
    assert shot.is_file() and shot.stat().st_size < 400_000
    assert os.path.getsize(shot) > 10_000


def test_the_layers_table_shows_each_layers_convergence_verdict(page: Path) -> None:
    text = page.read_text()
    table = text[text.index('id="layers-table"') :]
    table = table[: table.index("</table>")]
    assert "<th>verdict</th>" in table
    shown = re.findall(r"<td[^>]*>([^<]*)</td></tr>", table)  # the last cell of each row
    db = page.parent / "r.db"
    with Store(db) as store:
        found = tunelog.layers(store)
        convergence = api.layer_convergence(store, found)
        assert shown == [convergence.of_layer(lay).verdict for lay in found]
    assert {"converged", "too few valid trials"} <= set(shown)
