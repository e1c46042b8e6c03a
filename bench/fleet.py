"""Decisions through the fleet's workers against deciding in this process, in one run.

    python bench/fleet.py [--flows 300] [--lake-decisions 1000000] [--skip-workers]

Local: ``agent.decide`` in a loop (the fixture's refund agent, scripted provider, the
fleet ledger on the same Postgres, so the only difference is the queue). Fleet:
``agent.submit`` of every flow first (the acknowledgement's p50: the request committed
in Postgres), then ``mir worker -j N`` (N = 1, 2, 4 processes, started after the
submits, so their start-up is timed apart) until every ``agent.result`` is in.
Engine overhead per decision: one worker's seconds per decision minus the local
loop's. Postgres is the embedded server the tests use (Unix socket, same machine).

The trace lake: ``mir drift`` over ``--lake-decisions`` decisions (bench/drift.py's
generator: 6 events a decision, a month, a shift in the last 3 days) held by this
host's own database (local mode) against the same decisions shipped to the lake by
another host and read by a host that holds none of them (DuckLake on that Postgres,
Parquet in a local folder): the first run (which parses every final event once: the
local one into ``drift_rows``, the lake's into ``drift_lake_rows``), then the best of 3,
each in process.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))  # drift.py's generator
MIR = Path(sys.executable).parent / "mir"
GOOD = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "arrived broken"}
ORDER = {"order_id": "A1", "amount": 40, "message": "arrived broken"}
FAST = "\n[tool.mir.workers]\nheartbeat_s = 1\nstalled_s = 5\npoll_s = 0.1\n"


def _project(folder: Path, flows: int) -> Path:
    root = folder / "app"
    shutil.copytree(ROOT / "tests/fixtures/runtime/project", root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    (root / "responses.jsonl").write_text("\n".join([json.dumps(json.dumps(GOOD))] * flows) + "\n")
    with (root / "pyproject.toml").open("a") as f:
        f.write(FAST)
    return root


def _local(root: Path, flows: int) -> float:
    from mir.runtime import load_agent

    agent = load_agent(
        "refunds.triage", project=root, provider="scripted",
        responses=root / "responses.jsonl", watch_models=False,
    )  # fmt: skip
    for _ in range(5):
        agent.decide(ORDER)
    start = time.perf_counter()
    for _ in range(flows):
        assert agent.decide(ORDER).status == "executed"
    took = time.perf_counter() - start
    agent.close()
    return flows / took


def _fleet(root: Path, flows: int, jobs: int) -> tuple[float, float, float]:
    from mir.runtime import load_agent

    agent = load_agent("refunds.triage", project=root, provider="rules", watch_models=False)
    acks = []
    ids = []
    for _ in range(flows):
        t0 = time.perf_counter()
        ids.append(agent.submit(ORDER))
        acks.append(time.perf_counter() - t0)
    worker = subprocess.Popen(
        [str(MIR), "worker", "-j", str(jobs), "--provider", "scripted", "--responses",
         "responses.jsonl"],
        cwd=root, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    first = agent.result(ids[0], timeout=120)  # the workers are up: time from here
    start = time.perf_counter()
    records = [first, *(agent.result(i, timeout=600) for i in ids[1:])]
    took = time.perf_counter() - start
    os.killpg(worker.pid, signal.SIGTERM)
    worker.communicate(timeout=60)
    agent.close()
    assert {r.status for r in records} == {"executed"}, {r.status for r in records}
    return (
        (flows - 1) / took,
        statistics.median(acks) * 1000,
        statistics.quantiles(acks, n=100)[98] * 1000,
    )


def _lake_drift(server, decisions: int) -> None:
    """``mir drift`` over the same decisions, locally and from the lake (see above)."""
    from datetime import UTC, datetime

    import duckdb
    from drift import build, timed

    from mir.drift import WindowOptions, measure
    from mir.traces import TraceStore
    from mir.traces.lake import Lake

    end = datetime.now(UTC).replace(microsecond=0)
    options = WindowOptions(now=end)
    with tempfile.TemporaryDirectory() as tmp:
        local, shipper, reader = (Path(tmp) / name for name in ("local", "shipper", "reader"))
        for folder in (local, shipper, reader):
            folder.mkdir()
        built = build(local, decisions, 1, end)
        build(shipper, decisions, 1, end)
        url = server.url(server.create_database())
        lake = Lake(url, Path(tmp) / "lake")
        db = shipper / ".mir" / "traces" / "traces.duckdb"
        con = duckdb.connect(str(db))  # the generated rows, recorded as compacted segments
        con.execute(
            "INSERT INTO segments SELECT segment, max(n) + 1, arg_max(hash, n), now() "
            "FROM events GROUP BY segment"
        )
        con.close()
        started = time.perf_counter()
        shipped = TraceStore(db.parent, lake=lake).compact()
        ship_s = time.perf_counter() - started
        os.environ["MIR_STORE_DATA_PATH"] = str(Path(tmp) / "lake")
        os.environ["MIR_STORE_URL"] = url
        (reader / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.mir]\n')
        TraceStore(reader / ".mir" / "traces").compact()  # the reading host's own store
        try:
            first_lake, _ = timed(lambda: measure(reader, options=options), repeat=1)
            lake_s, lake_report = timed(lambda: measure(reader, options=options))
        finally:
            del os.environ["MIR_STORE_DATA_PATH"], os.environ["MIR_STORE_URL"]
        first_local, _ = timed(lambda: measure(local, options=options), repeat=1)
        local_s, local_report = timed(lambda: measure(local, options=options))
    same = _figures(lake_report) == _figures(local_report)
    print(
        f"\nmir drift over {decisions:,} decisions ({decisions * 6:,} events; generated in "
        f"{built:.1f} s; shipped {shipped.shipped_events:,} lines to the lake in {ship_s:.1f} s)"
    )
    print(f"{'store':<34}{'first run s':>12}{'best of 3 s':>12}{'x local':>9}")
    print(f"{'local (this host database)':<34}{first_local:>12.2f}{local_s:>12.2f}{1.0:>9.2f}")
    print(
        f"{'lake (another host shipped them)':<34}{first_lake:>12.2f}{lake_s:>12.2f}"
        f"{lake_s / local_s:>9.2f}"
    )
    # DuckDB sums in parallel: the order, and so the last bits of a float, may differ
    print(f"same figures from both (to 12 significant digits): {same}")


def _figures(report) -> object:
    def rounded(value: object) -> object:
        if isinstance(value, float):
            return float(f"{value:.12g}")
        if isinstance(value, dict):
            return {k: rounded(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rounded(v) for v in value]
        return value

    return rounded([agent.model_dump(exclude={"notes"}) for agent in report.agents])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flows", type=int, default=300)
    parser.add_argument("--lake-decisions", type=int, default=1_000_000)
    parser.add_argument("--skip-workers", action="store_true", help="only the lake's drift")
    args = parser.parse_args()
    from tests.support.postgres import PgServer

    server = PgServer(Path(tempfile.mkdtemp(prefix="mirpg-", dir="/tmp")))
    if args.skip_workers:
        _lake_drift(server, args.lake_decisions)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MIR_STORE_URL"] = server.url(server.create_database())
        local = _local(_project(Path(tmp) / "local", args.flows + 5), args.flows)
        for jobs in (1, 2, 4):
            os.environ["MIR_STORE_URL"] = server.url(server.create_database())
            root = _project(Path(tmp) / f"w{jobs}", args.flows)
            rows.append((jobs, *_fleet(root, args.flows, jobs)))
    print(f"{args.flows} decisions, scripted provider, {os.cpu_count()} cores")
    print(f"{'mode':<26}{'decisions/s':>12}{'x local':>9}{'x 1 worker':>12}")
    print(f"{'local (decide in-process)':<26}{local:>12.0f}{1.0:>9.2f}{'':>12}")
    one = rows[0][1]
    for jobs, rate, _p50, _p99 in rows:
        label = f"{jobs} worker process(es)"
        print(f"{label:<26}{rate:>12.0f}{rate / local:>9.2f}{rate / one:>12.2f}")
    p50 = statistics.median(r[2] for r in rows)
    p99 = max(r[3] for r in rows)
    overhead = 1000 / one - 1000 / local
    print(f"submit -> durable acknowledgement: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    print(f"engine overhead per decision (1 worker vs local): {overhead:.2f} ms")
    _lake_drift(server, args.lake_decisions)


if __name__ == "__main__":
    main()
