"""Eval runs over time, in DuckDB (``.mir/evals.duckdb``): ``mir eval history AGENT``.

Two tables, created through named, ordered steps (``mir.storage.migrate``, scope ``evals``):
``runs`` (one row per suite run: pass rate, broken/fixed, gate, model, prompt hash) and
``case_results`` (one row per case and repeat). A report is recorded in one
transaction; the case rows go through one newline-delimited JSON file read by DuckDB
in a single insert (binding parameters row by row cost 0.25 s per 1,000 case runs;
the file, 0.02 s).

DuckDB lets one process write a file at a time. A connection is held only while a
report is written, so two ``mir eval`` processes finishing together take turns: a
writer retries for a few seconds and then raises ``EvalHistoryError``, one clear line.
Recording comes after the report is printed and its failure never hides the report
(``try_record`` returns the warning instead of raising).
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from mir.errors import MirUserError
from mir.evals.domain import EvalReport, SuiteResult
from mir.evals.reports import failed_assertions
from mir.storage import (
    Migration,
    UnknownMigrationError,
    is_lock_conflict,
    migrate,
    retrying_while_locked,
)

if TYPE_CHECKING:
    import duckdb

    from mir.project import Project

FILE_NAME = "evals.duckdb"
LOCK_TIMEOUT_SECONDS = 5.0
_CHUNK = 400  # rows per INSERT: few statements, and well under DuckDB's parameter limits

# Migrations are frozen text: never derived from code that may change later.
MIGRATIONS = (
    Migration(
        "0001_create_runs",
        (
            "CREATE TABLE runs (run_id VARCHAR PRIMARY KEY, recorded_at TIMESTAMPTZ NOT NULL, "
            "suite VARCHAR NOT NULL, agent VARCHAR NOT NULL, started_at TIMESTAMPTZ, "
            "finished_at TIMESTAMPTZ, provider VARCHAR, model VARCHAR, prompt_hash VARCHAR, "
            "contract_hash VARCHAR, runs INTEGER, passed INTEGER, cases INTEGER, "
            "pass_rate DOUBLE, broken INTEGER, fixed INTEGER, p_value DOUBLE, "
            "gate_passed BOOLEAN, reasons VARCHAR[], interrupted BOOLEAN, ece DOUBLE, "
            "position_consistency DOUBLE)",
        ),
    ),
    Migration(
        "0002_create_case_results",
        (
            "CREATE TABLE case_results (run_id VARCHAR NOT NULL, case_id VARCHAR NOT NULL, "
            '"repeat" INTEGER NOT NULL, passed BOOLEAN, status VARCHAR, action VARCHAR, '
            "change VARCHAR, confidence DOUBLE, latency_ms DOUBLE, tokens BIGINT, "
            "cached BOOLEAN, error VARCHAR, failed VARCHAR)",
        ),
    ),
    # what ran the suite: NULL for `mir eval`, 'promotion gate NAME@VERSION' for the
    # gate of `mir models promote --to production`
    Migration("0003_runs_origin", ("ALTER TABLE runs ADD COLUMN origin VARCHAR",)),
)
_RUN_COLUMNS = (
    "run_id, recorded_at, suite, agent, started_at, finished_at, provider, model, "
    "prompt_hash, contract_hash, runs, passed, cases, pass_rate, broken, fixed, p_value, "
    "gate_passed, reasons, interrupted, ece, position_consistency, origin"
)
# case_results' columns and their types, in table order (the bulk file's schema)
_CASE_TYPES = {
    "run_id": "VARCHAR",
    "case_id": "VARCHAR",
    "repeat": "INTEGER",
    "passed": "BOOLEAN",
    "status": "VARCHAR",
    "action": "VARCHAR",
    "change": "VARCHAR",
    "confidence": "DOUBLE",
    "latency_ms": "DOUBLE",
    "tokens": "BIGINT",
    "cached": "BOOLEAN",
    "error": "VARCHAR",
    "failed": "VARCHAR",
}
_CASE_COLUMNS = ", ".join(f'"{name}"' for name in _CASE_TYPES)


class EvalHistoryError(MirUserError):
    """The history database cannot be opened (held by another process, or damaged)."""


class HistoryRow(BaseModel):
    """One recorded suite run, as ``mir eval history`` lists it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    recorded_at: datetime
    started_at: datetime | None
    suite: str
    agent: str
    runs: int
    passed: int
    cases: int
    pass_rate: float
    broken: int | None
    fixed: int | None
    p_value: float | None
    gate_passed: bool
    interrupted: bool
    provider: str | None
    model: str | None
    prompt_hash: str | None
    ece: float | None
    origin: str | None = None  # None: `mir eval`; else e.g. 'promotion gate qwen@2'


class EvalHistory:
    """The project's eval run history (the file is created on first record)."""

    def __init__(self, path: Path, *, lock_timeout: float = LOCK_TIMEOUT_SECONDS) -> None:
        self.path = path
        self.lock_timeout = lock_timeout

    @classmethod
    def for_project(cls, project: Project) -> EvalHistory:
        return cls(project.state_dir / FILE_NAME)

    # ------------------------------------------------------------------ writing
    def record(
        self, report: EvalReport, *, at: datetime | None = None, origin: str | None = None
    ) -> list[str]:
        """Store every suite of ``report`` in one transaction; returns the run ids.
        ``origin``: what ran it when not ``mir eval`` (a promotion gate)."""
        at = at or datetime.now(UTC)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        ids = [uuid.uuid4().hex for _ in report.suites]
        with self._connect(read_only=False) as con:
            migrate(con, "evals", MIGRATIONS, where=str(self.path))
            con.execute("BEGIN TRANSACTION")
            try:
                runs = [
                    _run_row(run_id, s, at, origin)
                    for run_id, s in zip(ids, report.suites, strict=True)
                ]
                _insert(con, "runs", _RUN_COLUMNS, runs)
                for run_id, suite in zip(ids, report.suites, strict=True):
                    self._insert_cases(con, _case_rows(run_id, suite))
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        return ids

    def _insert_cases(self, con: duckdb.DuckDBPyConnection, rows: Sequence[tuple]) -> None:
        if not rows:
            return
        handle, temporary = tempfile.mkstemp(
            prefix=".case-results-", suffix=".jsonl", dir=self.path.parent
        )
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                for row in rows:
                    out.write(json.dumps(dict(zip(_CASE_TYPES, row, strict=True))) + "\n")
            spec = "{" + ", ".join(f"'{n}': '{t}'" for n, t in _CASE_TYPES.items()) + "}"
            con.execute(
                f"INSERT INTO case_results ({_CASE_COLUMNS}) SELECT {_CASE_COLUMNS} FROM "
                f"read_json(?, format='newline_delimited', columns={spec})",
                [temporary],
            )
        finally:
            Path(temporary).unlink(missing_ok=True)

    def try_record(self, report: EvalReport, *, origin: str | None = None) -> str | None:
        """``record``, turning a failure into the warning line to print (None when
        stored): a busy or damaged history must never cost the run its report."""
        try:
            self.record(report, origin=origin)
        except (EvalHistoryError, UnknownMigrationError) as exc:  # or a newer mir's file
            return f"eval history not recorded: {exc}"
        return None

    # ------------------------------------------------------------------ reading
    def rows(self, agent: str, *, limit: int = 20) -> list[HistoryRow]:
        """The last ``limit`` runs of ``agent``, oldest first. ``triage`` also finds
        ``desk.triage`` and the other way round (a suite names its agent either way)."""
        if not self._readable():
            return []
        with self._connect(read_only=True) as con:
            exists = con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_name = 'runs'"
            ).fetchone()
            if not exists or not exists[0]:
                return []
            cursor = con.execute(
                "SELECT run_id, recorded_at, started_at, suite, agent, runs, passed, cases, "
                "pass_rate, broken, fixed, p_value, gate_passed, interrupted, provider, model, "
                "prompt_hash, ece, origin FROM runs "
                "WHERE agent = $1 OR agent LIKE '%.' || $1 OR $1 LIKE '%.' || agent "
                "ORDER BY recorded_at DESC, started_at DESC LIMIT $2",
                [agent, limit],
            )
            names = [d[0] for d in cursor.description]
            found = [HistoryRow(**dict(zip(names, row, strict=True))) for row in cursor.fetchall()]
        return found[::-1]

    def case_rows(self, run_id: str) -> list[dict[str, Any]]:
        """The case results of one recorded run, in case order."""
        if not self._readable():
            return []
        with self._connect(read_only=True) as con:
            cursor = con.execute(
                f"SELECT {_CASE_COLUMNS} FROM case_results WHERE run_id = ? ORDER BY rowid",
                [run_id],
            )
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def everything(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """Every run (``_RUN_COLUMNS``) and every case result (``_CASE_COLUMNS``, in
        case order within its run), for ``mir store migrate``; none without a history."""
        if not self._readable():
            return [], []
        with self._connect(read_only=True) as con:
            runs = con.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY recorded_at, run_id")
            run_rows = runs.fetchall()
            cases = con.execute(f"SELECT {_CASE_COLUMNS} FROM case_results ORDER BY rowid")
            return run_rows, cases.fetchall()

    # ------------------------------------------------------------------ the file
    def _readable(self) -> bool:
        """False when there is no history yet; something else in its place (a folder)
        is an error, not "no runs" (``mir eval`` warns about it when recording)."""
        if self.path.exists() and not self.path.is_file():
            raise EvalHistoryError(
                "not a readable eval history (a folder, not a file)",
                where=str(self.path),
                hint="move it aside; the next `mir eval` starts a new history",
            )
        return self.path.is_file()

    @contextmanager
    def _connect(self, *, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        import duckdb

        try:  # another mir eval writing its report: take turns
            con = retrying_while_locked(
                lambda: duckdb.connect(str(self.path), read_only=read_only), self.lock_timeout
            )
        except duckdb.Error as exc:
            raise _explain(self.path, exc, locked=is_lock_conflict(exc)) from exc
        try:
            con.execute("SET enable_progress_bar = false")
            yield con
        except duckdb.Error as exc:
            raise _explain(self.path, exc, locked=False) from exc
        finally:
            con.close()


def _explain(path: Path, exc: Exception, *, locked: bool) -> EvalHistoryError:
    if locked:
        return EvalHistoryError(
            "the eval history is held open by another process",
            where=str(path),
            hint="wait for the other `mir eval` (or close a duckdb shell) and retry",
        )
    first_line = str(exc).splitlines()[0]
    return EvalHistoryError(
        f"not a readable eval history ({first_line})",
        where=str(path),
        hint="move the file aside; the next `mir eval` starts a new history",
    )


def _insert(
    con: duckdb.DuckDBPyConnection, table: str, columns: str, rows: Sequence[tuple]
) -> None:
    if not rows:
        return
    width = len(rows[0])
    placeholder = "(" + ", ".join("?" * width) + ")"
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start : start + _CHUNK]
        values = ", ".join([placeholder] * len(chunk))
        params = [value for row in chunk for value in row]
        con.execute(f"INSERT INTO {table} ({columns}) VALUES {values}", params)


def _run_row(run_id: str, suite: SuiteResult, at: datetime, origin: str | None) -> tuple:
    comparison = suite.comparison
    passed = sum(r.passed for r in suite.runs)
    return (
        run_id,
        at,
        suite.suite,
        suite.agent,
        suite.started_at,
        suite.finished_at,
        suite.provider,
        suite.model,
        suite.prompt_hash,
        suite.contract_hash,
        len(suite.runs),
        passed,
        len(suite.cases),
        suite.gate.pass_rate,
        None if comparison is None else len(comparison.broken),
        None if comparison is None else len(comparison.fixed),
        None if comparison is None else comparison.p_value,
        suite.gate.passed,
        list(suite.gate.reasons),
        suite.interrupted,
        None if suite.confidence is None else suite.confidence.ece,
        suite.position_consistency,
        origin,
    )


def _case_rows(run_id: str, suite: SuiteResult) -> list[tuple]:
    change = {s.case_id: s.change for s in suite.cases}
    return [
        (
            run_id,
            run.case_id,
            run.repeat,
            run.passed,
            run.status,
            run.action,
            change.get(run.case_id),
            run.confidence,
            run.latency_ms,
            run.tokens,
            run.cached,
            run.error,
            "; ".join(a.message or a.type for a in failed_assertions(run)) or None,
        )
        for run in suite.runs
    ]
