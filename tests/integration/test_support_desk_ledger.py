"""The support_desk example's ledger under concurrency: real processes, real SQLite.

8 processes run scripted decisions on one copy of the example at once. Every flow that
executed must be in the ledger exactly once, with no executor error; and 8 concurrent
refunds of one order must pay it once, not eight times (the policy check and the write
are one transaction).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
PROCESSES, DECISIONS = 8, 25

WORKER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from mir import load_agent

    desk, worker, count, action = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    gate, order = Path(sys.argv[5]), sys.argv[6]
    responses = desk / f"responses-{worker}.jsonl"
    lines = []
    for i in range(count):
        verb = action if action != "mixed" else ("reject", "escalate")[i % 2]
        lines.append(json.dumps(json.dumps({
            "category": "damaged", "action": verb, "order_id": order,
            "amount": 24.9 if verb == "refund" else 0, "confidence": 0.9,
            "reason": f"w{worker}-{i}",
        })))
    responses.write_text("\\n".join(lines) + "\\n")
    outcomes = []
    with load_agent("refunds.triage", project=desk, provider="scripted",
                    responses=responses) as agent:
        print("ready", flush=True)
        while not gate.exists():
            time.sleep(0.001)
        for i in range(count):
            ticket = {"ticket_id": f"T-{worker}-{i}", "customer_id": "C-001",
                      "order_id": order, "category": "damaged", "requested_amount": 24.9,
                      "message": "arrived broken"}
            record = agent.decide(ticket)
            outcomes.append({"tag": f"w{worker}-{i}", "status": record.status,
                             "executed": record.executed, "action": record.action,
                             "reasons": record.reasons})
    print(json.dumps(outcomes), flush=True)
    """
)


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    copy = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    (copy / "worker.py").write_text(WORKER)
    return copy


def run_workers(desk: Path, action: str, count: int, order: str = "A-1001") -> list[dict]:
    gate = desk / "gate"
    workers = [
        subprocess.Popen(
            [sys.executable, str(desk / "worker.py"), str(desk), str(w), str(count), action,
             str(gate), order],
            cwd=desk, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for w in range(PROCESSES)
    ]  # fmt: skip
    for w in workers:
        assert w.stdout is not None
        assert w.stdout.readline().strip() == "ready", w.stderr.read() if w.stderr else ""
    gate.touch()  # all start together: the writes overlap
    outcomes = []
    for w in workers:
        out, err = w.communicate(timeout=600)
        assert w.returncode == 0, err
        outcomes += json.loads(out.strip().splitlines()[-1])
    return outcomes


def ledger_rows(desk: Path) -> list[dict]:
    with sqlite3.connect(desk / ".mir" / "support_ledger.sqlite3") as db:
        return [json.loads(entry) for (entry,) in db.execute("SELECT entry FROM entries")]


def test_every_executed_flow_is_in_the_ledger_exactly_once(desk: Path) -> None:
    outcomes = run_workers(desk, "mixed", DECISIONS)
    assert len(outcomes) == PROCESSES * DECISIONS
    problems = [
        o for o in outcomes if o["status"] != "executed" or "executor_error" in o["reasons"]
    ]
    # the whole outcome (status, reasons) in the message: a rare aborted first decision
    # under 8 racing processes was seen once in CI and not reproduced since
    assert problems == [], json.dumps(problems)
    tags = [row["reason"] for row in ledger_rows(desk)]
    assert sorted(tags) == sorted(o["tag"] for o in outcomes)  # none lost, none twice


def test_concurrent_refunds_of_one_order_pay_it_once(desk: Path) -> None:
    outcomes = run_workers(desk, "refund", 1, order="A-1001")  # 8 x 24.90 on a 24.90 order
    paid = [o for o in outcomes if o["executed"] and o["action"] == "refund"]
    refunds = [row for row in ledger_rows(desk) if row["kind"] == "refund"]
    assert len(paid) == 1, outcomes
    assert [row["amount"] for row in refunds] == [24.9]


COSTS = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[1])  # the example's own package, as its tests import it
    from capabilities.refunds.adapters import SqliteLedger

    ledger = SqliteLedger(__import__("pathlib").Path(sys.argv[1]) / "ledger.sqlite3")

    def cost_of(count, offset):
        start = time.perf_counter()
        for i in range(offset, offset + count):
            ledger.record(f"k{i}", {"kind": "reject", "order_id": f"A-{i % 50}", "amount": 0})
        return (time.perf_counter() - start) / count

    early = cost_of(200, 0)
    cost_of(5_000, 200)
    late = cost_of(200, 5_200)
    print(json.dumps({"early": early, "late": late, "rows": len(ledger.entries())}))
    """
)


def test_a_write_costs_the_same_with_a_long_history(desk: Path) -> None:
    # In a subprocess: the example's ``capabilities`` package must not meet mir's own.
    done = subprocess.run(
        [sys.executable, "-c", COSTS, str(desk)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    costs = json.loads(done.stdout)
    assert costs["rows"] == 5_400
    # A whole-file rewrite per entry is ~25x slower by then; 4x allows the shared
    # machine's noise.
    assert costs["late"] < costs["early"] * 4, costs
