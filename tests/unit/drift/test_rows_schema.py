"""Drift's copy of its tables' DDL (``rows.TABLES``, what a rebuild creates) and their
catalog shape (``rows.SHAPE``, what a run checks before reading them) are the
migration's own."""

from __future__ import annotations

import duckdb

from mir.drift import rows
from mir.drift.tables import STEPS


def test_the_rebuild_creates_what_the_migration_creates():
    [statements] = [s.apply for s in STEPS if s.name == "0006_create_drift_rows"]
    assert tuple(statements) == rows.TABLES


def test_the_checked_shape_is_the_created_one():
    con = duckdb.connect()
    con.execute("CREATE TABLE events (segment VARCHAR)")
    for sql in rows.TABLES:
        con.execute(sql)
    assert rows._state(con) == "sound"
    con.execute("ALTER TABLE drift_ingested RENAME COLUMN upto TO up_to")
    assert rows._state(con) == "damaged"
    rows._recreate(con)
    assert rows._state(con) == "sound"
