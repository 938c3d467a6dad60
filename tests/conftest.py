"""Shared fixtures. Tests that need ../shared (corpus, golden) skip when it is absent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tunelog.store import Store

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
GOLDEN = SHARED / "golden"
SAMPLE_LOGS = REPO / "sample_logs"
DATA = Path(__file__).resolve().parent / "data"


def require_shared() -> None:
    """Skip the calling test when ../shared is not beside the checkout (a user's clone)."""
    if not GOLDEN.is_dir() or not CORPUS.is_dir():
        pytest.skip("../shared (corpus and golden verdicts) is not beside this checkout")


def golden_files() -> list[Path]:
    """Every golden verdict file, or [] when ../shared is absent."""
    if not GOLDEN.is_dir():
        return []
    return sorted(GOLDEN.rglob("*.oracle.json"))


def corpus_log_for(golden: Path) -> Path:
    """The corpus log a golden file describes."""
    relative = golden.relative_to(GOLDEN)
    return CORPUS / str(relative)[: -len(".oracle.json")]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh database in a temporary directory."""
    with Store(tmp_path / "test.db") as opened:
        yield opened
