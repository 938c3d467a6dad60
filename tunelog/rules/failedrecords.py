"""Failed records: whether a template has any on a target group, the rule by which `errors`
lists a layer (`layers.has_failed_records`), in Python and, beside it, in SQL.

Pure and light: the store's layer stream reads the SQL (`store.layersql.FAILING_ONLY_SQL`)
without loading `layers`. tests/test_failing_layers.py runs every case through both.
"""

from __future__ import annotations

from collections.abc import Mapping


def has_failed_records(errors: Mapping[int, int]) -> bool:
    """Whether these records per error number (a template's on a group) hold a failed one:
    a record of an error number other than 0 (AutoTVM's NO_ERROR)."""
    return any(count and error_no != 0 for error_no, count in errors.items())


# `has_failed_records` of one row `{tally}` of the tallies (error_no, records): the group's
# template has failed records when any of its rows is true.
FAILED_TALLY_SQL = "({tally}.error_no <> 0 AND {tally}.records > 0)"
