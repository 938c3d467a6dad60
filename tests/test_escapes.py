"""Log text never reaches the terminal raw: control characters are shown escaped everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import runner
from tunelog.cli import app, shown

TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLEAR = "\x1b[2J"  # clears the screen
CSI = "\x9b"  # the C1 form of ESC [
TARGET = "llvm -keys=cpu -mcpu=skylake-avx512"
ARGS = [["TENSOR", [1, 512], "float32"], ["TENSOR", [1000, 512], "float32"], None, "float32"]
LAYER = "1x512"


def hostile_line(template: str, index: int, cost: float, error_no: int = 0) -> str:
    """A dense record whose task name and knob carry terminal escapes."""
    return json.dumps(
        {
            "input": [TARGET, template, ARGS, {}],
            "config": {
                "index": index,
                "code_hash": None,
                "entity": [[f"tile{CLEAR}y", "sp", [-1, index + 1]], ["mode", "ot", TITLE + CSI]],
            },
            "result": [[cost], error_no, 1.0, 1700000000.0 + index],
            "version": 0.2,
            "tvm_version": "0.9.dev0",
        }
    )


@pytest.fixture
def hostile_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database of records whose log text holds escapes, imported from a file named so."""
    monkeypatch.delenv("COLUMNS", raising=False)
    log = tmp_path / f"run{CLEAR}.log"
    lines = [
        hostile_line(f"dense_nopack.x86{TITLE}", n, 1e-4 * (n + 1), 0 if n < 3 else 4)
        for n in range(4)
    ]
    lines.append(f"not a record {CLEAR}")
    bad_target = json.loads(hostile_line("dense_pack.x86", 9, 1e-4))
    bad_target["input"][0] = f"{TITLE}llvm"
    lines.append(json.dumps(bad_target))
    log.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "escapes.db")
    result = runner.invoke(app, ["--db", db, "import", str(log)])
    assert result.exit_code == 0, result.output
    _assert_no_raw_controls(result.stdout + result.stderr)
    return db


def _assert_no_raw_controls(text: str) -> None:
    raw = {c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F}
    assert not raw, sorted(raw)


COMMANDS = [
    ["best"],
    ["best", "--knobs"],
    ["stats"],
    ["workloads"],
    ["untuned"],
    ["errors"],
    ["sources"],
    ["rejects"],
    ["curve", LAYER, "--target-key", "cpu"],
    ["knobs", LAYER, "--target-key", "cpu"],
    ["best", "--json"],
    ["knobs", LAYER, "--target-key", "cpu", "--json"],
]
# The commands whose output shows the task name, a knob, the file name or a rejected line.
SHOWING_LOG_TEXT = {"best", "sources", "rejects", "curve", "knobs"}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_terminal_escapes_from_a_log_are_shown_escaped(hostile_db: str, command: list[str]) -> None:
    result = runner.invoke(app, ["--db", hostile_db, *command])
    assert result.exit_code == 0, result.output
    _assert_no_raw_controls(result.stdout + result.stderr)
    if "--json" not in command and command[0] in SHOWING_LOG_TEXT:
        assert "\\x1b" in result.stdout + result.stderr


def test_best_shows_the_task_name_with_its_escapes_visible(hostile_db: str) -> None:
    result = runner.invoke(app, ["--db", hostile_db, "best", "--wide"])
    assert "dense_nopack.x86\\x1b]0;pwned\\x07" in result.stdout


@pytest.mark.parametrize(
    ("text", "keep_newlines", "expected"),
    [
        ("conv2d_nchw.cuda", False, "conv2d_nchw.cuda"),
        ("3×3 → ok", False, "3×3 → ok"),
        (TITLE, False, "\\x1b]0;pwned\\x07"),
        (CLEAR + CSI, False, "\\x1b[2J\\x9b"),
        ("a\tb\r\nc\x7f", False, "a\\tb\\r\\nc\\x7f"),
        ("line 1\nline\x1b 2", True, "line 1\nline\\x1b 2"),
        # Acting too: a bidi override (shows what follows reversed), a line separator, a
        # file name's undecodable byte (a lone surrogate: unwritable as UTF-8).
        ("conv\u202e2d", False, "conv\\u202e2d"),
        ("a\u2028b\u2066c", False, "a\\u2028b\\u2066c"),
        ("b\udcff.log", False, "b\\udcff.log"),
        # Text, though Python does not call it printable: spaces, joiners, tags stay as they
        # are (a Japanese file name's ideographic space must still read as its name).
        ("新しい\u3000フォルダ\xa0x\u202fPM", False, "新しい\u3000フォルダ\xa0x\u202fPM"),
        ("\U0001f468\u200d\U0001f4bb\U000e0041", False, "\U0001f468\u200d\U0001f4bb\U000e0041"),
    ],
)
def test_shown_escapes_what_acts_on_a_terminal(
    text: str, keep_newlines: bool, expected: str
) -> None:
    assert shown(text, keep_newlines=keep_newlines) == expected


def test_a_skipped_file_named_with_a_line_break_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / f"bad{CLEAR}\nname.log").write_text("hello\n")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["--db", "x.db", "import", "d"])
    assert result.stderr.splitlines()[0] == "skipped d/bad\\x1b[2J\\nname.log: not a tuning log"


def test_an_error_naming_a_path_with_a_line_break_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["--db", "x.db", "merge", "no\nsuch.db"])
    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("Error: ") and "no\\nsuch.db" in result.stderr


@pytest.mark.parametrize(
    "command",
    [["rejects"], ["curve", LAYER], ["knobs", LAYER], ["sources"], ["best"], ["stats"]],
    ids=" ".join,
)
def test_a_line_break_in_log_text_or_a_path_stays_on_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    # rejects, curve's and knobs' headings wrote them raw: "path:line: reason" in two lines.
    monkeypatch.delenv("COLUMNS", raising=False)
    log = tmp_path / "run\nINJECTED.log"
    record = (
        hostile_line("dense_nopack.x86\nINJECTED", 1, 1e-4)
        .replace(CLEAR, "")
        .replace(TITLE + CSI, "x")
    )
    log.write_text(f"{record}\nnot a record\n")
    db = str(tmp_path / "t.db")
    assert runner.invoke(app, ["--db", db, "import", str(log)]).exit_code == 0
    result = runner.invoke(app, ["--db", db, *command])
    assert result.exit_code == 0, result.output
    assert "\\nINJECTED" in result.stdout
    assert not [line for line in result.stdout.splitlines() if line.startswith("INJECTED")]
