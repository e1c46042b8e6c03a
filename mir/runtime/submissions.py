"""Decisions handed to the fleet's workers: ``Agent.submit``, ``Agent.result`` and
``Agent.when_decided`` (a completion callback, ``completions.py``).

The queue is procrastinate's (https://procrastinate.readthedocs.io), on the fleet
store's Postgres, its tables in schema ``mir`` next to mir's own: ``submit`` defers one
job (task ``mir.decide``, queue ``mir.<agent>``, lock and queueing lock = the flow id)
and returns once Postgres has committed it. A worker (``mir worker``, ``mir.workers``)
decides the flow and calls ``finish``: the redacted record goes into ``decided`` and a
``pg_notify`` on ``mir_decided`` in the same transaction, which wakes ``result``.

procrastinate's schema is applied once, under a transaction-scoped advisory lock, when
``procrastinate_jobs`` is missing (two hosts starting at once apply it once). Its own
upgrades are procrastinate's migrations: the ``fleet`` extra pins a minor version.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from mir.errors import MirUserError, UsageError
from mir.runtime.completions import Completions, OnDecided, OnError, ResultTimeout
from mir.runtime.records import DecisionRecord
from mir.storage import FleetStore, Migration, ScopedStore

TASK = "mir.decide"
CHANNEL = "mir_decided"
SCHEMA = "mir"
_SCHEMA_LOCK = 0x6D697271  # "mirq": the advisory lock around applying the queue's schema
MIGRATIONS = (
    Migration(
        "0001_create_decided",
        "CREATE TABLE IF NOT EXISTS decided (flow_id TEXT PRIMARY KEY, agent TEXT NOT NULL, "
        "status TEXT NOT NULL, record JSONB NOT NULL, worker TEXT NOT NULL, "
        "decided_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    ),
)
Redact = Callable[[Any], Any]


def queue_name(agent: str) -> str:
    """The queue of one agent's submissions (``mir worker AGENT`` consumes only it)."""
    return f"mir.{agent}"


def new_flow_id() -> str:
    """A submission's flow id: ``q`` and 31 hex digits (a random UUID4's)."""
    return "q" + uuid.uuid4().hex[:31]


class Submissions:
    """The fleet's submission queue (one per process and URL; fork-aware)."""

    _shared: ClassVar[dict[tuple[int, str], Submissions]] = {}
    _shared_lock = threading.Lock()

    def __init__(self, store: FleetStore):
        self.url, self.where = store.url, store.display_url
        self._scoped = ScopedStore(store, "submissions", MIGRATIONS)
        self._app: Any = None
        self._listening: _Listener | None = None
        self._completions: Completions | None = None
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, store: FleetStore) -> Submissions:
        key = (os.getpid(), store.url)
        with cls._shared_lock:
            if key not in cls._shared:
                cls._shared[key] = cls(store)
            return cls._shared[key]

    @property
    def store(self) -> FleetStore:
        return self._scoped.get()

    # -- the engine ----------------------------------------------------------------

    def app(self) -> Any:
        """procrastinate's app on this store, open for deferring, its schema in place."""
        with self._lock:
            if self._app is None:
                app = self.new_app()
                app.open()
                self._app = app
            return self._app

    def new_app(self) -> Any:
        """A procrastinate app on this store, not open (a worker registers its task on
        one and runs it in its own event loop); the schema is applied first."""
        import logging

        import procrastinate

        logging.getLogger("procrastinate").setLevel(logging.WARNING)
        self.ensure_schema()
        connector = procrastinate.PsycopgConnector(
            conninfo=self.url,
            kwargs={"options": f"-c search_path={SCHEMA}"},
            min_size=1,
            max_size=2,
        )
        return procrastinate.App(connector=connector)

    def ensure_schema(self) -> None:
        """procrastinate's tables, once, whoever gets there first; mir's ``decided``."""
        from procrastinate.schema import SchemaManager

        store = self.store
        with store.transaction() as con:
            con.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            exists = con.execute(f"SELECT to_regclass('{SCHEMA}.procrastinate_jobs')").fetchone()
            if exists[0] is None:
                con.execute(SchemaManager.get_schema())

    def close(self) -> None:
        with self._lock:
            if self._app is not None:
                self._app.close()
                self._app = None
            if self._listening is not None:
                self._listening.stop()
                self._listening = None
            if self._completions is not None:
                self._completions.stop()
                self._completions = None
        with Submissions._shared_lock:
            for key, value in list(Submissions._shared.items()):
                if value is self:
                    del Submissions._shared[key]

    # -- submitting ----------------------------------------------------------------

    def submit(self, agent: str, request: Mapping[str, Any], *, priority: int = 0) -> str:
        """Defer one decision of ``agent``; its flow id once the job is committed."""
        from procrastinate.exceptions import AlreadyEnqueued

        flow_id = str(request["flow_id"])
        if self.outcome(flow_id) is not None:
            raise UsageError(f"flow {flow_id} was decided already: a flow is decided once")
        app = self.app()
        try:
            app.configure_task(
                TASK, queue=queue_name(agent), lock=flow_id, queueing_lock=flow_id,
                priority=priority,
            ).defer(request=dict(request))  # fmt: skip
        except AlreadyEnqueued as exc:
            raise UsageError(f"flow {flow_id} is submitted already: decided once") from exc
        except Exception as exc:  # procrastinate wraps the driver's errors
            raise _unreachable(self, exc) from exc
        return flow_id

    def queued(self, flow_id: str) -> bool:
        """Whether a job for the flow is waiting or being decided."""
        with self.store.connection() as con:
            row = con.execute(
                "SELECT 1 FROM procrastinate_jobs WHERE lock = %s AND status IN ('todo', 'doing')",
                (flow_id,),
            ).fetchone()
        return row is not None

    # -- outcomes ------------------------------------------------------------------

    def finish(
        self,
        flow_id: str,
        agent: str,
        record: Mapping[str, Any],
        *,
        worker: str,
        attempt: int | None = None,
    ) -> bool:
        """Record the flow's outcome and wake its waiters; False when one was there, or
        when ``attempt`` (the job's attempt that decided it) was superseded by a retry
        (the job's row is locked meanwhile, so a retry waits for this to commit)."""
        with self.store.transaction() as con:
            if attempt is not None:
                job = con.execute(
                    "SELECT attempts FROM procrastinate_jobs WHERE lock = %s "
                    "AND status IN ('todo', 'doing') FOR UPDATE",
                    (flow_id,),
                ).fetchone()
                if job is not None and job[0] > attempt:
                    return False
            row = con.execute(
                "INSERT INTO decided (flow_id, agent, status, record, worker) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (flow_id) DO NOTHING RETURNING flow_id",
                (flow_id, agent, str(record["status"]), json.dumps(record, default=str), worker),
            ).fetchone()
            if row is not None:
                con.execute("SELECT pg_notify(%s, %s)", (CHANNEL, flow_id))
        return row is not None

    def outcome(self, flow_id: str) -> dict[str, Any] | None:
        with self.store.connection() as con:
            sql = "SELECT record FROM decided WHERE flow_id = %s"
            row = con.execute(sql, (flow_id,)).fetchone()
        return row[0] if row is not None else None

    def outcomes(self, flow_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The outcomes of those of ``flow_ids`` that have one, in one query."""
        with self.store.connection() as con:
            sql = "SELECT flow_id, record FROM decided WHERE flow_id = ANY(%s)"
            return dict(con.execute(sql, (flow_ids,)).fetchall())

    def when_decided(
        self,
        flow_id: str,
        callback: OnDecided,
        *,
        timeout: float | None = None,
        on_error: OnError | None = None,
    ) -> None:
        """``Agent.when_decided``; an unknown flow id is refused, as by ``result``."""
        found, queued = self.where_is(flow_id)
        if found is None and not queued:
            raise UsageError(
                f"no flow {flow_id} was submitted to the fleet's workers",
                hint="agent.submit(...) returns the flow id to ask for",
            )
        with self._lock:
            if self._completions is None:
                self._completions = Completions(self)
            completions = self._completions
        completions.add(flow_id, callback, timeout=timeout, on_error=on_error)

    def where_is(self, flow_id: str) -> tuple[dict[str, Any] | None, bool]:
        """The flow's outcome if it has one, else whether its job is still queued. The
        outcome is read again once the job is gone: its row commits before the job is
        deleted, so a flow decided between the two reads is not taken for unknown."""
        found = self.outcome(flow_id)
        if found is not None:
            return found, False
        if self.queued(flow_id):
            return None, True
        return self.outcome(flow_id), False

    def result(self, flow_id: str, timeout: float | None = None) -> DecisionRecord:
        """The flow's record, waiting up to ``timeout`` seconds (None: for ever) for a
        worker to decide it; ``ResultTimeout`` when none did in time."""
        found, queued = self.where_is(flow_id)
        if found is not None:
            return DecisionRecord.model_validate(found)
        if not queued:
            raise UsageError(
                f"no flow {flow_id} was submitted to the fleet's workers",
                hint="agent.submit(...) returns the flow id to ask for",
            )
        until = None if timeout is None else time.monotonic() + timeout
        woken = self.listener().watch(flow_id)
        try:
            while True:
                found = self.outcome(flow_id)  # after watching: a notify in between is seen
                if found is not None:
                    return DecisionRecord.model_validate(found)
                left = None if until is None else until - time.monotonic()
                if left is not None and left <= 0:
                    raise ResultTimeout(
                        f"flow {flow_id} has no outcome after {timeout:g} s",
                        hint="it is queued or being decided: is a `mir worker` running?",
                    )
                # woken by the flow's notify, or every second (a missed one costs 1 s)
                woken.wait(1.0 if left is None else min(1.0, left))
                woken.clear()
        finally:
            self.listener().unwatch(flow_id, woken)

    def listener(self) -> _Listener:
        """This process's LISTEN connection on ``mir_decided`` (started on first use)."""
        with self._lock:
            if self._listening is None:
                self._listening = _Listener(self.url)
            return self._listening


class _Listener:
    """One connection per process LISTENing on ``mir_decided`` (a thread), waking the
    ``result`` calls waiting for the flow notified: a wait costs no connection of its
    own (a new one per wait made the caller, not the workers, the bottleneck). While
    the connection is down the waiters still re-read every second."""

    def __init__(self, url: str):
        self.url = url
        self._events: dict[str, set[threading.Event]] = {}
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._stopped = threading.Event()
        threading.Thread(target=self._run, name="mir-result-listener", daemon=True).start()
        self._ready.wait(5.0)  # LISTEN in place before the first re-read (else: 1 s late)

    def watch(self, flow_id: str, event: threading.Event | None = None) -> threading.Event:
        """An event set when the flow's outcome is notified (``event``, to share one)."""
        event = event or threading.Event()
        with self._lock:
            self._events.setdefault(flow_id, set()).add(event)
        return event

    def unwatch(self, flow_id: str, event: threading.Event) -> None:
        with self._lock:
            waiting = self._events.get(flow_id, set())
            waiting.discard(event)
            if not waiting:
                self._events.pop(flow_id, None)

    def _run(self) -> None:
        import psycopg

        while not self._stopped.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as con:
                    con.execute(f"LISTEN {CHANNEL}")
                    self._ready.set()
                    while not self._stopped.is_set():
                        for note in con.notifies(timeout=1.0):
                            with self._lock:
                                for event in self._events.get(note.payload, ()):
                                    event.set()
            except Exception:  # the server away: the waiters re-read every second
                self._ready.set()
                self._stopped.wait(1.0)

    def stop(self) -> None:
        self._stopped.set()


def submissions_of(project: Any) -> Submissions | None:
    """The project's submission queue; None in local mode (no fleet store)."""
    from mir.runtime.stores import fleet

    store = fleet(project)
    return None if store is None else Submissions.shared(store)


def _unreachable(queue: Submissions, exc: BaseException) -> MirUserError:
    from mir.storage import StoreUnavailable

    if isinstance(exc, MirUserError):
        return exc
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return StoreUnavailable(
        f"the fleet's queue is unreachable: {first}",
        where=queue.where,
        hint="nothing was submitted; check [tool.mir.store] url and that Postgres is up",
    )
