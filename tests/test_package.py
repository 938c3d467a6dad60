"""The top-level package: every public name resolves, lazily, and cheaply."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tunelog


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
