"""The fleet's traces on DuckLake: every host ships what it compacted; any host reads all.

With ``[tool.mir.store] url`` and ``data_path`` set, the trace store of each host keeps
its durable write path as it is (segments, their hash chains, the host's DuckDB file and
manifest); compaction then *ships* every segment its database holds and the lake does
not, into one DuckLake whose catalog is the fleet's Postgres (schema ``mir_lake``) and
whose Parquet files live under ``data_path`` (a folder every host mounts):

``lake.events``
    The hosts' rows as they are in their databases (segment, n, hash, fields): segment
    names are unique across hosts (host, pid, random id), so the chains stay checkable.
``lake.segments``
    One record per shipped segment (lines, head hash), written in the same DuckLake
    transaction as its rows: a shipment killed half-way left nothing, and the next one
    sends the segment again; one shipped twice is impossible, because each host ships
    only its own segments, under its exclusive folder lock, after checking the lake.
``lake.shadowed``
    Lines repeating an event id already in the lake (as ``shadowed`` locally).

The first shipment of a process attaches the lake under a Postgres advisory lock: the
attach that creates the lake (its catalog's schema and tables) collides with another
host's creating it at the same moment otherwise.

A reader attaches the lake to its view: every unique event is this host's (database and
live segments, as before) plus the lake's rows of segments this host's database does
not hold (other hosts'). A host's events reach the lake when it compacts (automatically
after ``compact_after`` closed segments, or ``mir traces compact``).

DuckDB's extension download is not reachable offline, so the extensions are loaded from
the ``duckdb-extension-ducklake`` and ``duckdb-extension-postgres`` wheels (the
``fleet`` extra pins the DuckDB they are built for); the postgres one must be loaded
from a file named ``postgres_scanner.duckdb_extension`` (its entry point's name), so it
is copied once to a per-user cache.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from mir.storage import Migration, atomic_file
from mir.traces.domain import TraceStoreError

if TYPE_CHECKING:
    import duckdb

    from mir.project import Project

NAME = "lake"  # the catalog's name in every connection that attaches it
METADATA_SCHEMA = "mir_lake"
# Frozen text, as ``database.MIGRATIONS``: the lake's schema steps (scope ``lake``). DuckLake
# tables take no keys, so the steps are recorded in the fleet store's ``_mir_migrations``
# (whose runner serialises hosts with an advisory lock) and each one creates its table only
# if it is missing (a step whose record was lost re-runs as a no-op).
MIGRATIONS = (
    Migration(
        "0001_create_lake_events",
        "CREATE TABLE IF NOT EXISTS lake.events (segment VARCHAR NOT NULL, n BIGINT NOT NULL, "
        'v INTEGER, hash VARCHAR, "event_id" VARCHAR, "flow_id" VARCHAR, "seq" BIGINT, '
        '"step" VARCHAR, "agent" VARCHAR, "at" TIMESTAMPTZ, "status" VARCHAR, '
        '"reasons" VARCHAR[], "provider" VARCHAR, "model" VARCHAR, "prompt_hash" VARCHAR, '
        '"prompt_version" VARCHAR, "prompt_tokens" BIGINT, "completion_tokens" BIGINT, '
        '"cost_usd" DOUBLE, "latency_ms" DOUBLE, "data" VARCHAR)',
    ),
    Migration(
        "0002_create_lake_segments",
        "CREATE TABLE IF NOT EXISTS lake.segments (name VARCHAR NOT NULL, lines BIGINT NOT NULL, "
        "head VARCHAR, shipped_at TIMESTAMPTZ NOT NULL)",
    ),
    Migration(
        "0003_create_lake_shadowed",
        "CREATE TABLE IF NOT EXISTS lake.shadowed (segment VARCHAR NOT NULL, n BIGINT NOT NULL)",
    ),
)
# object-store URLs (DuckDB's httpfs extension must be loadable for these)
_REMOTE = ("s3://", "gs://", "gcs://", "az://", "abfss://", "http://", "https://")
_INSTALL = "install the fleet extra (pip install 'mir[fleet]'), which pins the DuckDB they need"
_READY: set[tuple[int, str, str]] = set()  # (pid, url, data_path) whose schema is applied
_READY_LOCK = threading.Lock()


class Lake:
    """The fleet's DuckLake: its catalog's Postgres URL and its data folder."""

    def __init__(self, url: str, data_path: Path | str, *, display_url: str | None = None):
        self.url = url
        self.data_path = str(data_path)
        # libpq waits forever for a host that does not answer: never under the folder lock
        if "connect_timeout=" not in url:
            url += ("&" if "?" in url else "?") + "connect_timeout=10"
        self._catalog = url
        self.where = f"ducklake:{display_url or url} ({self.data_path})"

    def attach(self, con: duckdb.DuckDBPyConnection, *, write: bool = False) -> bool:
        """Attach the lake to ``con`` as ``lake`` (read-only unless ``write``: only a
        shipment writes, and it creates the lake and applies its schema steps first).
        Returns whether the lake's tables exist to read (none before the first shipment)."""
        import duckdb

        load_extensions(con)
        if write and not self.data_path.startswith(_REMOTE):
            try:
                os.makedirs(self.data_path, exist_ok=True)
            except OSError as exc:
                raise TraceStoreError(
                    f"cannot use the lake's data folder ({exc.strerror})",
                    where=self.data_path,
                    hint="[tool.mir.store] data_path must be a folder every host can write",
                ) from exc
        target = f"ducklake:postgres:{self._catalog}".replace("'", "''")
        data = self.data_path.rstrip("/").replace("'", "''") + "/"
        options = f"DATA_PATH '{data}', METADATA_SCHEMA '{METADATA_SCHEMA}'"
        attach = f"ATTACH '{target}' AS {NAME} ({options}{'' if write else ', READ_ONLY'})"
        try:
            if write and (os.getpid(), self.url, self.data_path) not in _READY:
                # the first attach may create the lake: two hosts creating it at once
                # collide in Postgres (its schema's unique name), so one at a time
                with _creating(self):
                    con.execute(attach)
            else:
                con.execute(attach)
        except duckdb.Error as exc:
            if not write and "does not exist" in str(exc):
                return False  # no host has shipped yet
            raise self.error(exc) from exc
        try:
            return self._ensure_schema(con) if write else self._has_tables(con)
        except duckdb.Error as exc:
            raise self.error(exc) from exc

    def _has_tables(self, con: duckdb.DuckDBPyConnection) -> bool:
        row = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = $d "
            "AND table_name IN ('events', 'segments', 'shadowed')",
            {"d": NAME},
        ).fetchone()
        return bool(row and row[0] == 3)

    def _ensure_schema(self, con: duckdb.DuckDBPyConnection) -> bool:
        from mir.errors import MirUserError
        from mir.storage import FleetStore

        key = (os.getpid(), self.url, self.data_path)
        if key in _READY:
            return True
        steps = [Migration(step.name, _on(con, step.statements)) for step in MIGRATIONS]
        with _READY_LOCK:
            try:
                FleetStore.shared(self.url).migrate("lake", steps)
            except MirUserError as exc:
                raise TraceStoreError(exc.message, where=self.where, hint=exc.hint) from exc
            _READY.add(key)
        return True

    def owns(self, exc: BaseException) -> bool:
        """Whether a DuckDB error is about the lake (its files, its catalog)."""
        text = str(exc)
        return self.data_path.rstrip("/") in text or "ducklake" in text.lower()

    def error(self, exc: BaseException) -> TraceStoreError:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "does not match existing data path" in first:
            return TraceStoreError(
                f"this host's data_path is not the lake's ({first[:200]})",
                where=self.where,
                hint="every host names the same data_path in [tool.mir.store] (or "
                "$MIR_STORE_DATA_PATH): mount the shared folder at the same path",
            )
        return TraceStoreError(
            f"the fleet's trace lake is unreachable ({first[:200]})",
            where=self.where,
            hint="check that the fleet's Postgres is up and data_path is mounted; this "
            "host's traces are kept and shipped by its next compaction",
        )


def load_extensions(con: duckdb.DuckDBPyConnection) -> None:
    """Load ducklake and postgres from their wheels (never DuckDB's own download)."""
    import duckdb

    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    version = duckdb.__version__
    try:
        import duckdb_extension_ducklake
        import duckdb_extension_postgres
    except ImportError as exc:
        raise TraceStoreError(
            f"traces on DuckLake need the ducklake and postgres DuckDB extensions "
            f"(not installed for duckdb {version})",
            hint=_INSTALL,
        ) from exc
    ducklake = _extension(duckdb_extension_ducklake.__file__, version, "ducklake")
    postgres = _extension(duckdb_extension_postgres.__file__, version, "postgres")
    try:
        con.execute(f"LOAD '{_sql(ducklake)}'")
        con.execute(f"LOAD '{_sql(_as_postgres_scanner(postgres, version))}'")
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0]
        raise TraceStoreError(
            f"the DuckLake extensions do not load into duckdb {version} ({first[:160]})",
            hint=_INSTALL,
        ) from exc


def _extension(package_file: str, version: str, name: str) -> Path:
    path = Path(package_file).parent / "extensions" / f"v{version}" / f"{name}.duckdb_extension"
    if not path.is_file():
        raise TraceStoreError(
            f"no {name} extension for duckdb {version} in its wheel",
            where=str(path.parent),
            hint=_INSTALL,
        )
    return path


def _as_postgres_scanner(source: Path, version: str) -> Path:
    """The postgres extension under the file name DuckDB derives its entry point from."""
    size = source.stat().st_size
    for base in (_cache_home(), Path(tempfile.gettempdir()) / f"mir-{os.getuid()}"):
        target = base / "mir" / "duckdb" / f"v{version}" / "postgres_scanner.duckdb_extension"
        try:
            if target.is_file() and target.stat().st_size == size:
                return target
            target.parent.mkdir(parents=True, exist_ok=True)
            # another process copying too: one whole file wins, never a torn one
            with atomic_file(target, binary=True) as out, source.open("rb") as src:
                shutil.copyfileobj(src, out)
            return target
        except OSError:
            continue
    raise TraceStoreError(
        "cannot copy the postgres DuckDB extension to a cache folder",
        where=str(source),
        hint="set XDG_CACHE_HOME to a writable folder",
    )


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def _sql(path: Path) -> str:
    return str(path).replace("'", "''")


def _on(con: duckdb.DuckDBPyConnection, statements: Sequence[str]) -> Callable[[object], None]:
    """A schema step run on the lake's DuckDB connection, recorded in Postgres."""

    def apply(_postgres: object) -> None:
        for sql in statements:
            con.execute(sql)

    return apply


@contextmanager
def _creating(lake: Lake) -> Iterator[None]:
    """A session advisory lock on the fleet's Postgres while a lake may be created."""
    import psycopg

    try:
        con = psycopg.connect(lake.url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise lake.error(exc) from exc
    try:
        con.execute("SELECT pg_advisory_lock(hashtext('mir-lake-create'))")
        yield
    finally:
        con.close()  # the session's lock goes with it


def fleet_lake(project: Project) -> Lake | None:
    """The project's trace lake: ``[tool.mir.store] data_path`` with the fleet's URL;
    None when traces stay per host."""
    from mir.errors import ConfigError
    from mir.storage import StoreSettings, fleet_url, hide_password, lake_path

    settings = project.section("store", StoreSettings)
    path = lake_path(settings)
    if not path:
        return None
    url = fleet_url(settings)
    if url is None:
        raise ConfigError(
            "[tool.mir.store] data_path (or $MIR_STORE_DATA_PATH) is set without a fleet store",
            hint="set [tool.mir.store] url (or $MIR_STORE_URL): the lake's catalog lives there",
        )
    remote = path.startswith(_REMOTE)
    folder = path if remote else str((project.root / path).resolve())
    return Lake(url, folder, display_url=hide_password(url))
