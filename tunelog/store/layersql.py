"""The SQL of one stream of layers (`LayerInputs.layer_candidates`): its temporary tables,
how they are filled, and the query that reads the layers from them in layer order."""

from __future__ import annotations

from collections.abc import Mapping

from tunelog.rules.failedrecords import FAILED_TALLY_SQL
from tunelog.rules.slots import FIRST_HELD_RECORD_SQL, MODEL_SLOT

# The temporary tables of one stream of layers (`LayerInputs._fill_layer_tables`).
LAYER_TABLES = {
    # each target's group number
    "groups": "(target_id INTEGER NOT NULL, group_no INTEGER NOT NULL, "
    "PRIMARY KEY (target_id, group_no)) WITHOUT ROWID",
    # each group's query, in `rules.slots.asked_rows`' form
    "asks": "(query INTEGER NOT NULL, rank INTEGER NOT NULL, kind TEXT NOT NULL, "
    "name TEXT NOT NULL, PRIMARY KEY (query, rank)) WITHOUT ROWID",
    # GROUP_TALLIES_SQL's rows. The key puts a (group, workload)'s rows in the order
    # LAYER_ROWS_SQL lists them (first target, then error number), so that query reads them in
    # that order and sorts nothing (first_target is one value per (group, workload, error)).
    "tallies": "(group_no INTEGER NOT NULL, workload_id INTEGER NOT NULL, "
    "error_no INTEGER NOT NULL, records INTEGER, low REAL, high REAL, first_target INTEGER, "
    "PRIMARY KEY (group_no, workload_id, first_target, error_no)) WITHOUT ROWID",
    # PLACES_SQL's rows: a place is a rowid, so that layers are read in place order
    "places": "(place INTEGER PRIMARY KEY, group_no INTEGER NOT NULL, layer_key TEXT)",
}

# Per (group, workload, error number): its tallies on the group's targets summed, and the first
# target that has it (a template's errors are listed in the order its targets' tallies come).
GROUP_TALLIES_SQL = """
INSERT INTO {tallies}
SELECT g.group_no, c.workload_id, c.error_no, sum(c.records), min(c.min_all_cost),
       max(c.max_all_cost), min(c.target_id)
FROM tallies c JOIN {groups} g ON g.target_id = c.target_id
GROUP BY g.group_no, c.workload_id, c.error_no"""

# A layer's place, as one number: for the groups seen in the database (numbers below
# :seen_groups), its first (workload id, target id) among the group's tallies; for the others,
# after all of those, its group's number and its layer key's first workload, or, :interleaved,
# its first workload's (workload id, 0) and the group's number among them (:spread numbers
# apart: target ids start at 1, so no two places are equal). A layer of the others is placed
# only where it will have rows (LAYER_ROWS_SQL's condition): a workload of its key tallied on
# the group, or holding a slot the group's query asks (at 80k workloads, a third of the layer
# keys have neither for a group of other keys).
PLACES_SQL = """
INSERT INTO {places} (group_no, layer_key, place)
    SELECT gt.group_no, w.layer_key,
           min(gt.workload_id * :target_scale + gt.first_target) * :spread
    FROM {tallies} gt JOIN workloads w ON w.id = gt.workload_id
    WHERE gt.group_no < :seen_groups AND w.layer_key IS NOT NULL
    GROUP BY gt.group_no, w.layer_key {seen_having}
    UNION ALL
    SELECT k.group_no, k.layer_key,
           CASE WHEN :interleaved
                THEN k.first * :target_scale * :spread + k.group_no - :seen_groups + 1
                ELSE :after_seen + k.group_no * :workload_scale + k.first END
    FROM (SELECT u.group_no, u.layer_key,
                 (SELECT min(f.id) FROM workloads f WHERE f.layer_key = u.layer_key) AS first
          FROM ({unseen_layers}) u) k"""

# With `unseen_models` (`export --winners-only`): the layers of a group seen in the database that
# it has no record of but that a workload holding its model slot answers (the model slot is
# keyed by the model's name alone: `llvm -device=arm_cpu -model=rk3399` answers `opencl
# -model=rk3399`), placed as if tallied on the group's first target. Without -model, a group
# asks the key slots its unknown-model twin asks (placed by `unseen_layers`), so the model slot
# is the only answer the twin does not see.
MODEL_SLOT_LAYERS_SQL = f"""
INSERT INTO {{places}} (group_no, layer_key, place)
    SELECT q.query, w.layer_key,
           (min(w.id) * :target_scale
            + (SELECT min(g.target_id) FROM {{groups}} g WHERE g.group_no = q.query))
           * :spread
    FROM {{asks}} q JOIN slots s ON s.kind = q.kind AND s.name = q.name
    JOIN workloads w ON w.id = s.workload_id
    WHERE q.query < :seen_groups AND q.kind = '{MODEL_SLOT}' AND w.layer_key IS NOT NULL
      -- the holder tallied on the group (most holders): its layer is placed already
      AND NOT EXISTS (SELECT 1 FROM {{tallies}} gt  -- tested before workloads is read
                      WHERE gt.group_no = q.query AND gt.workload_id = s.workload_id)
      AND NOT EXISTS (SELECT 1 FROM workloads v CROSS JOIN {{tallies}} gt  -- v first
                      ON gt.group_no = q.query AND gt.workload_id = v.id
                      WHERE v.layer_key = w.layer_key)
    GROUP BY q.query, w.layer_key"""

# PLACES_SQL's conditions on a layer: none, or (`failing_only`) a tally of the group with
# failed records (`rules.failedrecords.FAILED_TALLY_SQL`) among the layer key's workloads, the
# templates `errors` lists. A condition on the layers, not on the rows a place is read from: a
# layer kept keeps its place. `unseen_layers`: the (group, layer key) pairs of the groups
# placed after the database's that have rows (LAYER_ROWS_SQL's condition: a workload tallied
# on the group, or holding a slot its query asks; a workload whose facts were never filled has
# no layer key, and no layer).
EVERY_LAYER_SQL = {
    "seen_having": "",
    "unseen_layers": """SELECT q.query AS group_no, w.layer_key FROM {asks} q
                        JOIN slots s ON s.kind = q.kind AND s.name = q.name
                        JOIN workloads w ON w.id = s.workload_id
                        WHERE q.query >= :seen_groups AND w.layer_key IS NOT NULL
                        UNION
                        SELECT gt.group_no, w.layer_key FROM {tallies} gt
                        JOIN workloads w ON w.id = gt.workload_id
                        WHERE gt.group_no >= :seen_groups AND w.layer_key IS NOT NULL""",
}
FAILING_ONLY_SQL = {
    "seen_having": f"HAVING max({FAILED_TALLY_SQL.format(tally='gt')})",
    "unseen_layers": f"""SELECT DISTINCT gt.group_no, w.layer_key FROM {{tallies}} gt
                         JOIN workloads w ON w.id = gt.workload_id
                         WHERE gt.group_no >= :seen_groups AND w.layer_key IS NOT NULL
                         AND {FAILED_TALLY_SQL.format(tally="gt")}""",
}


# One row per candidate and error number, in layer order: each place's workloads of its layer
# key (in id order) that have tallies in the group or a slot its query asks. Every step reads
# an index in the order ORDER BY asks (places by rowid, a layer key's workloads by id, a
# candidate's tallies by their key), so SQLite sorts nothing; the tallies come last, so the
# first held slot is looked up once per candidate, not once per error number. The answer's
# cost is its record's: a slot's `mean_cost` is its record's own (`rules.bestrecord`'s upsert
# and `store.removal` store it so; tests/test_model_based holds it), and reading it there
# saves looking the slot up again.
LAYER_ROWS_SQL = """
SELECT p.place, p.group_no, w.id, gt.error_no, gt.records, gt.low, gt.high,
       r.id, r.mean_cost, r.config_index, r.source_id, r.line, r.target_id
FROM {places} p JOIN workloads w ON w.layer_key = p.layer_key
LEFT JOIN records r ON r.id = {first_held}
LEFT JOIN {tallies} gt ON gt.group_no = p.group_no AND gt.workload_id = w.id
WHERE gt.workload_id IS NOT NULL OR r.id IS NOT NULL
ORDER BY p.place, w.id, gt.first_target, gt.error_no"""


def layer_rows_sql(tables: Mapping[str, str]) -> str:
    """`LAYER_ROWS_SQL` over one stream's tables (`LAYER_TABLES`' names -> the stream's)."""
    first_held = FIRST_HELD_RECORD_SQL.format(
        asked=tables["asks"], query="p.group_no", workload="w.id"
    )
    return LAYER_ROWS_SQL.format(first_held=first_held, **tables)
