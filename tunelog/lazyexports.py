"""A package's public names loaded on first use (PEP 562): the one laziness policy of
`tunelog` and `tunelog.api`, whose modules a command loads only when it calls them.

Each package keeps a table `_EXPORTS` (public name -> the module that defines it) and hands
its module `__getattr__` and `__dir__` to `exported` and `listed`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, MutableMapping
from typing import Any


def exported(
    package: str, namespace: MutableMapping[str, Any], exports: Mapping[str, str], name: str
) -> Any:
    """The value of `package.name`, imported from its module and kept in the package's
    `namespace`, so that later lookups do not come here again."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value


def listed(namespace: Mapping[str, Any], exports: Mapping[str, str]) -> list[str]:
    """The package's names for `dir()`: those loaded and those still to load."""
    return sorted([*namespace, *exports])
