"""The record kinds the store files workloads under (`workloads.version`), as constants.

The modules that define them (tunelog.ansor, tunelog.selection) load json, hashlib or orjson;
commands that only compare a stored version with them (export, the listings of layers) import
them from here. tests/test_package.py checks that both spellings agree.
"""

from __future__ import annotations

ANSOR_VERSION = "ansor"  # tunelog.ansor.ANSOR_VERSION: auto_scheduler records
METASCHEDULE_VERSION = "metaschedule"  # tunelog.selection.METASCHEDULE_VERSION
