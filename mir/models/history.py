"""The registry's history: every stage change, who made it, when and why, in DuckDB
(``.mir/models.duckdb``, table ``model_changes``).

``models.toml`` says where each version is now (reviewable in a pull request); this file
says how it got there, including refused promotions and ``--force``. Schema changes are
named steps of ``mir.storage.migrate`` (scope ``models``), like every database's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from mir.errors import ConfigError
from mir.storage import Migration, is_lock_conflict, migrate

if TYPE_CHECKING:
    import duckdb

HISTORY_FILE = Path(".mir") / "models.duckdb"

# Frozen text: never derived from code that may change later.
MIGRATIONS = (
    Migration(
        "0001_create_model_changes",
        "CREATE TABLE model_changes (name VARCHAR NOT NULL, version VARCHAR NOT NULL, "
        'from_stage VARCHAR, to_stage VARCHAR NOT NULL, share DOUBLE, "by" VARCHAR NOT NULL, '
        '"at" TIMESTAMPTZ NOT NULL, why VARCHAR, forced BOOLEAN NOT NULL, gate VARCHAR)',
    ),
)
_COLUMNS = 'name, version, from_stage, to_stage, share, "by", "at", why, forced, gate'
COLUMN_KEYS = _COLUMNS.replace('"', "").split(", ")


class ModelChange(BaseModel):
    """One row of ``model_changes``: a version moved (or refused to move) between stages.

    ``from_stage`` is None for a registration; ``to_stage`` is ``refused`` for a
    promotion the gate turned down (the file was not changed)."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    from_stage: str | None
    to_stage: str
    share: float | None = None
    by: str
    at: datetime
    why: str | None = None
    forced: bool = False
    gate: dict[str, Any] | None = None


def history_path(root: Path) -> Path:
    return root / HISTORY_FILE


@contextmanager
def open_history(root: Path, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """The history database, migrated; a locked or corrupt file is one ``ConfigError``."""
    import duckdb

    path = history_path(root)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise _explain(path, exc) from exc
    try:
        try:
            con.execute("SET enable_progress_bar = false")
            if not read_only:
                migrate(con, "models", MIGRATIONS, where=str(path))
        except duckdb.Error as exc:
            raise _explain(path, exc) from exc
        yield con
    finally:
        con.close()


def _explain(path: Path, exc: Exception) -> ConfigError:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if is_lock_conflict(exc):
        return ConfigError(
            "the model history is held open by another program",
            where=str(path),
            hint="close it and retry; models.toml was not changed",
        )
    return ConfigError(
        f"not a readable model history ({first})",
        where=str(path),
        hint="move it aside and retry; models.toml was not changed",
    )


def insert_change(con: duckdb.DuckDBPyConnection, change: ModelChange) -> None:
    con.execute(
        f"INSERT INTO model_changes ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        change_values(change),
    )


def change_values(change: ModelChange) -> list[Any]:
    """A change as the values of ``model_changes``' columns, in order (both backends)."""
    return [
        change.name,
        change.version,
        change.from_stage,
        change.to_stage,
        change.share,
        change.by,
        change.at,
        change.why,
        change.forced,
        None if change.gate is None else json.dumps(change.gate, sort_keys=True),
    ]


def change_of(row: tuple) -> ModelChange:
    """A row of ``model_changes`` (``_COLUMNS``' order) as a change (both backends)."""
    data = dict(zip(COLUMN_KEYS, row, strict=True))
    data["gate"] = json.loads(data["gate"]) if data["gate"] else None
    return ModelChange.model_validate(data)


def record(root: Path, changes: list[ModelChange]) -> None:
    """Record changes that edit no file (a refused promotion)."""
    import duckdb

    with open_history(root) as con:
        try:
            con.execute("BEGIN TRANSACTION")
            for change in changes:
                insert_change(con, change)
            con.execute("COMMIT")
        except duckdb.Error as exc:
            raise _explain(history_path(root), exc) from exc


def changes(root: Path, name: str | None = None) -> list[ModelChange]:
    """Every recorded change (of one name), oldest first; no file means none."""
    import duckdb

    if not history_path(root).exists():
        return []
    with open_history(root, read_only=True) as con:
        try:
            where, params = ("WHERE name = ?", [name]) if name else ("", [])
            rows = con.execute(
                f'SELECT {_COLUMNS} FROM model_changes {where} ORDER BY "at", rowid', params
            ).fetchall()
        except duckdb.Error as exc:
            raise _explain(history_path(root), exc) from exc
    return [change_of(row) for row in rows]


class ModelHistory:
    """The history of one project's registry as a store (``mir.storage.ModelChangeLog``):
    what a second backend (``mir.models.history_pg``) replaces."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def record(self, changes: list[ModelChange]) -> None:
        record(self.root, changes)

    def changes(self, name: str | None = None) -> list[ModelChange]:
        return changes(self.root, name)

    @contextmanager
    def writing(self) -> Iterator[LocalWriter]:
        """The history opened for one edit of ``models.toml`` (``mir.models.editing``)."""
        import duckdb

        with open_history(self.root) as con:
            yield LocalWriter(con, str(history_path(self.root)), (duckdb.Error,))


class LocalWriter:
    """One edit's transaction on the DuckDB history: begun, read, written, then committed
    after ``models.toml`` is replaced (or rolled back when that fails). ``errors``: what
    ``begin``, ``latest_stages`` and ``insert`` raise when the history cannot take it."""

    def __init__(self, con: Any, where: str, errors: tuple[type[BaseException], ...]):
        self.con, self.where, self.errors = con, where, errors

    def begin(self) -> None:
        self.con.execute("BEGIN TRANSACTION")

    def latest_stages(self) -> dict[tuple[str, str], str]:
        """Each version's latest recorded stage (a refused promotion moved nothing)."""
        rows = self.con.execute(
            "SELECT name, version, arg_max(to_stage, rowid) FROM model_changes "
            "WHERE to_stage <> 'refused' GROUP BY name, version"
        ).fetchall()
        return {(name, version): stage for name, version, stage in rows}

    def insert(self, changes: list[ModelChange]) -> None:
        for change in changes:
            insert_change(self.con, change)

    def commit(self) -> None:
        self.con.execute("COMMIT")

    def rollback(self) -> None:
        self.con.execute("ROLLBACK")
