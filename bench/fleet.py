"""Decisions through the fleet's workers against deciding in this process, in one run.

    python bench/fleet.py [--flows 300]

Local: ``agent.decide`` in a loop (the fixture's refund agent, scripted provider, the
fleet ledger on the same Postgres, so the only difference is the queue). Fleet:
``agent.submit`` of every flow first (the acknowledgement's p50: the request committed
in Postgres), then ``mir worker -j N`` (N = 1, 2, 4 processes, started after the
submits, so their start-up is timed apart) until every ``agent.result`` is in.
Engine overhead per decision: one worker's seconds per decision minus the local
loop's. Postgres is the embedded server the tests use (Unix socket, same machine).
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flows", type=int, default=300)
    args = parser.parse_args()
    from tests.support.postgres import PgServer

    server = PgServer(Path(tempfile.mkdtemp(prefix="mirpg-", dir="/tmp")))
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


if __name__ == "__main__":
    main()
