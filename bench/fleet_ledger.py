"""The execution ledger on the fleet store (Postgres) against the SQLite ledger of one
host (fsync on), in the same run: claims per second and the p50 latency of one claim
(a flow claim and its execution key, then the outcome and the settle: what one executed
decision costs the ledger).

    python bench/fleet_ledger.py [--claims 500]

Postgres is the embedded server the tests use (Unix socket, same machine): a server
across a network adds its round trips (4 transactions per decision).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _run(ledger, n: int, tag: str) -> tuple[float, float]:
    latencies = []
    start = time.perf_counter()
    for i in range(n):
        flow = f"{tag}-{i}"
        t0 = time.perf_counter()
        ledger.claim_flow(flow, "executing", by="bench")
        ledger.claim(f"{flow}:execute", {"flow_id": flow})
        latencies.append(time.perf_counter() - t0)
        ledger.complete(f"{flow}:execute", {"ok": True})
        ledger.settle_flow(flow, "executed")
    total = time.perf_counter() - start
    return n / total, statistics.median(latencies) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=500)
    args = parser.parse_args()
    from mir.runtime.ledger import SqliteExecutionLedger
    from mir.runtime.ledger_pg import PostgresExecutionLedger
    from mir.storage import FleetStore
    from tests.support.postgres import PgServer

    folder = Path(tempfile.mkdtemp(prefix="mirbench-", dir="/tmp"))
    sqlite = SqliteExecutionLedger(folder / "executions.db", fsync=True)
    server = PgServer(Path(tempfile.mkdtemp(prefix="mirpg-", dir="/tmp")))
    url = server.url(server.create_database())
    pg = PostgresExecutionLedger(FleetStore.shared(url))
    _run(sqlite, 20, "warm"), _run(pg, 20, "warm")
    lite_rate, lite_p50 = _run(sqlite, args.claims, "run")
    pg_rate, pg_p50 = _run(pg, args.claims, "run")
    print(f"{args.claims} decisions (flow claim + key claim, then outcome and settle)")
    print(f"{'ledger':<22}{'decisions/s':>12}{'p50 claim ms':>14}{'ratio /s':>10}")
    print(f"{'SQLite (fsync on)':<22}{lite_rate:>12.0f}{lite_p50:>14.2f}{1.0:>10.2f}")
    print(f"{'Postgres (fleet)':<22}{pg_rate:>12.0f}{pg_p50:>14.2f}{pg_rate / lite_rate:>10.2f}")


if __name__ == "__main__":
    main()
