"""Where drift's metric history and frozen references live: the trace database of this
host (``storage.py``), or, in a fleet whose traces are on a lake (``[tool.mir.store]
data_path``), the fleet store's Postgres, so every host's ``mir drift history`` and
``--reference NAME`` see the runs and snapshots of every host (their figures already
cover the whole fleet). A fleet store without a lake keeps them per host: each host's
figures are its own traffic's, and mixing them in one history would mislead.

A run whose history cannot be written to Postgres (the server away) keeps its report
and says so in a note; reading a history or a reference from a store that is down is
one line (exit 2).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from mir.drift import storage
from mir.drift.domain import DriftReport, HistoryPoint
from mir.errors import MirUserError
from mir.storage import FleetStore, Migration, ScopedStore, StoreSettings, lake_path

if TYPE_CHECKING:
    import duckdb

    from mir.project import Project

# Frozen text: never derived from code that may change later.
MIGRATIONS = (
    Migration(
        "0001_create_drift_history",
        (
            "CREATE TABLE IF NOT EXISTS drift_metrics (run_id TEXT NOT NULL, agent TEXT NOT "
            "NULL, metric TEXT NOT NULL, kind TEXT NOT NULL, reference_start TIMESTAMPTZ, "
            "reference_end TIMESTAMPTZ, current_start TIMESTAMPTZ, current_end TIMESTAMPTZ, "
            "reference_n BIGINT, current_n BIGINT, reference_value DOUBLE PRECISION, "
            "current_value DOUBLE PRECISION, value DOUBLE PRECISION, p_value DOUBLE PRECISION, "
            "warn DOUBLE PRECISION, suspend DOUBLE PRECISION, verdict TEXT NOT NULL, "
            'window_spec TEXT, "at" TIMESTAMPTZ NOT NULL)',
            'CREATE INDEX IF NOT EXISTS drift_metrics_agent ON drift_metrics (agent, metric, "at")',
            "CREATE TABLE IF NOT EXISTS drift_references (agent TEXT NOT NULL, name TEXT NOT "
            "NULL, first_flow_at TIMESTAMPTZ NOT NULL, last_flow_at TIMESTAMPTZ NOT NULL, "
            'flows BIGINT NOT NULL, "at" TIMESTAMPTZ NOT NULL, PRIMARY KEY (agent, name))',
        ),
    ),
)
_NAMES = ", ".join(f'"{c}"' for c in storage._COLUMNS)


class LocalDriftLog:
    """The history in this host's trace database (``con``: the drift view's)."""

    shared = False

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def store_report(self, report: DriftReport, window_spec: str) -> str | None:
        storage.store_report(self.con, report, window_spec)
        return None

    def history(self, agent: str, metric: str | None, limit: int) -> list[HistoryPoint]:
        return storage.history(self.con, agent, metric, limit)

    def metrics_recorded(self, agent: str) -> list[str]:
        return storage.metrics_recorded(self.con, agent)

    def save_reference(self, agent: str, name: str, *span: Any) -> None:
        storage.save_reference(self.con, agent, name, *span)

    def load_reference(self, agent: str, name: str) -> tuple[datetime, datetime, int] | None:
        return storage.load_reference(self.con, agent, name)

    def reference_names(self, agent: str) -> list[str]:
        return storage.reference_names(self.con, agent)


class PostgresDriftLog:
    """The history in the fleet store (see the module docstring)."""

    shared = True

    def __init__(self, store: FleetStore):
        self._handle = ScopedStore(store, "drift", MIGRATIONS)

    def store_report(self, report: DriftReport, window_spec: str) -> str | None:
        rows = [
            (report.run_id, agent.agent, m.metric, m.kind, agent.reference.start,
             agent.reference.end, agent.current.start, agent.current.end, m.reference_n,
             m.current_n, m.reference, m.current, m.value, m.p_value, m.warn, m.suspend,
             m.verdict, window_spec, report.at)
            for agent in report.agents
            for m in agent.metrics
        ]  # fmt: skip
        if not rows:
            return None
        values = ", ".join(["%s"] * len(storage._COLUMNS))
        try:
            with self._handle.get().transaction() as con, con.cursor() as cur:
                cur.executemany(f"INSERT INTO drift_metrics ({_NAMES}) VALUES ({values})", rows)
        except MirUserError as exc:
            return f"this run was not recorded in the fleet's drift history: {exc}"
        return None

    def history(self, agent: str, metric: str | None, limit: int) -> list[HistoryPoint]:
        where, params = "agent = %(agent)s", {"agent": agent, "limit": limit}
        if metric is not None:
            where += " AND metric = %(metric)s"
            params["metric"] = metric
        with self._handle.get().connection() as con:
            rows = con.execute(
                'SELECT "at", metric, kind, value, p_value, verdict, current_n FROM ('
                f'SELECT * FROM drift_metrics WHERE {where} ORDER BY "at" DESC '
                'LIMIT %(limit)s) recent ORDER BY metric, "at"',
                params,
            ).fetchall()
        return [
            HistoryPoint(at=at, metric=m, kind=k, value=v, p_value=p, verdict=verdict, current_n=n)
            for at, m, k, v, p, verdict, n in rows
        ]

    def metrics_recorded(self, agent: str) -> list[str]:
        with self._handle.get().connection() as con:
            sql = "SELECT DISTINCT metric FROM drift_metrics WHERE agent = %s ORDER BY 1"
            return [row[0] for row in con.execute(sql, (agent,)).fetchall()]

    def save_reference(
        self, agent: str, name: str, first: datetime, last: datetime, flows: int, at: datetime
    ) -> None:
        with self._handle.get().transaction() as con:
            con.execute(
                "INSERT INTO drift_references (agent, name, first_flow_at, last_flow_at, flows, "
                '"at") VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (agent, name) DO UPDATE SET '
                "first_flow_at = excluded.first_flow_at, last_flow_at = excluded.last_flow_at, "
                'flows = excluded.flows, "at" = excluded."at"',
                (agent, name, first, last, flows, at),
            )

    def load_reference(self, agent: str, name: str) -> tuple[datetime, datetime, int] | None:
        with self._handle.get().connection() as con:
            row = con.execute(
                "SELECT first_flow_at, last_flow_at, flows FROM drift_references "
                "WHERE agent = %s AND name = %s",
                (agent, name),
            ).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def reference_names(self, agent: str) -> list[str]:
        with self._handle.get().connection() as con:
            sql = "SELECT name FROM drift_references WHERE agent = %s ORDER BY name"
            return [row[0] for row in con.execute(sql, (agent,)).fetchall()]


def drift_log(project: Project, con: duckdb.DuckDBPyConnection) -> Any:
    """The project's drift history: the fleet's with a trace lake, else this host's."""
    settings = project.section("store", StoreSettings)
    store = FleetStore.configured(settings)
    if store is not None and lake_path(settings):
        return PostgresDriftLog(store)
    return LocalDriftLog(con)


def copy_drift_history(project: Project, dry_run: bool) -> tuple[int, int]:
    """``mir store migrate``, in a fleet with a trace lake: this host's recorded drift
    runs (their metric rows) and frozen references the fleet lacks, each once; returns
    (rows copied, rows already there). Without a lake they stay where they are."""
    from mir.traces import TraceStore

    settings = project.section("store", StoreSettings)
    store = FleetStore.configured(settings)
    if store is None or not lake_path(settings):
        return 0, 0
    with (
        TraceStore.for_project(project, fleet_wide=False) as traces,
        traces.analysis() as (con, _events, _writable),
    ):
        if not storage.has_tables(con):
            return 0, 0
        metrics = con.execute(f"SELECT {_NAMES} FROM drift_metrics").fetchall()
        refs = con.execute(
            'SELECT agent, name, first_flow_at, last_flow_at, flows, "at" FROM drift_references'
        ).fetchall()
    if not metrics and not refs:
        return 0, 0
    target = (
        FleetStore.shared(store.url) if dry_run else ScopedStore(store, "drift", MIGRATIONS).get()
    )
    with target.connection() as pg, pg.transaction(force_rollback=dry_run):
        there = pg.execute("SELECT to_regclass('drift_metrics')").fetchone()[0] is not None
        runs = {row[0] for row in metrics}
        known = (
            {r[0] for r in pg.execute(
                "SELECT DISTINCT run_id FROM drift_metrics WHERE run_id = ANY(%s)", (list(runs),)
            ).fetchall()}
            if there
            else set()
        )  # fmt: skip
        names = (
            {(r[0], r[1]) for r in pg.execute("SELECT agent, name FROM drift_references")}
            if there
            else set()
        )
        new_metrics = [row for row in metrics if row[0] not in known]
        new_refs = [row for row in refs if (row[0], row[1]) not in names]
        if not dry_run:
            values = ", ".join(["%s"] * len(storage._COLUMNS))
            with pg.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO drift_metrics ({_NAMES}) VALUES ({values})", new_metrics
                )
                cur.executemany(
                    "INSERT INTO drift_references (agent, name, first_flow_at, last_flow_at, "
                    'flows, "at") VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING',
                    new_refs,
                )
    copied = len(new_metrics) + len(new_refs)
    return copied, len(metrics) + len(refs) - copied
