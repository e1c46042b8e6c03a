"""``mir store status`` and ``mir store migrate``: where a project's ledger and agent
states are, and moving the local ones (``.mir/executions.db``, an older
``.mir/executions/`` folder, ``.mir/agents.json``) into the fleet store.

- The local files are only read (sqlite opened read-only); a damaged one is a
  ``ConfigError`` naming it (exit 2), and nothing is copied.
- Everything is copied in one Postgres transaction, flow claims first, then execution
  keys (the order a decision claims them in), then agent states, each batch in key
  order: two migrates at once wait on each other's rows, never deadlock, and the second
  finds everything there already (``INSERT ... ON CONFLICT DO NOTHING``).
- What each row becomes is ``store_copy``'s rules: Postgres is never overwritten, except
  an active agent suspended locally (the safer state wins).
- Refused while a live local process holds a flow claim (a decision or review running
  here would record its outcome in the local files after the copy).
- Once committed, ``<state_dir>/store-migrated.json`` records the fleet URL (password
  hidden) and the local history's fingerprint: ``status`` stops warning until the local
  files change again. The local files are kept, and no longer read in fleet mode.
"""

from __future__ import annotations

import json
import socket
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.errors import ConfigError, UsageError
from mir.project import Project, find_project
from mir.runtime.agent_states import AgentStateFile
from mir.runtime.ledger import _alive, _legacy_claim
from mir.runtime.store_copy import (
    Row,
    StoreMigration,
    StoreStatus,
    TableCopy,
    agent_verdict,
    fingerprint,
    row_verdict,
    unmigrated_warning,
)
from mir.runtime.stores import fleet
from mir.storage import FleetStore, quiet_pool_log, write_atomic

MARKER = "store-migrated.json"
_DONE = ("executed", "executor_error")  # a run's own claim: finished, never settled
BATCH = 5000
_EXECUTIONS = (
    ("key", "text"),
    ("claimed_us", "bigint"),
    ("info", "text"),
    ("outcome", "text"),
    ("completed_us", "bigint"),
)
_FLOWS = (
    ("flow_id", "text"),
    ("state", "text"),
    ("final", "text"),
    ("by", "text"),
    ("at_us", "bigint"),
    ("owner", "text"),
    ("host", "text"),
    ("pid", "integer"),
    ("started", "integer"),
)
# what status counts: name -> (the tables it needs, its query)
_COUNTS = {
    "execution keys": (("executions",), "SELECT count(*) FROM executions"),
    "in doubt": (("executions",), "SELECT count(*) FROM executions WHERE outcome IS NULL"),
    "flow claims": (("flows",), "SELECT count(*) FROM flows"),
    "agent states": (("agent_states",), "SELECT count(*) FROM agent_states"),
    "suspended": (("agent_states",), "SELECT count(*) FROM agent_states WHERE state = 'suspended'"),
    "pending reviews": (
        ("review_pending", "review_outcomes"),
        "SELECT count(*) FROM review_pending p WHERE NOT EXISTS "
        "(SELECT 1 FROM review_outcomes o WHERE o.flow_id = p.flow_id)",
    ),
}


_TABLES = {table for tables, _ in _COUNTS.values() for table in tables}


class _Local:
    """The project's local history, read once."""

    def __init__(self, project: Project):
        self.state_dir = project.state_dir
        self.files = [
            p
            for p in ("executions.db", "executions", "agents.json")
            if (self.state_dir / p).exists()
        ]
        self.executions, flows = _read_ledger(project)
        self.live = [row for row in flows if row[2] is None]  # unsettled, as recorded
        self.flows = [(*row[:8], None) for row in flows]  # liveness in the fleet: a token
        self.agents = {
            a: _entry(e) for a, e in AgentStateFile(self.path("agents.json")).read().items()
        }
        self.fingerprint = fingerprint(self.executions, self.flows, self.agents)

    def path(self, name: str) -> Path:
        return self.state_dir / name

    def counts(self) -> dict[str, int]:
        named = {"execution keys": self.executions, "flow claims": self.flows}
        return {k: len(v) for k, v in {**named, "agent states": self.agents}.items() if v}

    def marker(self) -> dict[str, Any]:
        try:
            return json.loads(self.path(MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}


def store_status(project: str | Path | None = None) -> StoreStatus:
    """Which backend is in use; in fleet mode, how the server stands and whether local
    history was left behind (``warning``)."""
    proj = find_project(Path(project) if project is not None else None)
    local = _Local(proj)
    store = fleet(proj)
    if store is None:
        return StoreStatus(backend="local", local=local.counts())
    from mir.runtime import agent_states_pg, fleet_reviews, ledger_pg

    quiet_pool_log()
    scopes = {
        "ledger": ledger_pg.MIGRATIONS,
        "agent_states": agent_states_pg.MIGRATIONS,
        "reviews": fleet_reviews.MIGRATIONS,
    }
    steps = {scope: store.pending(scope, s) for scope, s in scopes.items()}
    with store.connection() as con:
        exists = _existing(con, _TABLES)
        counts = {
            name: con.execute(sql).fetchone()[0]
            for name, (tables, sql) in _COUNTS.items()
            if exists.issuperset(tables)
        }
    status = StoreStatus(
        backend="fleet",
        url=store.display_url,
        reachable=True,
        pending_steps={k: v for k, v in steps.items() if v},
        counts=counts,
        local=local.counts(),
        lake=_lake_status(proj),
    )
    marker = local.marker()
    if not status.local:
        return status
    if marker.get("url") == store.display_url and marker.get("fingerprint") == local.fingerprint:
        status.migrated_at = marker.get("at")
    else:
        shown = [str(Path(proj.settings.state_dir) / name) for name in local.files]
        status.warning = unmigrated_warning(status.local, shown)
    return status


def _lake_status(project: Project) -> dict[str, Any] | None:
    from mir.traces import TraceStore

    store = TraceStore.for_project(project)
    try:
        return store.lake_status()
    finally:
        store.close()


# a capability's local history copier: (project, dry_run) -> (copied, already there)
HistoryCopy = Callable[[Project, bool], tuple[int, int]]


def migrate_store(
    project: str | Path | None = None,
    *,
    dry_run: bool = False,
    histories: Mapping[str, HistoryCopy] | None = None,
) -> StoreMigration:
    """Copy the local ledger and agent states into the fleet store (see the module
    docstring), then ``histories`` (name -> the eval or model history's copier, which
    the caller passes); ``dry_run``: count, write nothing anywhere."""
    proj = find_project(Path(project) if project is not None else None)
    store = fleet(proj)
    if store is None:
        raise UsageError(
            "no fleet store is configured: nothing to migrate into",
            hint="set [tool.mir.store] url or $MIR_STORE_URL to a postgresql:// URL",
        )
    local = _Local(proj)
    _refuse_live_holders(local.live)
    report = StoreMigration(
        url=store.display_url,
        dry_run=dry_run,
        kept=local.files,
        in_doubt=sum(1 for r in local.executions if r[3] is None),
        held=sum(1 for r in local.flows if r[2] is None and r[1] not in _DONE),
    )
    quiet_pool_log()
    with _tables(store, dry_run) as (con, there):
        from mir.runtime.ledger_pg import MIGRATED

        _copy(con, "flows", _FLOWS, local.flows, report.flows, there, MIGRATED)
        _copy(con, "executions", _EXECUTIONS, local.executions, report.executions, there)
        _copy_agents(con, local.agents, report, there)
    if not dry_run and local.files:
        marker = {
            "url": store.display_url,
            "fingerprint": local.fingerprint,
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_atomic(local.path(MARKER), json.dumps(marker, indent=2) + "\n")
    for name, copy in (histories or {}).items():
        copied, already = copy(proj, dry_run)
        report.histories[name] = TableCopy(copied=copied, already=already)
    from mir.runtime.fleet_reviews import publish_waiting

    report.published = publish_waiting(proj, dry_run=dry_run)
    return report


@contextmanager
def _tables(store: FleetStore, dry_run: bool) -> Iterator[tuple[Any, set[str] | None]]:
    """One transaction on the fleet's tables, and which exist (None: all, created first,
    written to). A dry run creates none and is rolled back."""
    from mir.runtime import agent_states_pg, ledger_pg

    if not dry_run:
        store.migrate("ledger", ledger_pg.MIGRATIONS)
        store.migrate("agent_states", agent_states_pg.MIGRATIONS)
    with store.connection() as con, con.transaction(force_rollback=dry_run):
        yield con, _existing(con, ("flows", "executions", "agent_states")) if dry_run else None


def _existing(con: Any, tables: Iterable[str]) -> set[str]:
    return {t for t in tables if con.execute("SELECT to_regclass(%s)", (t,)).fetchone()[0]}


def _copy(
    con: Any,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: list[Row],
    tally: TableCopy,
    there: set[str] | None,
    live: str | None = None,
) -> None:
    """Insert the ``rows`` Postgres lacks (``live``: the flows' liveness token), then
    sort every row out against Postgres's (``there``: a dry run's existing tables)."""
    names = ", ".join(name for name, _ in columns)
    key = columns[0][0]
    arrays = ", ".join(f"%s::{kind}[]" for _, kind in columns)
    extra, constant = (", live", ", %s::text") if live is not None else ("", "")
    for start in range(0, len(rows), BATCH):
        batch = sorted(rows[start : start + BATCH], key=lambda r: r[0])
        inserted: set[str] = set()
        if there is None:
            values = [list(col) for col in zip(*batch, strict=True)]
            cursor = con.execute(
                f"INSERT INTO {table} ({names}{extra}) SELECT *{constant} FROM unnest({arrays}) "
                f"ON CONFLICT DO NOTHING RETURNING {key}",
                [live, *values] if live is not None else values,
            )
            inserted = {r[0] for r in cursor.fetchall()}
        fleet_rows: dict[str, Row] = {}
        if there is None or table in there:
            found = con.execute(
                f"SELECT {names} FROM {table} WHERE {key} = ANY(%s)", ([r[0] for r in batch],)
            )
            fleet_rows = {r[0]: r for r in found.fetchall()}
        for row in batch:
            verdict = "copy" if row[0] in inserted else row_verdict(row, fleet_rows.get(row[0]))
            tally.count(verdict, row[0])


def _copy_agents(
    con: Any, agents: dict[str, dict[str, Any]], report: StoreMigration, there: set[str] | None
) -> None:
    """Each agent's state: inserted when the fleet has none; else sorted out, the safer
    state written where it wins (``agent_verdict``)."""
    fields = ("state", "reason", "by", "at")
    for agent, entry in sorted(agents.items()):
        values = (*(entry[f] for f in fields), agent)
        if there is None:
            cursor = con.execute(
                "INSERT INTO agent_states (state, reason, by, at, agent) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                values,
            )
            if cursor.rowcount == 1:
                report.agent_states.count("copy", agent)
                continue
        row = None
        if there is None or "agent_states" in there:
            row = con.execute(
                f"SELECT {', '.join(fields)} FROM agent_states WHERE agent = %s"
                + (" FOR UPDATE" if there is None else ""),
                (agent,),
            ).fetchone()
        verdict = agent_verdict(entry, dict(zip(fields, row, strict=True)) if row else None)
        report.agent_states.count(verdict, agent)
        if verdict == "suspend":
            report.suspended.append(agent)
            if there is None:
                con.execute(
                    "UPDATE agent_states SET state = %s, reason = %s, by = %s, at = %s "
                    "WHERE agent = %s",
                    values,
                )


def _read_ledger(project: Project) -> tuple[list[Row], list[Row]]:
    """The local ledger's rows (executions, flows), and an older folder's claims."""
    path = project.state_dir / "executions.db"
    executions: dict[str, Row] = {}
    flows: list[Row] = []
    if path.is_file():
        try:
            con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            try:
                tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
                if "executions" in tables:
                    for row in con.execute(
                        f"SELECT {', '.join(c for c, _ in _EXECUTIONS)} FROM executions"
                    ):
                        executions[row[0]] = tuple(row)
                if "flows" in tables:
                    flows = [
                        tuple(row)
                        for row in con.execute(
                            f"SELECT {', '.join(c for c, _ in _FLOWS)} FROM flows"
                        )
                    ]
            finally:
                con.close()
        except sqlite3.DatabaseError as exc:
            raise ConfigError(
                f"the local execution ledger cannot be read: {exc}",
                where=str(path),
                hint="nothing was copied; move a damaged file away (its claims are lost) "
                "or restore it, then run again",
            ) from exc
    _read_legacy(project, executions)
    return list(executions.values()), flows


def _read_legacy(project: Project, executions: dict[str, Row]) -> None:
    folder = project.state_dir / "executions"
    if not folder.is_dir():
        return
    from mir.traces import TraceStore

    with TraceStore.for_project(project) as traces:
        for name in sorted(p.name for p in folder.iterdir() if p.name.isalnum()):
            claim = _legacy_claim(folder / name, traces.redact)
            if claim is not None and claim[0] not in executions:
                key, claimed_us, info, outcome = claim
                completed = claimed_us if outcome is not None else None
                executions[key] = (key, claimed_us, info, outcome, completed)


def _refuse_live_holders(flows: list[Row]) -> None:
    here = socket.gethostname()
    for flow_id, _state, _final, _by, _at, _owner, host, pid, started in flows:
        if host == here and _alive(host, pid, started):
            raise UsageError(
                f"flow {flow_id} is held by a running process (pid {pid}) in the local ledger",
                hint="let its decision or review finish (or stop it), then migrate",
            )


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An agents.json entry as the fleet's row holds it (``at`` is never null there)."""
    return {
        "state": entry.get("state"),
        "reason": entry.get("reason"),
        "by": entry.get("by"),
        "at": entry.get("at") or "",
    }
