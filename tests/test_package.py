"""The top-level package: every public name resolves, lazily, and cheaply."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tunelog

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
    assert tunelog.layers.__module__ == "tunelog.api"
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
    code = (
        "from tunelog.cli import app\n"
        "from typer.testing import CliRunner\n"
        f"result = CliRunner().invoke(app, ['--db', {str(tmp_path / 't.db')!r}, 'import', "
        f"{str(_SAMPLE)!r}, {str(v01)!r}])\n"
        "assert result.exit_code == 0, result.output"
    )
    loaded = _modules_after(code)
    assert "tunelog.store.importer" in loaded
    assert "pydantic" not in loaded
