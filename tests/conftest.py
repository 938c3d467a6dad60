"""Shared fixtures. Tests that need ../shared (corpus, golden) skip when it is absent."""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
import typer
import typer.testing
from typer.testing import CliRunner, Result

import tunelog
from tunelog.cli import load_commands
from tunelog.importreport import FileReport
from tunelog.records import TuningRecord, parse_line
from tunelog.selection import HistoryBest, history_best
from tunelog.store import Store

if TYPE_CHECKING:
    from typer._click import Command

Ref = TypeVar("Ref")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
GOLDEN = SHARED / "golden"
SAMPLE_LOGS = REPO / "sample_logs"
DATA = Path(__file__).resolve().parent / "data"
X86 = SAMPLE_LOGS / "x86_mini_llvm.log"  # 200 records, one per line
EDGE = SAMPLE_LOGS / "edge_cases.log"  # 19 lines: records, a duplicate, comments, rejects
X86_LINES = X86.read_bytes().splitlines(keepends=True)
EDGE_LINES = EDGE.read_bytes().splitlines(keepends=True)
SHORT_LINES = gzip.decompress(
    (SAMPLE_LOGS / "x86_mini_short_timeouts.log.gz").read_bytes()
).splitlines(keepends=True)


def require_shared() -> None:
    """Skip the calling test when ../shared is not beside the checkout (a user's clone)."""
    if not GOLDEN.is_dir() or not CORPUS.is_dir():
        pytest.skip("../shared (corpus and golden verdicts) is not beside this checkout")


def golden_files() -> list[Path]:
    """Every golden verdict file, or [] when ../shared is absent."""
    if not GOLDEN.is_dir():
        return []
    return sorted(GOLDEN.rglob("*.oracle.json"))


def golden_params(files: list[Path], suffix: str) -> list[Any]:
    """`files` as pytest parameters named by their file name (without `suffix`); without
    ../shared, one skipped parameter saying so (pytest's own reason, "got empty parameter
    set", names no cause)."""
    if not files:
        reason = "../shared (corpus and golden verdicts) is not beside this checkout"
        return [pytest.param(None, id="no-shared", marks=pytest.mark.skip(reason=reason))]
    return [pytest.param(f, id=f.name.removesuffix(suffix)) for f in files]


def corpus_log_for(golden: Path) -> Path:
    """The corpus log a golden file describes."""
    relative = golden.relative_to(GOLDEN)
    return CORPUS / str(relative)[: -len(".oracle.json")]


def ansor_golden_files() -> list[Path]:
    """Every auto_scheduler golden verdict file, or [] when ../shared is absent."""
    if not GOLDEN.is_dir():
        return []
    return sorted(GOLDEN.rglob("*.ansor.json"))


def corpus_log_for_ansor(golden: Path) -> Path:
    """The corpus log an auto_scheduler golden file describes."""
    relative = golden.relative_to(GOLDEN)
    return CORPUS / str(relative)[: -len(".ansor.json")]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A database path for CLI tests; the working directory is the checkout so sample paths are
    short, and TUNELOG_DB and COLUMNS are unset (expected tables are full width)."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("TUNELOG_DB", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    return str(tmp_path / "cli.db")


class SharedRunner(CliRunner):
    """typer's CliRunner (a Result's `stdout` and `stderr` apart, `output` both, as a terminal
    shows them), building each app's click command once: typer builds it again on every call,
    ~10 ms for tunelog's 19 commands. Every in-process CLI test runs through `runner`."""

    def __init__(self) -> None:
        super().__init__()
        self._commands: dict[typer.Typer, Command] = {}  # kept alive: its id stays its own

    def _command(self, app: typer.Typer) -> Command:
        if app not in self._commands:
            self._commands[app] = typer.main.get_command(app)
        return self._commands[app]

    def invoke(  # typer's own signature
        self,
        app: typer.Typer,
        args: str | Sequence[str] | None = None,
        input: bytes | str | None = None,
        env: Mapping[str, str | None] | None = None,
        catch_exceptions: bool = True,
        color: bool = False,
        **extra: Any,
    ) -> Result:
        """`app` run with `args` as typer's CliRunner runs it, from the command built once."""
        from unittest import mock

        with mock.patch.object(typer.testing, "_get_command", self._command):
            return super().invoke(app, args, input, env, catch_exceptions, color, **extra)


runner = SharedRunner()

# The tests run `tunelog.cli.app` itself, as a library caller would (the console script loads
# only the module of the command it runs): every command registered, once, before any test.
load_commands()


def invoke(
    args: Sequence[str],
    input: str | bytes | None = None,
    env: Mapping[str, str | None] | None = None,
) -> Result:
    """`tunelog ARGS` in-process through the shared runner."""
    from tunelog.cli import app

    return runner.invoke(app, list(args), input=input, env=env)


def run(*args: str, stdin: str | None = None, columns: int | None = None) -> tuple[int, str, str]:
    """`tunelog ARGS` in-process: (exit code, stdout, stderr); `columns` sets COLUMNS. An
    exception the CLI did not turn into an exit code fails the test."""
    env = {"COLUMNS": str(columns)} if columns else None
    result = invoke(args, input=stdin, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"uncaught {result.exception!r}"
    )
    return result.exit_code, result.stdout, result.stderr


def run_db(
    db: str | Path, *args: str, stdin: str | None = None, columns: int | None = None
) -> tuple[int, str, str]:
    """`tunelog --db DB ARGS` in-process, as `run`: (exit code, stdout, stderr)."""
    return run("--db", str(db), *args, stdin=stdin, columns=columns)


def stdout_of(db: str | Path, *args: str) -> str:
    """stdout of `tunelog --db DB ARGS`, which must succeed (else the test fails with its
    stderr); an export to `-` gives the bytes it wrote."""
    code, out, err = run_db(db, *args)
    assert code == 0, (args, err)
    return out


def cli_json(db: str | Path, *args: str) -> Any:
    """What `tunelog --db DB ARGS --json` prints, parsed; the command must succeed."""
    return json.loads(stdout_of(db, *args, "--json"))


def cli_import(db: str | Path, *logs: str | Path) -> None:
    """`tunelog --db DB import LOGS`, which must succeed: a database for a CLI test."""
    stdout_of(db, "import", *map(str, logs))


def make_db(path: Path, *logs: Path, label: str | None = None) -> Path:
    """A database with these logs imported through the API, in one import, in order."""
    with Store(path) as store:
        tunelog.import_paths(store, [str(log) for log in logs], label=label)
    return path


def one_shot(directory: Path, *logs: Path, **options: Any) -> dict[str, list[tuple[object, ...]]]:
    """What a database holds after one import of the files as they are now (`database_contents`
    of `directory/one-shot.db`): what imports made piece by piece must equal."""
    with Store(directory / "one-shot.db") as fresh:
        tunelog.import_paths(fresh, [str(log) for log in logs], **options)
        return database_contents(fresh.conn)


class ImportedOnce:
    """Logs imported once into a database of their own, for every test of a module that only
    reads them: a golden or corpus log is imported once per module, not once per test."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._made: dict[tuple[Path, ...], tuple[Path, list[FileReport]]] = {}

    def _made_for(self, logs: tuple[Path, ...]) -> tuple[Path, list[FileReport]]:
        if logs not in self._made:
            path = self.directory / f"{len(self._made)}.db"
            with Store(path) as opened:
                reports = tunelog.import_paths(opened, [str(log) for log in logs])
            self._made[logs] = (path, reports)
        return self._made[logs]

    def store(self, *logs: Path) -> Store:
        """The database holding `logs` (imported together, in that order), opened: close it."""
        return Store(self._made_for(logs)[0])

    def reports(self, *logs: Path) -> list[FileReport]:
        """What importing `logs` into an empty database reported, one per file."""
        return self._made_for(logs)[1]


@pytest.fixture(scope="module")
def imported_once(tmp_path_factory: pytest.TempPathFactory) -> ImportedOnce:
    """Logs imported once for the module (see ImportedOnce): tests must not write to them."""
    return ImportedOnce(tmp_path_factory.mktemp("imported"))


def autotvm_history(
    lines: Iterable[bytes],
    ref: Callable[[TuningRecord, bytes], Ref],
    *,
    skip_other_lines: bool = False,
) -> HistoryBest[Ref]:
    """AutoTVM's ApplyHistoryBest over log lines, in order, each holder known by
    `ref(record, line)`. Every line must be a record, unless `skip_other_lines`: then lines that
    are not, and v0.1 lines, are skipped as modern AutoTVM's loader skips them."""
    items = []
    for raw in lines:
        parsed = parse_line(raw)
        if skip_other_lines and not (
            isinstance(parsed, TuningRecord) and parsed.log_version == "0.2"
        ):
            continue
        assert isinstance(parsed, TuningRecord), raw[:80]
        reference = ref(parsed, raw)
        items.append(
            (parsed.target, parsed.workload_json, parsed.mean_cost, parsed.error_no, reference)
        )
    return history_best(items)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh database in a temporary directory."""
    with Store(tmp_path / "test.db") as opened:
        yield opened


# What `workloads` says of sample_logs/edge_cases.log's cuda dense layer, whose only record is
# v0.1 (EDGE_LINES[18]).
V01_NOTE = (
    "note: 1 layer(s) are answered only by v0.1 records, which TVM >= 0.7 skips: it compiles them "
    "with a fallback config (`tunelog untuned` lists them among the untuned layers; "
    "`export --include-v01` keeps the records for an older TVM)\n"
)


def write_mixed_version_log(directory: Path) -> Path:
    """A user template tuned twice: a faster v0.1 record, then a slower v0.2 one."""
    import json

    args = [256, 256, 128, "float32"]
    v01 = {
        "i": [
            "llvm",
            "matmul",
            args,
            {},
            None,
            {"i": 3, "t": "", "c": None, "e": [["tile_x", "sp", [-1, 4]]]},
        ],
        "r": [[0.001], 0, 1.0, 1.5e9],
        "v": 0.1,
    }
    v02 = {
        "input": ["llvm", "matmul", args, {}],
        "config": {"index": 9, "code_hash": None, "entity": [["tile_x", "sp", [-1, 8]]]},
        "result": [[0.002], 0, 1.0, 1.6e9],
        "version": 0.2,
        "tvm_version": "0.9.dev0",
    }
    log = directory / "mixed.log"
    log.write_text(json.dumps(v01) + "\n" + json.dumps(v02) + "\n")
    return log


def write_distinct_copies(path: Path, copies: int) -> Path:
    """The 200 lines of the x86 sample log, `copies` times, each copy made distinct."""
    lines = (SAMPLE_LOGS / "x86_mini_llvm.log").read_bytes().splitlines(keepends=True)
    path.write_bytes(
        b"".join(line.replace(b"0.16.dev0", b"%d" % i) for i in range(copies) for line in lines)
    )
    return path


def assert_tallies_match_records(conn: sqlite3.Connection) -> None:
    """The tallies kept on import equal a count over the stored records."""
    tallied = conn.execute(
        """SELECT target_id, workload_id, error_no, records, min_all_cost, max_all_cost
           FROM tallies ORDER BY 1, 2, 3"""
    ).fetchall()
    counted = conn.execute(
        """SELECT target_id, workload_id, error_no, count(*), min(all_cost), max(all_cost)
           FROM records GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"""
    ).fetchall()
    assert tallied == counted


def assert_run_marks_kept(conn: sqlite3.Connection) -> None:
    """Each stored trial run's marks are what its improvements say (`convergence.run_marks`)."""
    from tunelog.convergence import run_marks

    rows = conn.execute(
        "SELECT improvements, to_best, best_cost, last_significant FROM trial_runs"
    ).fetchall()
    assert [tuple(marks) for _, *marks in rows] == [
        run_marks(json.loads(text)) for text, *_ in rows
    ]


def database_contents(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """What a database holds, independent of how its lines were packed into blocks.

    Every table but `blocks` (each record's line instead), `resume_points` and the sources'
    SHA-256 and import time: two databases that hold the same records, ids, slots, tallies and
    accounting compare equal however many imports filled them.
    """
    from tunelog.store import LineReader

    reader = LineReader(conn)
    contents = {
        name: conn.execute(f"SELECT * FROM {name} ORDER BY 1, 2, 3").fetchall()
        for name in ("records", "slots", "tallies", "top_configs", "content_hashes", "rejects")
    }
    contents["counters"] = conn.execute("SELECT * FROM counters").fetchall()
    contents["targets"] = conn.execute("SELECT * FROM targets ORDER BY id").fetchall()
    contents["workloads"] = conn.execute("SELECT * FROM workloads ORDER BY id").fetchall()
    contents["own spellings"] = conn.execute(
        """SELECT rs.record_id, t.spelling FROM record_spellings rs
           JOIN spelling_texts t ON t.id = rs.spelling_id ORDER BY rs.record_id"""
    ).fetchall()
    contents["sources"] = conn.execute(
        """SELECT id, path, label, size, lines, records, duplicates, comments, blank, rejected,
                  split, repaired, repair FROM sources ORDER BY id"""
    ).fetchall()
    contents["lines"] = [
        (rid, reader.line(rid)) for (rid,) in conn.execute("SELECT id FROM records ORDER BY id")
    ]
    return contents


# What each migration from 5 on adds, to undo it (newest first): tests make a database of an
# older schema from a new one. Migrations 9, 11 and 14 also rewrite the sources_summary view.
_UNDO_MIGRATION: dict[int, tuple[str, ...]] = {
    19: (),  # data only: MetaSchedule workloads filed again
    18: (),  # data only: targets parsed again, MetaSchedule workloads filed again
    17: (),  # data only: MetaSchedule workloads filed again
    16: ("DROP TABLE record_spellings", "DROP TABLE spelling_texts"),
    15: tuple(
        f"ALTER TABLE trial_runs DROP COLUMN {column}"
        for column in ("last_significant", "best_cost", "to_best")
    ),
    14: ("DROP VIEW IF EXISTS sources_summary",),
    13: (
        "CREATE TEMP TABLE top_configs_before AS SELECT * FROM top_configs",
        "DROP VIEW top_configs",
        """CREATE TABLE top_configs (target_id INTEGER NOT NULL, workload_id INTEGER NOT NULL,
               config_index INTEGER NOT NULL, record_id INTEGER NOT NULL,
               mean_cost REAL NOT NULL, PRIMARY KEY (target_id, workload_id, config_index)
           ) WITHOUT ROWID""",
        "INSERT INTO top_configs SELECT * FROM temp.top_configs_before",
        "DROP TABLE temp.top_configs_before",
        "DROP TABLE top_config_ids",
    ),
    12: (
        "DROP INDEX workloads_unfilled",
        "DROP INDEX workloads_layer",
        *(
            f"ALTER TABLE workloads DROP COLUMN {column}"
            for column in ("flops", "shapes", "family", "facts", "layer_key")
        ),
    ),
    11: ("DROP VIEW IF EXISTS sources_summary", "DROP TABLE holdings"),
    10: ("DROP TABLE resume_points",),
    9: (
        "DROP VIEW IF EXISTS sources_summary",
        "ALTER TABLE sources DROP COLUMN merged_at",
        "ALTER TABLE sources DROP COLUMN merged_from",
    ),
    8: ("DROP TABLE trial_runs",),
    7: ("ALTER TABLE workloads DROP COLUMN spelling",),
    6: (
        "DROP VIEW IF EXISTS sources_summary",
        "DROP VIEW failures",
        "DROP VIEW layer_summary",
        "DROP VIEW best_configs",
    ),
    5: ("DROP TABLE source_imports",),
    4: ("DROP TABLE top_configs",),
    3: ("DROP TABLE counters",),
}


def undo_migrations(conn: sqlite3.Connection, version: int) -> None:
    """Set a current database back to schema `version`: what later migrations added goes."""
    from tunelog.store import MIGRATIONS

    assert max(_UNDO_MIGRATION) == len(MIGRATIONS), "a new migration needs its undo here"
    for number in sorted(_UNDO_MIGRATION, reverse=True):
        if number > version:
            for statement in _UNDO_MIGRATION[number]:
                conn.execute(statement)
    if 11 <= version < 14:  # sources_summary as migration 11 made it
        from tunelog.store.schema import sources_summary_of_migration_11

        sources_summary_of_migration_11(conn)
    if 9 <= version < 11:  # sources_summary as migration 9 made it
        from tunelog.store.schema import sources_summary_of_migration_9

        sources_summary_of_migration_9(conn)
    if 6 <= version < 9:  # the views as migration 6 made them, sources_summary included
        for view in _UNDO_MIGRATION[6]:
            conn.execute(view)
        MIGRATIONS[5](conn)
    conn.execute(f"PRAGMA user_version = {version}")
