"""The README's Python API example runs as written (on the sample logs)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLE_LOGS


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (REPO / "README.md").read_text()
    match = re.search(r"## Python API.*?```python\n(.*?)```", readme, re.S)
    assert match is not None
    shutil.copytree(SAMPLE_LOGS, tmp_path / "sample_logs")  # as the README names them
    monkeypatch.chdir(tmp_path)
    exec(compile(match.group(1), "README.md", "exec"), {})  # our own README
    assert (tmp_path / "best.log").read_bytes().count(b"\n") == 9
