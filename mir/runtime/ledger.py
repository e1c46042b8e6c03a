"""The execution ledger: one SQLite file, ``<state_dir>/executions.db``, shared by every
process of a project.

Two tables, each keyed by what must happen at most once:

``executions`` (idempotency key)
    A row is inserted BEFORE the executor runs (the claim) and its ``outcome`` filled in
    after. The primary key makes the insert atomic across processes: exactly one claims
    a key, whatever the others do and whenever any of them dies. A row without an
    outcome is a crash in the middle: "in doubt", never run again.
``flows`` (flow id)
    Who holds a flow's one outcome: an approval, a rejection, a replay, or the run that
    executes it. First writer wins; the loser is told the holder's status, name and
    time. A claim left unsettled by a process that is known to be dead (same host, pid
    gone or reused) is taken over by the next reviewer; one on another host is not (we
    cannot tell it died).

Every claim and every outcome is one short ``BEGIN IMMEDIATE`` transaction in WAL mode
(readers never block, writers queue behind ``busy_timeout``). A commit survives the
process being killed as soon as it returns; surviving a power loss needs
``synchronous=FULL`` (an fsync per commit), which follows the trace store's switch
(``[tool.mir.traces] fsync = true``), as the events a resume needs do. The stored info,
result and error go through the trace store's redactor: no secret lands here either.

A project that still has the older file-per-key folder (``<state_dir>/executions/``) is
migrated on first use: every file is imported (one transaction, upserts, so a rerun is a
no-op), then the imported files are deleted and the folder removed when empty. A crash
anywhere in between leaves each claim in the files, the database, or both.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from mir.errors import ConfigError
from mir.runtime.ports import FlowAlreadyDecided
from mir.storage import FlowClaim, FlowHolder, Migration, migrate

# A ledger written before the migration runner (``PRAGMA user_version`` 1) holds these
# tables already: ``IF NOT EXISTS`` makes its steps no-ops there, and then recorded.
MIGRATIONS = (
    Migration(
        "0001_create_executions",
        "CREATE TABLE IF NOT EXISTS executions (key TEXT PRIMARY KEY, claimed_us INTEGER "
        "NOT NULL, info TEXT NOT NULL, outcome TEXT, completed_us INTEGER) WITHOUT ROWID",
    ),
    Migration(
        "0002_create_flows",
        "CREATE TABLE IF NOT EXISTS flows (flow_id TEXT PRIMARY KEY, state TEXT NOT NULL, "
        "final TEXT, by TEXT NOT NULL, at_us INTEGER NOT NULL, owner TEXT NOT NULL, "
        "host TEXT NOT NULL, pid INTEGER NOT NULL, started INTEGER) WITHOUT ROWID",
    ),
)
_FLOW = "SELECT flow_id, state, final, by, at_us, owner, host, pid, started FROM flows"
Redact = Callable[[Any], Any]
T = TypeVar("T")


class LedgerError(ConfigError):
    """The ledger file cannot be used (locked for too long, damaged, not writable)."""


def _busy(exc: sqlite3.DatabaseError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _now_us() -> int:
    return time.time_ns() // 1000


def _iso(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, UTC).isoformat(timespec="seconds")


def _start_time(pid: int) -> int | None:
    """When a process started (clock ticks since boot; Linux): tells a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    if fields and fields[0] == "Z":  # a zombie has finished: its claim is dead
        return -1
    return int(fields[19]) if len(fields) > 19 else None


def _alive(host: str, pid: int, started: int | None) -> bool:
    if host != socket.gethostname():
        return True  # cannot tell from here: never take over another machine's claim
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    now_started = _start_time(pid)
    if now_started == -1:
        return False
    return started is None or now_started is None or now_started == started


class SqliteExecutionLedger:
    def __init__(
        self,
        path: Path,
        *,
        fsync: bool = False,
        redact: Redact | None = None,
        legacy: Path | None = None,
        busy_timeout: float = 30.0,
    ):
        self.path = Path(path)
        self.fsync = fsync
        self.legacy = legacy
        self.redact = redact or (lambda value: value)
        self._busy_timeout = busy_timeout
        # Who this ledger is, in the flows it holds: a token (two ledgers of one process
        # are two holders) plus what lets another process tell whether we are alive.
        self._owner = uuid.uuid4().hex[:16]
        self._host = socket.gethostname()
        self._pid, self._started = os.getpid(), _start_time(os.getpid())
        self._local = threading.local()
        self._claimed: dict[str, str] = {}  # key -> flow id, for complete()

    # -- connection ----------------------------------------------------------------

    def _con(self) -> sqlite3.Connection:
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is not None and self._local.pid == os.getpid():
            return con
        con = self._retrying(self._open)
        self._local.con, self._local.pid = con, os.getpid()
        if self._pid != os.getpid():  # a forked child is another holder
            self._pid, self._started = os.getpid(), _start_time(os.getpid())
            self._owner = uuid.uuid4().hex[:16]
        if self.legacy is not None and self.legacy.is_dir():
            migrate_folder(self, self.legacy)
        return con

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None)
        try:
            if con.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                con.execute("PRAGMA journal_mode=WAL")  # once per file: it is persistent
            con.execute(f"PRAGMA synchronous={'FULL' if self.fsync else 'NORMAL'}")
            migrate(con, "ledger", MIGRATIONS, where=str(self.path))
        except BaseException:
            con.close()
            raise
        return con

    def _write(self, body: Callable[[sqlite3.Connection], T]) -> T:
        """``body`` in one ``BEGIN IMMEDIATE`` transaction; rolled back if it raises."""

        def attempt() -> T:
            con = self._con()
            con.execute("BEGIN IMMEDIATE")
            try:
                result = body(con)
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
            return result

        return self._retrying(attempt)

    def _read(self, sql: str, params: tuple[Any, ...]) -> Any:
        return self._retrying(lambda: self._con().execute(sql, params).fetchone())

    def _retrying(self, action: Callable[[], T]) -> T:
        """SQLite answers "locked" at once (without waiting ``busy_timeout``) in a few
        corners: while a new file switches to WAL, or its WAL index is rebuilt. Those
        last milliseconds: retry them up to the same patience, then say so in one line."""
        deadline = time.monotonic() + self._busy_timeout
        pause = 0.005
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() > deadline:
                    raise self._error(exc) from exc
            except sqlite3.DatabaseError as exc:
                raise self._error(exc) from exc
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def _error(self, exc: sqlite3.DatabaseError) -> LedgerError:
        return LedgerError(
            f"the execution ledger is unusable: {exc}",
            where=str(self.path),
            hint="another process held it too long; retry"
            if _busy(exc)
            else "check the folder is writable; a damaged file: move it away and re-run",
        )

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None

    # -- executions ----------------------------------------------------------------

    def claim(self, key: str, info: Mapping[str, Any]) -> bool:
        flow_id = info.get("flow_id")
        record = _json(self.redact(dict(info)))

        def body(con: sqlite3.Connection) -> bool:
            by = str(info.get("by", "its run"))
            if flow_id is not None and not self._insert_flow(con, str(flow_id), "executing", by):
                row = con.execute(f"{_FLOW} WHERE flow_id = ?", (flow_id,)).fetchone()
                if row[5] != self._owner:
                    raise FlowAlreadyDecided.held_by(_holder(row))
                con.execute("UPDATE flows SET state = 'executing' WHERE flow_id = ?", (flow_id,))
            cursor = con.execute(
                "INSERT INTO executions (key, claimed_us, info) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO NOTHING",
                (key, _now_us(), record),
            )
            return cursor.rowcount == 1

        won = self._write(body)
        if won and flow_id is not None:
            self._claimed[key] = str(flow_id)
        return won

    def complete(self, key: str, outcome: Mapping[str, Any]) -> None:
        record = _json(self.redact(dict(outcome)))
        flow_id = self._claimed.pop(key, None)
        state = "executed" if outcome.get("ok") else "executor_error"

        def body(con: sqlite3.Connection) -> None:
            con.execute(
                "UPDATE executions SET outcome = ?, completed_us = ? WHERE key = ?",
                (record, _now_us(), key),
            )
            if flow_id is not None:
                con.execute(
                    "UPDATE flows SET state = ? WHERE flow_id = ? AND owner = ?",
                    (state, flow_id, self._owner),
                )

        self._write(body)

    def outcome(self, key: str) -> Mapping[str, Any] | None:
        row = self._read("SELECT outcome FROM executions WHERE key = ?", (key,))
        return json.loads(row[0]) if row is not None and row[0] is not None else None

    def claimed(self, key: str) -> bool:
        return self._read("SELECT 1 FROM executions WHERE key = ?", (key,)) is not None

    # -- flows ---------------------------------------------------------------------

    def claim_flow(self, flow_id: str, state: str, *, by: str) -> FlowClaim:
        def body(con: sqlite3.Connection) -> FlowClaim:
            row = con.execute(f"{_FLOW} WHERE flow_id = ?", (flow_id,)).fetchone()
            if row is None:
                self._insert_flow(con, flow_id, state, by)
                return FlowClaim(won=True)
            holder = _holder(row)
            if row[5] == self._owner:
                con.execute("UPDATE flows SET state = ? WHERE flow_id = ?", (state, flow_id))
                return FlowClaim(won=True)
            if row[2] is None and not _alive(row[6], row[7], row[8]):
                con.execute("DELETE FROM flows WHERE flow_id = ?", (flow_id,))
                self._insert_flow(con, flow_id, state, by)
                return FlowClaim(won=True, holder=holder)
            return FlowClaim(won=False, holder=holder)

        return self._write(body)

    def holder(self, flow_id: str) -> FlowHolder | None:
        row = self._read(f"{_FLOW} WHERE flow_id = ?", (flow_id,))
        return _holder(row) if row is not None else None

    def settle_flow(self, flow_id: str, final: str) -> None:
        self._write(
            lambda con: con.execute(
                "UPDATE flows SET final = ?, state = ? WHERE flow_id = ? AND owner = ?",
                (final, final, flow_id, self._owner),
            )
        )

    def release_flow(self, flow_id: str) -> None:
        self._write(
            lambda con: con.execute(
                "DELETE FROM flows WHERE flow_id = ? AND owner = ? AND final IS NULL",
                (flow_id, self._owner),
            )
        )

    def _insert_flow(self, con: sqlite3.Connection, flow_id: str, state: str, by: str) -> bool:
        """Hold the flow if nobody does; False when a row is there already."""
        # `by` is whatever the reviewer typed (`--by`): stored and shown to the loser of a
        # race, so it is redacted like every other stored string.
        by = str(self.redact(by))
        cursor = con.execute(
            "INSERT INTO flows (flow_id, state, by, at_us, owner, host, pid, started) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (flow_id) DO NOTHING",
            (flow_id, state, by, _now_us(), self._owner, self._host, self._pid, self._started),
        )
        return cursor.rowcount == 1

    # -- migration -----------------------------------------------------------------

    def import_claims(self, claims: list[tuple[str, int, str, str | None]]) -> None:
        """Upsert (key, claimed_us, info, outcome) rows: an outcome is never lost."""
        self._write(
            lambda con: con.executemany(
                "INSERT INTO executions (key, claimed_us, info, outcome, completed_us) "
                "VALUES (?, ?, ?, ?, CASE WHEN ?4 IS NULL THEN NULL ELSE ?2 END) "
                "ON CONFLICT (key) DO UPDATE SET "
                "outcome = coalesce(outcome, excluded.outcome), "
                "completed_us = coalesce(completed_us, excluded.completed_us)",
                claims,
            )
        )


def _json(value: Any) -> str:
    return json.dumps(value, default=str, separators=(",", ":"), ensure_ascii=False)


def _holder(row: tuple[Any, ...]) -> FlowHolder:
    flow_id, state, final, by, at_us, _owner, host, pid, _started = row
    return FlowHolder(
        flow_id=flow_id,
        state=state,
        by=by,
        at=_iso(at_us),
        final=final,
        process=f"pid {pid} on {host}",
    )


def migrate_folder(ledger: SqliteExecutionLedger, folder: Path, batch: int = 10_000) -> int:
    """Import a file-per-key ledger folder, then delete what was imported (idempotent)."""
    names = sorted(p.name for p in folder.iterdir() if p.is_file() and p.name.isalnum())
    imported = 0
    for start in range(0, len(names), batch):
        rows = [_legacy_claim(folder / n, ledger.redact) for n in names[start : start + batch]]
        found = [row for row in rows if row is not None]
        ledger.import_claims(found)
        for key, *_ in found:  # only once the rows are committed
            (folder / key).unlink(missing_ok=True)
        imported += len(found)
    # not empty: something we did not import stays where it was
    with contextlib.suppress(OSError):
        folder.rmdir()
    return imported


def _legacy_claim(path: Path, redact: Redact) -> tuple[str, int, str, str | None] | None:
    """A claim file: its first line is the claim, its second (complete) line the outcome."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        claimed_us = path.stat().st_mtime_ns // 1000
    except FileNotFoundError:  # another process migrated it meanwhile
        return None
    lines = text.split("\n")
    info = redact(_json_line(lines[0]) or {})
    outcome = _json_line(lines[1]) if len(lines) >= 3 else None
    outcome = redact(outcome) if outcome is not None else None
    return (
        path.name,
        claimed_us,
        _json(info),
        _json(outcome) if outcome is not None else None,
    )


def _json_line(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:  # torn write: the process died while recording
        return None
    return value if isinstance(value, dict) else None
