"""The top-level package: every public name resolves, lazily, and cheaply."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tunelog
from tests.conftest import REPO
from tunelog.cli import COMMAND_MODULES, app
from tunelog.cli.startup import command_name

_SAMPLE = Path(__file__).parent.parent / "sample_logs" / "x86_mini_llvm.log"
_V01_LINE = (
    '{"i": ["cuda", "topi_nn_conv2d", [["TENSOR", [1, 3, 8, 8], "float32"], [1, 1]], {},'
    ' ["conv2d", [1, 3, 8, 8, "float32"], [1, 1]], {"i": 7, "t": "direct", "c": null,'
    ' "e": [["tile_b", "sp", [1, 1, 1, 1]]]}], "r": [[0.5], 0, 2.0, 1535340502.6], "v": 0.1}'
)


@pytest.mark.parametrize("name", tunelog.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(tunelog, name) is not None


def test_layers_is_the_function_even_after_its_submodule_is_imported() -> None:
    import importlib

    importlib.import_module("tunelog.layers")  # binds the package attribute in plain packages
    assert callable(tunelog.layers)
    assert tunelog.layers.__module__ == "tunelog.api.listing"
    assert sys.modules["tunelog.layers"].__name__ == "tunelog.layers"


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(tunelog, "no_such_name")  # noqa: B009


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_the_command_line_starts_without_the_parsers_or_the_store() -> None:
    loaded = _modules_after("import tunelog.cli")
    assert not loaded & {"pydantic", "tabulate", "tunelog.api", "tunelog.store", "msgspec"}


def test_a_read_query_loads_no_pydantic() -> None:
    loaded = _modules_after("import tunelog.store")
    assert "pydantic" not in loaded
    assert "tunelog.store.importer" not in loaded


def test_importing_well_formed_logs_loads_no_pydantic(tmp_path: Path) -> None:
    """v0.2 and v0.1 lines, comments and blanks take the msgspec paths (pydantic costs start-up)."""
    v01 = tmp_path / "v01.log"
    v01.write_text("# a comment\n\n" + _V01_LINE + "\n")
    argv = ["tunelog", "--db", str(tmp_path / "t.db"), "import", str(_SAMPLE), str(v01)]
    code = (  # the console script, as a user runs it; its table to stderr, not among the names
        "import contextlib, sys\n"
        "from tunelog.cli.startup import run\n"
        f"sys.argv = {argv!r}\n"
        "try:\n"
        "    with contextlib.redirect_stdout(sys.stderr):\n"
        "        run()\n"
        "except SystemExit as exit:\n"
        "    assert exit.code in (0, None), exit.code"
    )
    loaded = _modules_after(code)
    assert "tunelog.store.importer" in loaded
    assert "pydantic" not in loaded


def test_lines_that_are_not_json_are_rejected_without_pydantic(tmp_path: Path) -> None:
    """A text line or a forum paste in a directory of logs: its reason needs no models."""
    stray = tmp_path / "stray.log"
    stray.write_text(
        "ConfigSpace (len=10454400, space_map=\n"
        "{\u201cinput\u201d: [\u201ccuda\u201d]}\n" + _V01_LINE + "\n",
        encoding="utf-8",
    )
    code = (
        "from tunelog import api\n"
        "from tunelog.store import Store\n"
        f"store = Store({str(tmp_path / 't.db')!r}, create=True)\n"
        f"[report] = api.import_paths(store, [{str(stray)!r}])\n"
        "assert (report.new, report.rejected) == (1, 2), report\n"
        "assert [r.reason for r in report.rejects] == [\n"
        "    'not JSON (text line)',\n"
        "    'typographic quotes (pasted from a web page?): use --repair',\n"
        "], report.rejects"
    )
    assert "pydantic" not in _modules_after(code)


# -- what a read command loads (issue 17: start-up) -----------------------------------------------
# Each module below costs a small command milliseconds of start-up; these tests fail when one is
# imported eagerly again on the way to a command that does not need it.


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("startup") / "small.db")
    command = [sys.executable, "-m", "tunelog", "--db", db, "import", str(_SAMPLE)]
    subprocess.run(command, check=True, capture_output=True)
    return db


def _modules_of_command(*args: str) -> set[str]:
    """The modules loaded by a whole `tunelog ARGS` run (as the console script runs it)."""
    code = (
        "import sys\n"
        f"sys.argv = ['tunelog', *{list(args)!r}]\n"
        "from tunelog.console import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sys.modules) + '\\n')"
    )
    err = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stderr
    return set(err.rsplit("\nMODULES ", 1)[1].split())


_IMPORT_ONLY = {"tunelog.discovery", "tunelog.inputs", "tunelog.store.importer", "msgspec"}
_WRITES_ONLY = {"tunelog.exporting", "tempfile", "orjson"}


@pytest.mark.parametrize("command", ["stats", "sources", "best"])
def test_store_queries_load_no_layers_hashlib_or_zstandard(small_db: str, command: str) -> None:
    loaded = _modules_of_command("--db", small_db, command)
    assert "tunelog.store" in loaded
    unwanted = {
        "tunelog.api",
        "tunelog.layers",
        "hashlib",
        "zstandard",
        "tunelog.ansor",
        "tabulate",
        "xxhash",  # the codec: only commands that read stored lines (export, best --knobs)
    }
    assert not loaded & (unwanted | _IMPORT_ONLY | _WRITES_ONLY)


def test_stats_and_sources_load_no_workloads_or_selection(small_db: str) -> None:
    for command in ("stats", "sources"):
        loaded = _modules_of_command("--db", small_db, command)
        assert not loaded & {"tunelog.workloads", "tunelog.selection", "json"}


def test_best_shows_the_stored_shapes_without_the_argument_readers(small_db: str) -> None:
    """An AutoTVM row's shapes were stored at import: `tunelog.workloads` reads arguments."""
    loaded = _modules_of_command("--db", small_db, "best")
    assert "tunelog.cli.queries" in loaded
    assert "tunelog.workloads" not in loaded


@pytest.mark.parametrize("command", ["stats", "best", "workloads", "sources"])
def test_read_commands_create_no_import_report_types(small_db: str, command: str) -> None:
    assert "tunelog.importreport" not in _modules_of_command("--db", small_db, command)


def test_import_report_types_are_still_models_names() -> None:
    from tunelog import importreport, models

    assert models.FileReport is importreport.FileReport
    assert models.RejectedLine is importreport.RejectedLine


@pytest.mark.parametrize("command", ["workloads", "untuned", "errors"])
def test_layer_listings_load_no_import_or_export_machinery(small_db: str, command: str) -> None:
    loaded = _modules_of_command("--db", small_db, command)
    assert "tunelog.layers" in loaded
    unwanted = {
        "hashlib",
        "zstandard",
        "xxhash",
        "tunelog.ansor",
        "tunelog.store.removal",
        "tabulate",
    }
    unwanted.add("tunelog.results")  # dataclasses of the curve, knobs, report, diff calls
    unwanted.add("tunelog.models")  # those of best, sources, stats
    assert not loaded & (unwanted | _IMPORT_ONLY | _WRITES_ONLY)


@pytest.mark.parametrize("command", ["workloads", "untuned", "errors"])
def test_layer_listings_load_only_their_own_command_and_api_modules(
    small_db: str, command: str
) -> None:
    """The stored facts are read, not computed: no argument readers (`tunelog.workloads`); of
    the CLI's command modules and the API's, only those the listing calls."""
    loaded = _modules_of_command("--db", small_db, command)
    assert "tunelog.api.listing" in loaded
    assert "tunelog.workloads" not in loaded
    commands = {m for m in loaded if m.startswith("tunelog.cli.")} & {
        f"tunelog.cli.{module}" for module in COMMAND_MODULES.values()
    }
    assert commands == {"tunelog.cli.queries"}
    api_modules = {m for m in loaded if m.startswith("tunelog.api.")}
    assert api_modules <= {
        "tunelog.api.listing",
        "tunelog.api.runs",
        "tunelog.api.diagnosing",
        "tunelog.api.shaping",
    }


def test_every_command_lives_in_the_module_its_table_names() -> None:
    """`COMMAND_MODULES` is what the console script imports for a command: it must be true."""
    registered = {
        command_name(c): c.callback.__module__ for c in app.registered_commands if c.callback
    }
    for group in app.registered_groups:  # a group's module: that of its commands
        assert group.name is not None and group.typer_instance is not None
        modules = {
            c.callback.__module__ for c in group.typer_instance.registered_commands if c.callback
        }
        registered[group.name] = modules.pop()
        assert not modules
    assert registered == {name: f"tunelog.cli.{m}" for name, m in COMMAND_MODULES.items()}
    assert [command_name(c) for c in app.registered_commands] == [
        name for name in COMMAND_MODULES if name in registered and name != "sources"
    ]


def test_export_loads_no_import_machinery_nor_layers(small_db: str, tmp_path: Path) -> None:
    loaded = _modules_of_command("--db", small_db, "export", "--force", str(tmp_path / "o.log"))
    assert "tunelog.exporting" in loaded
    unwanted = {"hashlib", "tunelog.ansor", "tunelog.results", "tunelog.layers", "tunelog.models"}
    assert not loaded & (_IMPORT_ONLY | unwanted | {"tunelog.convergence", "tunelog.workloads"})
    # The temporary file is made without tempfile; orjson only rewrites targets (--fix-targets).
    assert not loaded & {"tempfile", "random", "orjson"}


def test_tables_of_plain_text_load_no_tabulate(small_db: str) -> None:
    """tunelog.tables.simple_table writes them; tabulate only for cells it would treat apart."""
    assert "tabulate" not in _modules_of_command("--db", small_db, "best", "--json")
    assert "tabulate" not in _modules_of_command("--db", small_db, "--wide", "best", "--knobs")


@pytest.mark.parametrize("name", ["CurveRow", "DiffReport", "SourceRejects", "TemplateKnobs"])
def test_results_defined_apart_are_still_api_names(name: str) -> None:
    from tunelog import api, results

    assert getattr(api, name) is getattr(results, name)


def _modules_assigning(name: str) -> list[str]:
    """The tunelog modules whose code assigns `name` (a re-export by import assigns nothing)."""
    import ast

    package = Path(tunelog.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if name not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                targets = [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                found.append(path.relative_to(package.parent).as_posix())
    return found


def test_version_constants_have_one_home() -> None:
    # Not `is` on the re-exports: equal short strings are interned, so `is` holds for copies too.
    from tunelog import ansor, selection, versions

    assert (versions.ANSOR_VERSION, versions.METASCHEDULE_VERSION) == ("ansor", "metaschedule")
    assert ansor.ANSOR_VERSION == versions.ANSOR_VERSION
    assert selection.METASCHEDULE_VERSION == versions.METASCHEDULE_VERSION
    assert _modules_assigning("ANSOR_VERSION") == ["tunelog/versions.py"]
    assert _modules_assigning("METASCHEDULE_VERSION") == ["tunelog/versions.py"]


def test_the_package_says_it_is_typed() -> None:
    """PEP 561: a user's mypy reads tunelog's hints only with `py.typed` in the package, and
    the wheel has it only if the project lists it as package data."""
    import tomllib

    assert (Path(tunelog.__file__).parent / "py.typed").is_file()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["tunelog"]
