"""Drift's tables in the trace database, as schema steps of scope ``drift``.

The trace store does not know them: drift hands them to ``TraceStore.analysis(write=True,
tables=TABLES)``, which migrates them under the store's exclusive lock after its own
steps. A reader never needs them (``storage.has_tables``; ``rows`` parses the events
when its tables are absent). The step names are those an older mir recorded when these
steps still lived in the trace store's own list: a store it wrote opens as it is.
"""

from __future__ import annotations

from typing import Any

from mir.storage import Migration
from mir.storage import migrate as migrate_steps

SCOPE = "drift"
# Frozen text: never derived from code that may change later.
STEPS = (
    Migration(
        "0005_create_drift",
        # one row per metric per agent per run (what `mir drift history` plots), and the
        # frozen reference windows it compares with (storage.py)
        (
            "CREATE TABLE drift_metrics (run_id VARCHAR NOT NULL, agent VARCHAR NOT NULL, "
            "metric VARCHAR NOT NULL, kind VARCHAR NOT NULL, "
            "reference_start TIMESTAMPTZ, reference_end TIMESTAMPTZ, "
            "current_start TIMESTAMPTZ, current_end TIMESTAMPTZ, reference_n BIGINT, "
            "current_n BIGINT, reference_value DOUBLE, current_value DOUBLE, value DOUBLE, "
            "p_value DOUBLE, warn DOUBLE, suspend DOUBLE, verdict VARCHAR NOT NULL, "
            'window_spec VARCHAR, "at" TIMESTAMPTZ NOT NULL)',
            'CREATE INDEX drift_metrics_agent ON drift_metrics (agent, metric, "at")',
            "CREATE TABLE drift_references (agent VARCHAR NOT NULL, name VARCHAR NOT NULL, "
            "first_flow_at TIMESTAMPTZ NOT NULL, last_flow_at TIMESTAMPTZ NOT NULL, "
            'flows BIGINT NOT NULL, "at" TIMESTAMPTZ NOT NULL, PRIMARY KEY (agent, name))',
        ),
    ),
    Migration(
        "0006_create_drift_rows",
        # every stored `final` event parsed once (its record's JSON is most of what a
        # drift run cost), keyed by the event's (segment, n), and how far each segment
        # was parsed (rows.py). Derived data: rebuilt from `events`.
        (
            "CREATE TABLE drift_rows (segment VARCHAR NOT NULL, n BIGINT NOT NULL, "
            'agent VARCHAR, flow_id VARCHAR, "at" TIMESTAMPTZ, status VARCHAR, '
            "reasons VARCHAR[], provider VARCHAR, model VARCHAR, cost_usd DOUBLE, "
            "src VARCHAR, contract_hash VARCHAR, prompt_hashes VARCHAR[], latency_ms DOUBLE, "
            "tokens DOUBLE, "
            "decision VARCHAR)",
            "CREATE TABLE drift_ingested (ingested_segment VARCHAR PRIMARY KEY, "
            "upto BIGINT NOT NULL, events BIGINT NOT NULL)",
        ),
    ),
    Migration(
        "0007_create_drift_lake_rows",
        # the same parsed rows for the final events of the fleet's trace lake that came
        # from other hosts (their segments never change once shipped), and each such
        # segment's unique event count when parsed (rows.py). Derived data, as above.
        (
            "CREATE TABLE drift_lake_rows (segment VARCHAR NOT NULL, n BIGINT NOT NULL, "
            'agent VARCHAR, flow_id VARCHAR, "at" TIMESTAMPTZ, status VARCHAR, '
            "reasons VARCHAR[], provider VARCHAR, model VARCHAR, cost_usd DOUBLE, "
            "src VARCHAR, contract_hash VARCHAR, prompt_hashes VARCHAR[], latency_ms DOUBLE, "
            "tokens DOUBLE, decision VARCHAR)",
            "CREATE TABLE drift_lake_ingested (ingested_segment VARCHAR PRIMARY KEY, "
            "events BIGINT NOT NULL)",
        ),
    ),
)
TABLES = (SCOPE, STEPS)


def step(name: str) -> Migration:
    [found] = [s for s in STEPS if s.name == name]
    return found


def migrate(con: Any) -> list[str]:
    """Drift's steps on a writable, migrated trace database (what ``analysis`` does)."""
    return migrate_steps(con, SCOPE, STEPS)
