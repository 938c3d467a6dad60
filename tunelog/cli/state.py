"""Where the whole program's options (--db, --wide) are kept for the commands."""

from __future__ import annotations

DEFAULT_DB = "tunelog.db"


class _State:
    db_path: str = DEFAULT_DB
    wide: bool = False


state = _State()
