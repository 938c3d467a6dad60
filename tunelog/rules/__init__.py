"""The rules tunelog applies, one module per rule, each its one home (see ARCHITECTURE.md).

Pure: no SQLite connection, no printing. Where SQL must apply a rule (the importer's upserts),
the SQL text sits in the rule's module beside the Python it mirrors, and a table-driven test
runs every case through both.
"""
