"""Three "hosts" (separate working directories, separate processes) on one Postgres
ledger decide the same 3 x N flows, each in its own order, while processes are SIGKILLed
at random and restarted: no action runs twice, no flow is lost, every flow has exactly
one outcome. ``MIR_FLEET_N`` sets N (default 200).

Each host process takes a flow by ``claim_flow`` (first writer wins; the unsettled claim
of a killed process is taken over through its liveness lock), claims the flow's
execution key, runs the executor (one line appended to a file all hosts share), records
the outcome and settles the flow. A flow whose key was claimed by a process killed
before it recorded the outcome is settled ``execution_in_doubt``: never run again."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

pytestmark = [pytest.mark.fleet, pytest.mark.slow]

N = int(os.environ.get("MIR_FLEET_N", "200"))

HOST = r"""
import os, random, sys
from mir.runtime.ledger_pg import PostgresExecutionLedger
from mir.storage import FleetStore
url, shared, total, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ledger = PostgresExecutionLedger(FleetStore.shared(url))
flows = [f"flow-{i:05d}" for i in range(total)]
random.Random(seed).shuffle(flows)
for flow in flows:
    holder = ledger.holder(flow)
    if holder is not None and holder.final is not None:
        continue
    if not ledger.claim_flow(flow, "executing", by=os.getcwd()).won:
        continue
    key = f"{flow}:execute"
    if ledger.claim(key, {"flow_id": flow, "by": os.getcwd()}):
        with open(shared, "a", encoding="utf-8") as out:
            out.write(f"{flow} {os.getpid()}\n")
            out.flush()
            os.fsync(out.fileno())
        ledger.complete(key, {"ok": True})
        ledger.settle_flow(flow, "executed")
    elif (ledger.outcome(key) or {}).get("ok"):
        ledger.settle_flow(flow, "executed")
    else:  # claimed by a process killed before it recorded the outcome: in doubt
        ledger.settle_flow(flow, "execution_in_doubt")
print("done", flush=True)
"""


def _start(url: str, host: Path, shared: Path, total: int, seed: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen(
        [sys.executable, "-c", HOST, url, str(shared), str(total), str(seed)],
        cwd=host,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_three_hosts_decide_every_flow_once_through_random_sigkills(pg_url: str, tmp_path: Path):
    total = 3 * N
    shared = tmp_path / "executed.log"
    hosts = [tmp_path / name for name in ("host-a", "host-b", "host-c")]
    for host in hosts:
        host.mkdir()
    rng = random.Random(21)
    seed = 0
    procs = {}
    for host in hosts:
        seed += 1
        procs[host] = _start(pg_url, host, shared, total, seed)
    kills = 0
    deadline = time.monotonic() + 300
    while any(p.poll() is None for p in procs.values()) and time.monotonic() < deadline:
        time.sleep(rng.uniform(0.05, 0.4))
        host = rng.choice(hosts)
        if procs[host].poll() is None and kills < 12:
            procs[host].send_signal(signal.SIGKILL)
            procs[host].wait()
            kills += 1
            seed += 1
            procs[host] = _start(pg_url, host, shared, total, seed)  # the restart
    # one last pass per host, with no kills: whatever a killed process left is taken over
    for host in hosts:
        procs[host].wait(timeout=120)
        seed += 1
        last = _start(pg_url, host, shared, total, seed)
        out, err = last.communicate(timeout=300)
        assert last.returncode == 0 and "done" in out, err[-2000:]
    assert kills > 0
    executed = Counter(line.split()[0] for line in shared.read_text().splitlines())
    assert [flow for flow, n in executed.items() if n > 1] == []  # 0 duplicate executions

    import psycopg

    with psycopg.connect(pg_url) as con:
        rows = con.execute("SELECT flow_id, final FROM mir.flows").fetchall()
        keys = con.execute("SELECT key, outcome FROM mir.executions").fetchall()
    finals = dict(rows)
    assert len(finals) == total and all(finals.values())  # 0 lost flows, each settled
    done = {f for f, final in finals.items() if final == "executed"}
    in_doubt = {f for f, final in finals.items() if final == "execution_in_doubt"}
    assert done | in_doubt == set(finals)  # one outcome each, of the two there are
    assert done <= set(executed)  # an "executed" outcome really ran (once, above)
    outcomes = {key.split(":")[0]: outcome for key, outcome in keys}
    assert all(outcomes[f] is None for f in in_doubt)  # in doubt: its run never recorded
    # every flow's execution was claimed exactly once: one key per flow
    assert len(keys) == total
