"""The fleet store: one Postgres that every host of a project shares.

``[tool.mir.store] url = "postgresql://..."`` (or ``$MIR_STORE_URL``, which wins) turns
it on; without either, every store stays the local file it is today. Each process
opens one pool per URL (``FleetStore.shared``, psycopg 3 and psycopg-pool, imported
only here and only then), with its tables in the schema ``mir``.

- Every statement runs in a pooled connection checked before use: a server restarted
  under a long-running process costs one reconnect, not an error.
- A server that cannot be reached, or that drops the connection, is ``StoreUnavailable``
  (one line, the URL with its password hidden, exit 2): the callers fail closed on it.
- Who is alive, across hosts: each process that holds claims keeps one session-level
  advisory lock on its owner token, on a connection of its own. The server releases it
  when that session ends (the process killed, crashed, or its host gone once TCP
  notices), so ``is_alive(owner)`` answers for any host, with no clock and no pid.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field

from mir.errors import ConfigError, MirUserError
from mir.storage.migrations import Migration, migrate, pending

SCHEMA = "mir"
ENV = "MIR_STORE_URL"
DATA_PATH_ENV = "MIR_STORE_DATA_PATH"
# connection-level failures (SQLSTATE class 08) and a server shutting down or starting
_UNAVAILABLE = ("08", "57P01", "57P02", "57P03")


class StoreSettings(BaseModel):
    """``[tool.mir.store]``: where the stores shared by many hosts live."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        None,
        description="Postgres URL of the fleet store (postgresql://...); $MIR_STORE_URL wins. "
        "Unset: every store is a local file under state_dir.",
    )
    data_path: str | None = Field(
        None,
        description="Folder (relative to the project root, or absolute) of the fleet's trace "
        "lake: DuckLake Parquet files every host can read and write, catalog in the fleet "
        "store; $MIR_STORE_DATA_PATH wins. Needs url. Unset: traces stay per host.",
    )
    pool_size: int = Field(4, ge=1, le=64, description="Connections per process, at most.")
    connect_timeout: float = Field(
        5.0, gt=0, le=300, description="Seconds to wait for a connection before failing closed."
    )


def fleet_url(settings: StoreSettings | None) -> str | None:
    """The fleet store's URL: ``$MIR_STORE_URL``, else the setting; None is local mode."""
    url = os.environ.get(ENV, "").strip() or (settings.url if settings else None)
    if not url:
        return None
    if not url.startswith(("postgresql://", "postgres://")):
        source = f"${ENV}" if os.environ.get(ENV, "").strip() else "[tool.mir.store] url"
        raise ConfigError(
            f"{source} is not a Postgres URL: {hide_password(url)!r}",
            hint="expected postgresql://USER@HOST/DB (or ?host=/socket/dir)",
        )
    return url


def lake_path(settings: StoreSettings | None) -> str | None:
    """The trace lake's data folder: ``$MIR_STORE_DATA_PATH``, else the setting."""
    return os.environ.get(DATA_PATH_ENV, "").strip() or (settings.data_path if settings else None)


def hide_password(url: str) -> str:
    """The URL as it may be printed: a password, in the netloc or the query, is ***."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        auth, host = netloc.rsplit("@", 1)
        if ":" in auth:
            auth = auth.split(":", 1)[0] + ":***"
        netloc = f"{auth}@{host}"
    query = "&".join(
        f"{k}=***" if k.lower() == "password" else f"{k}{sep}{v}"
        for k, sep, v in (item.partition("=") for item in parts.query.split("&") if item)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


class StoreUnavailable(MirUserError):
    """The fleet store cannot be reached: decisions fail closed until it is back."""


def unavailable(exc: BaseException) -> bool:
    """Whether a database error means the server is unreachable (not a bad statement)."""
    from psycopg import OperationalError
    from psycopg_pool import PoolTimeout

    if isinstance(exc, PoolTimeout):
        return True
    if not isinstance(exc, OperationalError):
        return False
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith(_UNAVAILABLE)


def quiet_pool_log() -> None:
    """The pool logs each failed connection attempt on stderr; ``StoreUnavailable`` says
    it once, in one line (and ``--debug`` shows the cause)."""
    pool_log = logging.getLogger("psycopg.pool")
    if not pool_log.handlers:
        pool_log.addHandler(logging.NullHandler())
        pool_log.propagate = False


class FleetStore:
    """One pool per (process, URL); see the module docstring."""

    _shared: ClassVar[dict[tuple[int, str], FleetStore]] = {}
    _shared_lock = threading.Lock()

    def __init__(self, url: str, *, pool_size: int = 4, connect_timeout: float = 5.0):
        self.url = url
        self.display_url = hide_password(url)
        self.timeout = connect_timeout
        self.owner = uuid.uuid4().hex
        self._pool_size = pool_size
        self._pool: Any = None
        self._live: Any = None  # the connection holding this process's liveness lock
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, url: str, settings: StoreSettings | None = None) -> FleetStore:
        """This process's store for ``url`` (a forked child opens its own)."""
        key = (os.getpid(), url)
        with cls._shared_lock:
            store = cls._shared.get(key)
            if store is None:
                settings = settings or StoreSettings()
                store = cls(
                    url, pool_size=settings.pool_size, connect_timeout=settings.connect_timeout
                )
                cls._shared[key] = store
            return store

    @classmethod
    def configured(cls, settings: StoreSettings | None) -> FleetStore | None:
        """The shared store the settings (or ``$MIR_STORE_URL``) name; None in local
        mode. Every capability opens the fleet store this way:
        ``FleetStore.configured(project.section("store", StoreSettings))``."""
        url = fleet_url(settings)
        return cls.shared(url, settings) if url is not None else None

    # -- connections ---------------------------------------------------------------

    def _open_pool(self) -> Any:
        with self._lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self._pool_size,
                    kwargs={"autocommit": True, "options": f"-c search_path={SCHEMA}"},
                    check=ConnectionPool.check_connection,
                    timeout=self.timeout,
                    open=False,
                    name="mir",
                )
                pool.open(wait=False)
                self._pool = pool
                try:
                    with self._guard(), pool.connection() as con:
                        _create_schema(con)
                except BaseException:
                    self._pool = None
                    pool.close()
                    raise
            return self._pool

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A pooled connection in autocommit mode."""
        pool = self._open_pool()
        with self._guard(), pool.connection() as con:
            yield con

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A pooled connection inside one transaction: committed when the block ends,
        rolled back when it raises."""
        with self.connection() as con, con.transaction():
            yield con

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except Exception as exc:
            if not unavailable(exc):
                raise
            raise StoreUnavailable(
                f"the fleet store is unreachable: {_first_line(exc)}",
                where=self.display_url,
                hint=f"check [tool.mir.store] url / ${ENV} and that Postgres is up; "
                "nothing is decided or executed until it is back",
            ) from exc

    def migrate(self, scope: str, steps: list[Migration] | tuple[Migration, ...]) -> list[str]:
        """Apply ``scope``'s steps not applied yet (mir.storage's one runner)."""
        with self.connection() as con:
            return migrate(_Qmark(con), scope, steps, where=self.display_url)

    def pending(self, scope: str, steps: list[Migration] | tuple[Migration, ...]) -> list[str]:
        """``scope``'s steps not applied yet, in order; only reads."""
        with self.connection() as con:
            return pending(_Qmark(con), scope, steps, where=self.display_url)

    # -- liveness ------------------------------------------------------------------

    def hold_liveness(self) -> str:
        """Hold this process's liveness lock (once; again after a lost connection);
        returns ``owner``, the token claims are recorded under."""
        with self._lock:
            live = self._live
            if live is not None and not live.closed and not live.broken:
                return self.owner
            import psycopg

            with self._guard():
                live = psycopg.connect(
                    self.url, autocommit=True, connect_timeout=max(1, int(self.timeout))
                )
                live.execute("SELECT pg_advisory_lock(%s)", (_lock_key(self.owner),))
            self._live = live
            return self.owner

    def is_alive(self, owner: str) -> bool:
        """Whether the process that recorded ``owner`` still holds its liveness lock."""
        if owner == self.owner:
            return True
        high, low = _lock_parts(_lock_key(owner))
        with self.connection() as con:
            row = con.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' "
                "AND granted AND classid = %s::oid AND objid = %s::oid AND objsubid = 1 "
                "AND database = (SELECT oid FROM pg_database "
                "WHERE datname = current_database()))",
                (high, low),
            ).fetchone()
        return bool(row and row[0])

    def close(self) -> None:
        with self._lock:
            if self._live is not None:
                with contextlib.suppress(Exception):
                    self._live.close()
                self._live = None
            if self._pool is not None:
                self._pool.close()
                self._pool = None
        with FleetStore._shared_lock:
            for key, store in list(FleetStore._shared.items()):
                if store is self:
                    del FleetStore._shared[key]


@contextlib.contextmanager
def one_line_errors(make: Callable[[str], MirUserError]) -> Iterator[None]:
    """A database error other than the server being down (``FleetStore`` raised that as
    ``StoreUnavailable`` already, which passes through) as the one-line error ``make``
    builds from the error's first line: a broken table is said, never a traceback."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        lines = str(exc).strip().splitlines()
        raise make(lines[0] if lines else type(exc).__name__) from exc


class ScopedStore:
    """A capability's handle on the fleet store: ``get()`` is the store with the
    capability's ``steps`` applied (once per process), and in a forked child that
    process's own shared store (a pool must never cross a fork)."""

    def __init__(
        self, store: FleetStore, scope: str, steps: list[Migration] | tuple[Migration, ...]
    ):
        self.url, self.where = store.url, store.display_url
        self.scope, self.steps = scope, steps
        self._store, self._pid, self._ready = store, os.getpid(), False

    def get(self) -> FleetStore:
        if self._pid != os.getpid():  # a forked child: its own pool
            self._pid, self._ready = os.getpid(), False
            self._store = FleetStore.shared(self.url)
        if not self._ready:
            self._store.migrate(self.scope, self.steps)
            self._ready = True
        return self._store


class _Qmark:
    """A psycopg connection as the migration runner calls it: ``?`` placeholders."""

    dialect = "postgres"

    def __init__(self, con: Any):
        self._con = con

    def execute(self, sql: str, params: Any = None) -> Any:
        if params is None:
            return self._con.execute(sql)
        return self._con.execute(sql.replace("?", "%s"), params)


def _create_schema(con: Any) -> None:
    """``CREATE SCHEMA IF NOT EXISTS`` is not safe against itself: two processes racing
    on a fresh database can both miss the schema, and the loser gets a unique violation
    on ``pg_namespace``. A schema that exists afterwards is a race lost, not an error."""
    import psycopg

    try:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateSchema):
        row = con.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,))
        if row.fetchone() is None:
            raise


def _lock_key(owner: str) -> int:
    """A signed 64-bit advisory-lock key for an owner token."""
    digest = hashlib.sha256(f"mir-owner:{owner}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _lock_parts(key: int) -> tuple[int, int]:
    """How ``pg_locks`` shows a bigint key: (classid, objid), the high and low halves."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
