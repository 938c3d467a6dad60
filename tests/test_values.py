"""Every JSON value in every field of a real record: a stored record or a reason, never a crash.

Three real lines (a v0.2 x86 line, a v0.2 cuda line, a v0.1 line) are taken apart into every
field path (every key and list index at every depth, plus a field added to every object and
list). Each path gets every JSON type: null, booleans, zero and negative numbers, integers past
2**63 and 10**40, floats up to 1e308, the raw tokens NaN/Infinity/-Infinity and 1e999, strings
(empty, short, ~10 MB for the fields most likely to be stored), lists, objects, 10,000 levels
of nesting, and the field removed. For each mutated line:

- `parse_line` and `scan_line` return without raising and agree on accepted vs rejected;
- importing [good line, mutated line, good line] never raises, accounts for every line, keeps
  the good lines and stores the mutated line or rejects it with a reason for line 2;
- the read commands (API and CLI) work on the resulting database.

A hypothesis test then substitutes arbitrary JSON at random field paths.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tunelog
from tests.conftest import SAMPLE_LOGS, invoke
from tunelog.importreport import FileReport
from tunelog.records import Rejected, TuningRecord, parse_line, scan_line
from tunelog.store import Store

# -- the real lines ---------------------------------------------------------------------------

_X86 = SAMPLE_LOGS.joinpath("x86_mini_llvm.log").read_bytes().splitlines()
_EDGE = SAMPLE_LOGS.joinpath("edge_cases.log").read_bytes().splitlines()

RECORDS: dict[str, bytes] = {
    "v02x86": _X86[0],
    "v02cuda": next(line for line in _EDGE if line.startswith(b'{"input": ["cuda ')),
    "v01": next(line for line in _EDGE if line.startswith(b'{"i": ["')),
}
# The lines around the mutated one: two other real lines of other templates (dense_nopack and
# dense_pack; the mutated conv2d line never competes with them), distinct from each other and
# from every mutation of the lines above.
GOOD_BEFORE = _X86[120]
GOOD_AFTER = _X86[160]
assert b"dense_nopack.x86" in GOOD_BEFORE and b"dense_pack.x86" in GOOD_AFTER

Step = str | int
Path_ = tuple[Step, ...]

ADDED_KEY = "zz_unknown_field"
_PLACEHOLDER = "@@tunelog-raw-value@@"
_PLACEHOLDER_JSON = json.dumps(_PLACEHOLDER).encode()

# -- the values -------------------------------------------------------------------------------

TEN_MB = b'"' + b"x" * (10 * 1024 * 1024) + b'"'
REMOVED = b"<removed>"  # not JSON: the field is deleted instead


def _nested(opening: bytes, closing: bytes, depth: int) -> bytes:
    return opening * depth + closing * depth


# (id, raw JSON text). Raw text, so that NaN and the huge literals appear exactly as written.
VALUES: list[tuple[str, bytes]] = [
    ("null", b"null"),
    ("true", b"true"),
    ("false", b"false"),
    ("zero", b"0"),
    ("minus1", b"-1"),
    ("2pow63", str(2**63).encode()),
    ("minus2pow63minus1", str(-(2**63) - 1).encode()),
    ("1e40int", str(10**40).encode()),
    ("minus1e40int", str(-(10**40)).encode()),
    ("1.5", b"1.5"),
    ("1e308", b"1e308"),
    ("1e999", b"1e999"),
    ("NaN", b"NaN"),
    ("Infinity", b"Infinity"),
    ("minusInfinity", b"-Infinity"),
    ("emptystr", b'""'),
    ("text", b'"text"'),
    ("emptylist", b"[]"),
    ("list", b'[1, "a"]'),
    ("emptyobj", b"{}"),
    ("obj", b'{"a": 1}'),
    ("nested100", _nested(b"[", b"]", 100)),
    ("deeplist", _nested(b"[", b"]", 10_000)),
    ("deepobj", _nested(b'{"a": ', b"}", 10_000).replace(b'{"a": }', b"{}")),
]
VALUE_TEXT = dict(VALUES)


def _steps(value: Any) -> list[tuple[Step, Any]]:
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return list(enumerate(value))
    return []


def _existing_paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    for step, child in _steps(value):
        yield (*prefix, step)
        yield from _existing_paths(child, (*prefix, step))


def _containers(value: Any, prefix: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    if isinstance(value, dict | list):
        yield prefix, value
    for step, child in _steps(value):
        yield from _containers(child, (*prefix, step))


def _added_paths(record: Any) -> Iterator[Path_]:
    """A path one past the end of every list, and an unknown key in every object."""
    for prefix, node in _containers(record):
        yield (*prefix, ADDED_KEY if isinstance(node, dict) else len(node))


def path_text(path: Path_) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else ("." if text else "") + step
    return text


@dataclass(frozen=True)
class Field:
    record: str
    path: Path_
    added: bool

    @property
    def id(self) -> str:
        return f"{self.record}:{path_text(self.path)}" + ("(added)" if self.added else "")


def _fields() -> list[Field]:
    found: list[Field] = []
    for name, line in RECORDS.items():
        data = json.loads(line)
        found += [Field(name, path, False) for path in _existing_paths(data)]
        found += [Field(name, path, True) for path in _added_paths(data)]
    return found


FIELDS = _fields()

# The fields that also get a ~10 MB string (building and parsing ten megabytes costs tens of
# milliseconds a line, and every command then reads them): the names, strings and values a
# record is stored and displayed with, and a few numbers.
_TEN_MB_PATHS = {
    "v02x86": [
        "input[0]",  # the target
        "input[1]",  # the task name
        "input[2][7]",  # an argument (the dtype)
        "config.entity[0][2]",  # a knob value
        "result[0][0]",  # a cost
        "tvm_version",
    ],
    "v01": ["i[4]"],  # the v0.1 workload
}
TEN_MB_FIELDS = {f"{record}:{path}" for record, paths in _TEN_MB_PATHS.items() for path in paths}
assert {f.id for f in FIELDS} >= TEN_MB_FIELDS, TEN_MB_FIELDS - {f.id for f in FIELDS}
# A 10 MB task name makes every table row 10 MB wide (tabulate pads the
# column): `workloads` prints 125 MB. Those go through the commands' JSON forms only.
TEN_MB_NAMES = {"v02x86:input[1]"}


def value_names(field: Field) -> list[str]:
    names = [name for name, _ in VALUES]
    if not field.added:
        names.append("removed")
    if field.id in TEN_MB_FIELDS:
        names.append("10MBstr")
    return names


def value_text(name: str) -> bytes:
    if name == "removed":
        return REMOVED
    if name == "10MBstr":
        return TEN_MB
    return VALUE_TEXT[name]


def mutate(line: bytes, path: Path_, raw: bytes) -> bytes:
    """The line with the value at `path` replaced by raw JSON text (or removed)."""
    data = json.loads(line)
    node = data
    for step in path[:-1]:
        node = node[step]
    last = path[-1]
    if raw == REMOVED:
        del node[last]
        return json.dumps(data).encode()
    if isinstance(node, list) and last == len(node):
        node.append(_PLACEHOLDER)
    else:
        node[last] = _PLACEHOLDER
    text = json.dumps(data).encode()
    assert text.count(_PLACEHOLDER_JSON) == 1
    return text.replace(_PLACEHOLDER_JSON, raw)


COMBOS = [(field, name) for field in FIELDS for name in value_names(field)]
assert len(COMBOS) > 4000

HUGE = "10MB strings"
HUGE_NAMES = "10MB names"
BEYOND_64_BITS = ("minus2pow63minus1", "1e40int", "minus1e40int")
BEYOND_64_BITS_DB = "integers beyond 64 bits in arguments and knobs"


def in_args(field: Field) -> bool:
    """A task argument, or a value inside one."""
    return field.path[:2] in (("input", 2), ("i", 2)) and len(field.path) > 2


def shown_as_json(field: Field) -> bool:
    """The task arguments and the knob values: what the CLI encodes with orjson."""
    path = field.path
    if path[:2] == ("config", "entity") or path[:3] == ("i", 5, "e"):
        knob = path[2:] if path[0] == "config" else path[3:]  # [index, 2, ...]: a knob value
        return len(knob) > 1 and knob[1] == 2
    return in_args(field)


def database_for(field: Field, value: str) -> str:
    """The database a combination is imported into: one per field, plus two shared ones."""
    if value == "10MBstr":  # ten megabytes through every command: databases of their own
        return HUGE_NAMES if field.id in TEN_MB_NAMES else HUGE
    if (value in BEYOND_64_BITS and shown_as_json(field)) or (value == "2pow63" and in_args(field)):
        return BEYOND_64_BITS_DB  # through every command together, in a database of their own
    return field.id


# -- checks -----------------------------------------------------------------------------------


def assert_parsers_agree(raw: bytes) -> bool:
    """parse_line and scan_line never raise and agree; True when the line is a record."""
    parsed = parse_line(raw)
    scanned = scan_line(raw)
    assert isinstance(parsed, Rejected) == isinstance(scanned, Rejected), (parsed, scanned)
    if isinstance(parsed, Rejected):
        assert parsed.reason.strip()
        assert isinstance(scanned, Rejected) and scanned.reason == parsed.reason
        return False
    return True


# The best config of each good line's template (the mutated conv2d line never competes).
GOOD_BEST = {"dense_nopack.x86": 20, "dense_pack.x86": 97}
GOOD_LAYER = "dense|1x8192:float32|10x8192:float32|bias=-|float32"  # theirs, on their target


def run_api_commands(store: Store, out: Path) -> None:
    """Every read command of the library (and the dict forms `--json` prints) on the store:
    whatever the mutated line, each still finds the good lines around it."""
    best = {row.task_name: row.model_dump()["config_index"] for row in store.best(knobs=True)}
    assert best.items() >= GOOD_BEST.items(), best
    stats = store.stats().model_dump()
    assert stats["valid"] >= len(GOOD_BEST), stats
    assert stats["records"] == sum(row["records"] for row in stats["by_error"]), stats
    layers = [tunelog.layer_as_dict(layer) for layer in tunelog.layers(store)]
    good = [layer for layer in layers if layer["layer_key"] == GOOD_LAYER]
    assert [layer["winner"] for layer in good] == ["dense_nopack.x86"], good  # the faster
    untuned = [tunelog.layer_as_dict(layer) for layer in tunelog.untuned(store)]
    assert all(layer in layers for layer in untuned), untuned
    assert not any(layer["layer_key"] == GOOD_LAYER for layer in untuned), untuned
    for summary in tunelog.errors(store):
        failed = tunelog.error_as_dict(summary)["failed"]
        assert isinstance(failed, int) and failed > 0, summary
    report = tunelog.export(store, str(out), force=True, include_v01=True)
    assert report.written >= len(GOOD_BEST), report
    exported = out.read_bytes()
    assert all(name.encode() in exported for name in GOOD_BEST), report


CLI_COMMANDS: list[list[str]] = [
    ["best", "--knobs"],
    ["best", "--knobs", "--json"],
    ["workloads"],
    ["workloads", "--json"],
    ["errors"],
    ["untuned"],
    ["stats"],
]


# The 10 MB strings go through each command once (each command reads them all).
HUGE_CLI_COMMANDS: list[list[str]] = [["best", "--knobs"], ["workloads"], ["errors"], ["untuned"]]
HUGE_CLI_COMMANDS += [["stats"], ["best", "--knobs", "--json"]]
HUGE_JSON_COMMANDS = [[*command, "--json"] for command in HUGE_CLI_COMMANDS[:5]]


def run_cli_commands(db: Path, out: Path, commands: list[list[str]] = CLI_COMMANDS) -> None:
    """The read commands through the CLI: exit 0, or 1 with one `Error:` line; no traceback."""
    for command in [*commands, ["export", "--force", "--include-v01", str(out)]]:
        result = invoke(["--db", str(db), *command])
        where = f"tunelog {' '.join(command)}"
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            f"{where}: uncaught {result.exception!r}"
        )
        assert "Traceback" not in result.output, where
        assert result.exit_code in (0, 1), (where, result.exit_code, result.output[-2000:])
        if result.exit_code == 1:
            lines = result.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("Error:"), (where, result.stderr)
        elif "--json" in command:
            json.loads(result.stdout)


# -- databases --------------------------------------------------------------------------------


def tagged_record(record: str, tag: int) -> bytes:
    """The real line with a target of its own `-model`: each variant holds its own slots and
    target group, so every accepted value is a winner that `best`, `workloads` ... display."""
    data = json.loads(RECORDS[record])
    key = "input" if "input" in data else "i"
    target: str = data[key][0]
    if "-model=" in target:
        data[key][0] = target.replace("-model=", f"-model=v{tag}-", 1)
    else:
        data[key][0] = f"{target} -model=v{tag}"
    return json.dumps(data).encode()


# The combinations each database holds, in the one order they are imported in.
COMBOS_OF: dict[str, list[tuple[Field, str]]] = {}
for _field, _value in COMBOS:
    COMBOS_OF.setdefault(database_for(_field, _value), []).append((_field, _value))


def combo_name(field: Field, value: str) -> str:
    return f"{field.id}={value}"


@dataclass(frozen=True)
class Imported:
    """One file [good line, mutated line, good line] imported, and what judging it needs."""

    combo: str
    log: Path
    is_record: bool  # the mutated line parses as a record
    seen: bool  # the same tagged line went into this database before
    report: FileReport


def assert_imported(imported: Imported) -> None:
    """Every line accounted for, the good lines kept, the mutated one stored or rejected with a
    reason for line 2."""
    combo, report = imported.combo, imported.report
    assert report.path == str(imported.log)
    assert report.accounted, (combo, report)
    assert (report.lines, report.comments, report.blank) == (3, 0, 0), (combo, report)
    rejects = {r.line: r.reason for r in report.rejects}
    if imported.is_record:
        assert rejects == {}, (combo, report)
        expected = (2, 1) if imported.seen else (3, 0)
        assert (report.new, report.duplicates) == expected, (combo, report)
    else:
        assert list(rejects) == [2], (combo, report)
        assert rejects[2].strip(), f"{imported.log}:2 rejected without a reason"
        assert (report.new, report.duplicates, report.rejected) == (2, 0, 1), (combo, report)


class Stores:
    """One database per field (and a few shared ones), each filled with every combination
    `database_for` gives it, one file per value, in COMBOS order: a database holds the same
    whichever test asks for it first, and each test judges its own combination.

    Each file is [good line, mutated line, good line]; the good lines are made distinct per
    file (their tvm_version), so each file is new and its good lines are stored.
    """

    def __init__(self, directory: Path, empty_db: Path) -> None:
        self.directory = directory
        self.empty_db = empty_db
        self.numbers: dict[str, int] = {}  # database key -> file name number
        self.filled_with: dict[str, dict[str, Imported]] = {}  # database key -> combo -> import
        self._open: tuple[str, Store] | None = None

    def db_path(self, key: str) -> Path:
        if key not in self.numbers:
            self.numbers[key] = len(self.numbers)
        return self.directory / f"{self.numbers[key]}.db"

    def store(self, key: str) -> Store:
        """The store of `key`, open (only one is kept open at a time)."""
        if self._open is not None and self._open[0] == key:
            return self._open[1]
        self.close()
        path = self.db_path(key)
        if not path.exists():
            shutil.copyfile(self.empty_db, path)
        store = Store(path)
        store.conn.execute("PRAGMA synchronous = OFF")  # a scratch database: no fsync
        self._open = (key, store)
        return store

    def close(self) -> None:
        if self._open is not None:
            self._open[1].close()
            self._open = None

    def drop(self, key: str) -> None:
        """Close and delete the database of `key` (its logs stay until the module ends)."""
        self.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.db_path(key)}{suffix}").unlink(missing_ok=True)

    def filled(self, key: str) -> dict[str, Imported]:
        """The imports into the database of `key`, made on first use: all its combinations."""
        if key not in self.filled_with:
            self.drop(key)  # whatever a failed fill left
            tagged_lines: set[bytes] = set()
            imports = {}
            for number, (field, value) in enumerate(COMBOS_OF[key]):
                combo = combo_name(field, value)
                imports[combo] = self._import(
                    key, number, field, value_text(value), combo, tagged_lines
                )
            self.filled_with[key] = imports
        self.store(key)
        return self.filled_with[key]

    def import_line(self, key: str, field: Field, value: bytes) -> Imported:
        """Import [good, `field`=raw JSON `value`, good] alone into a new database `key`."""
        self.drop(key)
        return self._import(key, 0, field, value, f"{field.id}=<raw>", set())

    def _import(
        self, key: str, number: int, field: Field, value: bytes, combo: str, seen: set[bytes]
    ) -> Imported:
        """Import file `number` of `key`; `seen` holds the tagged lines imported before it."""
        raw = mutate(RECORDS[field.record], field.path, value)
        is_record = assert_parsers_agree(raw)
        # The line imported: its target has a -model of its own (the report says whether that
        # changed the verdict: it must not).
        tagged = mutate(tagged_record(field.record, number), field.path, value)
        was_seen = tagged in seen
        seen.add(tagged)
        before, after = (
            line.replace(b"0.16.dev0", b"0.16.dev0+%d" % number)
            for line in (GOOD_BEFORE, GOOD_AFTER)
        )
        log = self.directory / f"{self.numbers.get(key, len(self.numbers))}-{number}.log"
        log.write_bytes(b"\n".join([before, tagged, after]) + b"\n")
        (report,) = tunelog.import_paths(self.store(key), [str(log)])
        return Imported(combo, log, is_record, was_seen, report)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    """The databases of this module: in memory (/dev/shm) where there is one, as they are many."""
    shm = Path("/dev/shm")
    in_memory = shm.is_dir() and os.access(shm, os.W_OK)
    directory = Path(tempfile.mkdtemp(dir=shm)) if in_memory else tmp_path_factory.mktemp("v")
    empty_db = directory / "empty.db"
    Store(empty_db).close()  # migrated once, then copied (much cheaper than migrating)
    opened = Stores(directory, empty_db)
    yield opened
    opened.close()
    if in_memory:
        shutil.rmtree(directory)


# -- every field x every JSON type --------------------------------------------------------------


def test_fields_cover_every_depth() -> None:
    ids = {f.id for f in FIELDS}
    for expected in (
        "v02x86:input",
        "v02x86:input[0]",
        "v02x86:input[1]",
        "v02x86:input[2]",
        "v02x86:input[2][0][1][3]",
        "v02x86:input[3]",
        "v02x86:input[3].zz_unknown_field(added)",
        "v02x86:input[4](added)",
        "v02x86:config",
        "v02x86:config.index",
        "v02x86:config.code_hash",
        "v02x86:config.entity",
        "v02x86:config.entity[0][2]",
        "v02x86:config.entity[0][2][1]",
        "v02x86:result",
        "v02x86:result[0]",
        "v02x86:result[0][0]",
        "v02x86:result[0][1](added)",
        "v02x86:result[1]",
        "v02x86:result[2]",
        "v02x86:result[3]",
        "v02x86:version",
        "v02x86:tvm_version",
        "v02x86:zz_unknown_field(added)",
        "v02cuda:config.entity[1][2]",
        "v01:i[0]",
        "v01:i[4][1][2]",
        "v01:i[5]",
        "v01:i[5].i",
        "v01:i[5].t",
        "v01:i[5].c",
        "v01:i[5].e[0][2][1]",
        "v01:r[0][0]",
        "v01:r[3]",
        "v01:v",
    ):
        assert expected in ids, expected


def test_the_unmutated_lines_are_records(tmp_path: Path) -> None:
    for line in (*RECORDS.values(), GOOD_BEFORE, GOOD_AFTER):
        assert assert_parsers_agree(line)
    log = tmp_path / "real.log"
    log.write_bytes(b"\n".join([GOOD_BEFORE, *RECORDS.values(), GOOD_AFTER]) + b"\n")
    with Store(tmp_path / "real.db") as store:
        (report,) = tunelog.import_paths(store, [str(log)])
        assert report.new == 5 and report.accounted
        run_api_commands(store, tmp_path / "out.log")
    run_cli_commands(tmp_path / "real.db", tmp_path / "out.log")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("field", "value"), COMBOS, ids=[f"{field.id}={value}" for field, value in COMBOS]
)
def test_any_value_in_any_field_is_stored_or_rejected(
    field: Field, value: str, stores: Stores
) -> None:
    assert_imported(stores.filled(database_for(field, value))[combo_name(field, value)])


@pytest.mark.slow
@pytest.mark.parametrize("field", FIELDS, ids=[f.id for f in FIELDS])
def test_commands_work_with_every_value_of_a_field(field: Field, stores: Stores) -> None:
    """The field's database: the real line with every JSON type in that field."""
    stores.filled(field.id)
    run_api_commands(stores.store(field.id), stores.directory / "out.log")
    stores.close()
    run_cli_commands(stores.db_path(field.id), stores.directory / "out.log")


@pytest.mark.slow
@pytest.mark.parametrize("names", [False, True], ids=["values", "names"])
def test_commands_work_with_ten_megabyte_strings(names: bool, stores: Stores) -> None:
    """The 10 MB string in every field that gets one; names (tables of 10 MB rows) apart."""
    key = HUGE_NAMES if names else HUGE
    stores.filled(key)
    run_api_commands(stores.store(key), stores.directory / "out.log")
    stores.close()
    commands = HUGE_JSON_COMMANDS if names else HUGE_CLI_COMMANDS
    run_cli_commands(stores.db_path(key), stores.directory / "out.log", commands)


# -- integers beyond 64 bits in JSON output ------------------------------------------------------

# orjson (every `--json`, and `best --knobs`) refuses integers below -2**63 and from 2**64 on.
# They reach the output (1) from task arguments and knob values, which TVM's loader reads whatever
# their size, and (2) from `flops`, an unbounded product of the shapes (a batch of 10**14 in a
# real conv2d line is enough). cli._json_text falls back to Python's json for them.


@pytest.mark.slow
def test_commands_work_with_integers_beyond_64_bits(stores: Stores) -> None:
    """Every argument and knob value with -(2**63)-1, 10**40, -(10**40); arguments with 2**63."""
    stores.filled(BEYOND_64_BITS_DB)
    run_api_commands(stores.store(BEYOND_64_BITS_DB), stores.directory / "out.log")
    stores.close()
    run_cli_commands(stores.db_path(BEYOND_64_BITS_DB), stores.directory / "out.log")


_BATCH = ("input", 2, 0, 1, 0)  # the batch size in the data shape of the conv2d line
_KNOB = ("config", "entity", 0, 2, 1)  # a tile size
_BEYOND_64_BITS_SITES: list[tuple[list[str], Path_, str, bool]] = [
    # (command, field, value, is the record a failed measurement?)
    (["best", "--json"], _BATCH, str(10**40), False),
    (["best", "--json"], _BATCH, str(-(2**63) - 1), False),
    (["workloads", "--json"], _BATCH, str(10**40), False),
    (["workloads", "--json"], _BATCH, str(10**14), False),  # FLOPs 7.8e19 > 2**64
    (["untuned", "--json"], _BATCH, str(10**40), True),
    (["best", "--knobs"], _KNOB, str(10**40), False),
    (["best", "--knobs", "--json"], _KNOB, str(-(10**40)), False),
]


@pytest.mark.parametrize(
    ("command", "path", "value", "failed"),
    _BEYOND_64_BITS_SITES,
    ids=[f"{' '.join(c)} {path_text(p)}={v}" for c, p, v, _ in _BEYOND_64_BITS_SITES],
)
def test_json_output_of_a_large_integer(
    command: list[str], path: Path_, value: str, failed: bool, tmp_path: Path
) -> None:
    line = mutate(RECORDS["v02x86"], path, value.encode())
    if failed:  # a BUILD_TIMEOUT: the layer is untuned
        line = line.replace(b'"result": [[3.11259999913697e-05], 0,', b'"result": [[1e9], 6,')
    assert isinstance(parse_line(line), TuningRecord)
    log = tmp_path / "big.log"
    log.write_bytes(line + b"\n")
    with Store(tmp_path / "big.db") as store:
        (report,) = tunelog.import_paths(store, [str(log)])
        assert report.new == 1
    result = invoke(["--db", str(tmp_path / "big.db"), *command])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0
    if "--json" in command:
        json.loads(result.stdout)


# -- 200 to 1000 levels of nesting ---------------------------------------------------------------

# The parsers part ways there (pydantic refuses ~200 levels, msgspec ~1000, orjson cannot write
# 255, Python's json hits the recursion limit): records.MAX_NESTING rejects such lines in both
# parse_line and scan_line, so no reader of a stored line ever meets one.

_DEEP_FIELDS = [
    "v02x86:input[2]",  # the arguments themselves
    "v02x86:input[2][0]",
    "v02x86:input[3].zz_unknown_field(added)",  # a keyword argument
    "v02x86:config.entity[0][2]",  # a knob value
    "v02x86:zz_unknown_field(added)",  # an unknown field
]


@pytest.mark.parametrize("field_id", _DEEP_FIELDS)
def test_parsers_agree_on_300_levels_of_nesting(field_id: str) -> None:
    field = next(f for f in FIELDS if f.id == field_id)
    raw = mutate(RECORDS[field.record], field.path, _nested(b"[", b"]", 300))
    assert_parsers_agree(raw)


@pytest.mark.slow
def test_scan_line_never_raises_on_deeply_nested_arguments() -> None:
    for depth in range(200, 1001):
        deep = b"[" * depth + b'"scan"' + b"]" * depth  # arguments no other test caches
        scan_line(mutate(RECORDS["v02x86"], ("input", 2), deep))


@pytest.mark.slow
def test_import_never_raises_on_deeply_nested_arguments(tmp_path: Path) -> None:
    log = tmp_path / "deep.log"
    # Arguments unlike those of the test above: scan_line caches canonical arguments by text.
    deep = [b"[" * depth + b'"import"' + b"]" * depth for depth in range(200, 1001)]
    lines = [mutate(RECORDS["v02x86"], ("input", 2), d) + b"\n" for d in deep]
    # One plain record: a file of rejected lines only is no log (an error, exit 1).
    log.write_bytes(RECORDS["v02x86"] + b"\n" + b"".join(lines))
    result = invoke(["--db", str(tmp_path / "deep.db"), "import", str(log)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0


@pytest.mark.parametrize("command", [["best", "--json"], ["workloads", "--json"]], ids=" ".join)
def test_json_output_of_arguments_300_levels_deep(command: list[str], tmp_path: Path) -> None:
    log = tmp_path / "deep.log"
    log.write_bytes(mutate(RECORDS["v02x86"], ("input", 2, 0), _nested(b"[", b"]", 300)) + b"\n")
    with Store(tmp_path / "deep.db") as store:
        tunelog.import_paths(store, [str(log)])
    result = invoke(["--db", str(tmp_path / "deep.db"), *command])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0


# -- arbitrary JSON at a random field ---------------------------------------------------------


def _float_text(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return json.dumps(x)


# json.dumps(..., ensure_ascii=False) keeps lone surrogates: encoded with surrogatepass, they
# are invalid UTF-8 inside a JSON string.
_STRINGS = st.builds(
    lambda text, ascii_only: json.dumps(text, ensure_ascii=ascii_only), st.text(), st.booleans()
)
_LEAVES = st.one_of(
    st.just("null"),
    st.sampled_from(["true", "false"]),
    st.integers().map(str),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from([2**63 - 1, 2**63, 2**64, -(2**63), -(2**63) - 1, 10**40, 10**400]).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(_float_text),
    st.sampled_from(["NaN", "-NaN", "1e999", "-1e999", "1E+2", "-0", "-0.0", "0e0", "5e-324"]),
    _STRINGS,
    # Around records.MAX_NESTING (100) and far past it.
    st.sampled_from([n * "[" + n * "]" for n in (95, 100, 101, 150, 250, 1000, 10_000)]),
)
JSON_TEXT: st.SearchStrategy[str] = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(_STRINGS, children), max_size=4).map(
            lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        ),
    ),
    max_leaves=12,
)
_examples = iter(range(1 << 62))


@pytest.mark.slow
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    field=st.sampled_from(FIELDS),
    value=JSON_TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")) | st.just(REMOVED),
)
def test_arbitrary_json_in_a_random_field(field: Field, value: bytes, stores: Stores) -> None:
    """Any JSON (or the field removed) at any field path: a record or a reason, never a crash."""
    if value == REMOVED and field.added:
        value = b"null"
    key = f"hypothesis-{next(_examples)}"
    assert_imported(stores.import_line(key, field, value))
    run_api_commands(stores.store(key), stores.directory / "out.log")
    stores.drop(key)
