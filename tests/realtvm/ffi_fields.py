"""The object fields apache-tvm's tvm-ffi serialiser writes inline as plain ints, by the type
key's last dotted part (`tunelog.msffifields.INT_FIELDS` must hold them all: any other int in
an object's data is a node index).

Run from the checkout with apache-tvm installed: `.venv/bin/python -m tests.realtvm.ffi_fields`
prints the table; tests/test_metaschedule_identity.py compares it with tunelog's when TVM is
there.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def int_fields() -> dict[str, set[str]]:
    """Every registered type's fields (its own and inherited) of the static type int."""
    import tvm  # noqa: F401 - registers TVM's types
    import tvm_ffi
    from tvm_ffi import core

    found: dict[str, set[str]] = defaultdict(set)
    for type_key in tvm_ffi.get_global_func("ffi.GetRegisteredTypeKeys")():
        info: Any
        try:
            info = core._lookup_or_register_type_info_from_type_key(type_key)
        except Exception:  # a type Python cannot describe
            continue
        while info is not None:
            for field in info.fields:
                if field.field_static_type_index == 1:  # kTVMFFIInt
                    found[str(type_key).rsplit(".", 1)[-1]].add(field.name)
            info = info.parent_type_info
    return found


if __name__ == "__main__":
    for name, fields in sorted(int_fields().items()):
        print(f"    {name!r}: {tuple(sorted(fields))!r},")
