"""Eval runs over time on the fleet store: the same two tables as the DuckDB history
(``mir.evals.history``), in the Postgres every host of a project shares.

- Same rows in, same rows out: the run and case rows are built by the DuckDB history's
  own functions and read back as the same ``HistoryRow`` and case dicts (a case's place
  in its run, ``n``, keeps them in case order as DuckDB's ``rowid`` does).
- A report is one transaction: its runs by ``executemany``, its case rows by ``COPY``
  (1,000 case runs in one round trip).
- Many writers at once, on any host, simply both land: rows are only inserted, under
  random run ids, so nobody waits on a file lock.
- The server unreachable is ``StoreUnavailable`` (one line, exit 2) for a reader;
  ``try_record`` turns it into the warning line, as a busy DuckDB file.
"""

from __future__ import annotations

import contextlib
import uuid
from datetime import UTC, datetime
from typing import Any

from mir.evals.domain import EvalReport
from mir.evals.history import (
    _CASE_COLUMNS,
    _RUN_COLUMNS,
    EvalHistory,
    EvalHistoryError,
    HistoryRow,
    _case_rows,
    _run_row,
)
from mir.storage import (
    FleetStore,
    Migration,
    ScopedStore,
    StoreUnavailable,
    UnknownMigrationError,
    one_line_errors,
)

# Frozen text: never derived from code that may change later.
MIGRATIONS = (
    Migration(
        "0001_create_runs",
        "CREATE TABLE IF NOT EXISTS eval_runs (run_id TEXT PRIMARY KEY, "
        "recorded_at TIMESTAMPTZ NOT NULL, suite TEXT NOT NULL, agent TEXT NOT NULL, "
        "started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, provider TEXT, model TEXT, "
        "prompt_hash TEXT, contract_hash TEXT, runs INTEGER, passed INTEGER, cases INTEGER, "
        "pass_rate DOUBLE PRECISION, broken INTEGER, fixed INTEGER, p_value DOUBLE PRECISION, "
        "gate_passed BOOLEAN, reasons TEXT[], interrupted BOOLEAN, ece DOUBLE PRECISION, "
        "position_consistency DOUBLE PRECISION, origin TEXT)",
    ),
    Migration(
        "0002_create_case_results",
        (
            "CREATE TABLE IF NOT EXISTS eval_case_results (run_id TEXT NOT NULL, "
            "n INTEGER NOT NULL, case_id TEXT NOT NULL, "
            '"repeat" INTEGER NOT NULL, passed BOOLEAN, status TEXT, action TEXT, '
            "change TEXT, confidence DOUBLE PRECISION, latency_ms DOUBLE PRECISION, "
            "tokens BIGINT, cached BOOLEAN, error TEXT, failed TEXT, PRIMARY KEY (run_id, n))",
        ),
    ),
    Migration(
        "0003_index_runs_by_agent",
        "CREATE INDEX IF NOT EXISTS eval_runs_by_agent ON eval_runs (agent, recorded_at)",
    ),
)
_ROW_COLUMNS = (
    "run_id, recorded_at, started_at, suite, agent, runs, passed, cases, pass_rate, broken, "
    "fixed, p_value, gate_passed, interrupted, provider, model, prompt_hash, ece, origin"
)


class PostgresEvalHistory:
    """``EvalRunLog`` on ``store`` (see the module docstring)."""

    def __init__(self, store: FleetStore):
        self.url = store.url
        self.where = store.display_url
        self._handle = ScopedStore(store, "evals", MIGRATIONS)

    def _store(self) -> FleetStore:
        return self._handle.get()

    # ------------------------------------------------------------------ writing
    def record(
        self, report: EvalReport, *, at: datetime | None = None, origin: str | None = None
    ) -> list[str]:
        """Store every suite of ``report`` in one transaction; returns the run ids."""
        at = at or datetime.now(UTC)
        ids = [uuid.uuid4().hex for _ in report.suites]
        runs = [_run_row(i, s, at, origin) for i, s in zip(ids, report.suites, strict=True)]
        values = ", ".join(["%s"] * len(_RUN_COLUMNS.split(", ")))
        with self._explained(), self._store().transaction() as con:
            with con.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO eval_runs ({_RUN_COLUMNS}) VALUES ({values})",
                    runs,
                )
            with (
                con.cursor() as cur,
                cur.copy(f"COPY eval_case_results (n, {_CASE_COLUMNS}) FROM STDIN") as copy,
            ):
                for run_id, suite in zip(ids, report.suites, strict=True):
                    for n, row in enumerate(_case_rows(run_id, suite)):
                        copy.write_row((n, *row))
        return ids

    def copy_from(self, local: EvalHistory, *, dry_run: bool) -> tuple[int, int]:
        """``mir store migrate``: the runs of a host's local history the fleet lacks, with
        their case results, in one transaction (a run id is never copied twice); returns
        (copied, already there). ``dry_run``: count, write nothing."""
        runs, cases = local.everything()
        if not runs:
            return 0, 0
        ids = [row[0] for row in runs]
        store = FleetStore.shared(self.url) if dry_run else self._store()  # dry: no tables
        with self._explained(), store.connection() as con:
            table = con.execute("SELECT to_regclass('eval_runs')").fetchone()[0]
            known = (
                {r[0] for r in con.execute(
                    "SELECT run_id FROM eval_runs WHERE run_id = ANY(%s)", (ids,)
                ).fetchall()}
                if table is not None
                else set()
            )  # fmt: skip
            new = [row for row in runs if row[0] not in known]
            if dry_run or not new:
                return len(new), len(known)
            wanted = {row[0] for row in new}
            values = ", ".join(["%s"] * len(_RUN_COLUMNS.split(", ")))
            with con.transaction(), con.cursor() as cur:
                cur.executemany(f"INSERT INTO eval_runs ({_RUN_COLUMNS}) VALUES ({values})", new)
                numbers: dict[str, int] = {}
                with cur.copy(f"COPY eval_case_results (n, {_CASE_COLUMNS}) FROM STDIN") as copy:
                    for row in cases:
                        if row[0] in wanted:
                            n = numbers[row[0]] = numbers.get(row[0], -1) + 1
                            copy.write_row((n, *row))
        return len(new), len(known)

    def try_record(self, report: EvalReport, *, origin: str | None = None) -> str | None:
        """``record``, turning a failure into the warning line to print (None when
        stored): a store that is down must never cost the run its report."""
        try:
            self.record(report, origin=origin)
        except (EvalHistoryError, UnknownMigrationError, StoreUnavailable) as exc:
            return f"eval history not recorded: {exc}"
        return None

    # ------------------------------------------------------------------ reading
    def rows(self, agent: str, *, limit: int = 20) -> list[HistoryRow]:
        """The last ``limit`` runs of ``agent``, oldest first (``triage`` also finds
        ``desk.triage`` and the other way round), as the DuckDB history answers."""
        with self._explained(), self._store().connection() as con:
            cursor = con.execute(
                f"SELECT {_ROW_COLUMNS} FROM eval_runs WHERE agent = %(a)s "
                "OR agent LIKE '%%.' || %(a)s OR %(a)s LIKE '%%.' || agent "
                "ORDER BY recorded_at DESC, started_at DESC NULLS LAST LIMIT %(n)s",
                {"a": agent, "n": limit},
            )
            names = [d.name for d in cursor.description]
            found = [HistoryRow(**dict(zip(names, row, strict=True))) for row in cursor]
        return found[::-1]

    def case_rows(self, run_id: str) -> list[dict[str, Any]]:
        """The case results of one recorded run, in case order."""
        with self._explained(), self._store().connection() as con:
            cursor = con.execute(
                f"SELECT {_CASE_COLUMNS} FROM eval_case_results WHERE run_id = %s ORDER BY n",
                (run_id,),
            )
            names = [d.name for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor]

    def _explained(self) -> contextlib.AbstractContextManager[None]:
        return one_line_errors(
            lambda first: EvalHistoryError(
                f"not a usable eval history ({first})",
                where=self.where,
                hint="check the fleet store's mir.eval_runs table; the report was not lost",
            )
        )
