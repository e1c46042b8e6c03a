"""`mir review list --json` over 100,000 flows waiting for review, against `mir traces
list --json` over the same store (the reference: the store's own flow listing).

The flows are bulk-generated in SQL straight into ``traces.duckdb`` (the events `mir run
agent` leaves for a flow that waits: snapshot, infer, validate, route with status
``pending_review``; ~1 KB snapshots like the runtime's), beside as many flows that ended
(snapshot, infer, validate, execute x2, final), because writing them through
``TraceStore.append`` would measure the writer, not the queue.

    python bench/review_queue.py [--pending 100000] [--done 100000] [--repeat 3]
                                 [--expire 100]

Reports the best of ``--repeat`` runs of each command's wall time (CLI start included)
and of ``mir.reviews.pending_page`` in process, and their ratio to the reference; then
the time one read takes to close ``--expire`` flows past their TTL.
Exits 1 when `mir review list --json` takes more than 1 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from mir.reviews import pending_page
from mir.traces import TraceStore

CONTRACT = Path(__file__).parents[1] / "examples/support_desk/capabilities/refunds/agents"
TARGET_S = 1.0
PENDING_STEPS = "['snapshot', 'infer', 'validate', 'route']"
DONE_STEPS = "['snapshot', 'infer', 'validate', 'execute', 'execute', 'final']"


def _generate(con: duckdb.DuckDBPyConnection, flows: int, pending: bool, end: datetime) -> None:
    steps, n = (PENDING_STEPS, 4) if pending else (DONE_STEPS, 6)
    last = n - 1
    tag = "p" if pending else "d"
    start = end - timedelta(days=1)
    step_us = int(86_400_000_000 / max(flows, 1))
    con.execute(
        f"""
        INSERT INTO events
        SELECT 'bench-{tag}-' || (k // 1000000)::VARCHAR AS segment, k AS n, 1, '',
          '{tag}e' || k::VARCHAR, '{tag}' || i::VARCHAR AS flow_id, s AS seq,
          {steps}[s + 1] AS step, 'refunds.triage' AS agent,
          $start::TIMESTAMPTZ + to_microseconds(i * {step_us} + s * 1000) AS "at",
          CASE WHEN s = {last} THEN '{"pending_review" if pending else "executed"}' END,
          CASE WHEN s = {last} THEN ['review_rule:expensive_refund'] ELSE []::VARCHAR[] END,
          CASE WHEN s = 1 THEN 'llama' END, CASE WHEN s = 1 THEN 'model-a' END,
          CASE WHEN s = 1 THEN 'p1' END, CASE WHEN s = 1 THEN '1' END,
          CASE WHEN s = 1 THEN 260 ELSE 0 END, CASE WHEN s = 1 THEN 40 ELSE 0 END, 0.0,
          CASE WHEN s = 1 THEN 600 ELSE 1 END,
          CASE
            WHEN s = 0 THEN json_object('input', json_object('ticket_id', 'T-' || i::VARCHAR,
              'customer_id', 'C-' || (i % 5000)::VARCHAR, 'order_id', order_id,
              'category', 'damaged', 'requested_amount', amount, 'message',
              'The parcel arrived damaged, the box was crushed and the item inside is '
              || 'broken. Order ' || order_id || '. Please refund me.'),
              'context', json_object('order', json_object('id', order_id, 'total', amount,
              'refundable', amount, 'status', 'delivered', 'belongs_to_customer', true),
              'customer', json_object('tier', 'standard', 'refunds_last_90d', i % 3),
              'refund_allowance', amount),
              'context_source', 'loader', 'state_hash', md5(i::VARCHAR),
              'source', 'production',
              'contract', 'capabilities/refunds/agents/triage.yaml',
              'contract_hash', md5('c'), 'contract_version', '1', 'ttl_seconds', 604800,
              'role', 'agent', 'created_at', strftime($start::TIMESTAMPTZ
              + to_microseconds(i * {step_us}), '%Y-%m-%dT%H:%M:%S.%f+00:00'))::VARCHAR
            WHEN s = {last} AND {str(pending).lower()} THEN json_object('decision', decision,
              'status_ok', 'executed', 'reasons', ['review_rule:expensive_refund'])::VARCHAR
            WHEN s = {last} THEN json_object('record', json_object('flow_id',
              '{tag}' || i::VARCHAR, 'agent', 'refunds.triage', 'status', 'executed',
              'decision', decision, 'action', 'refund', 'executed', true), 'source',
              'production')::VARCHAR
            ELSE '{{}}' END
        FROM (
          SELECT k, k // {n} AS i, k % {n} AS s, 'A-' || (k // {n} % 10000)::VARCHAR AS order_id,
            round(100 + (hash(k // {n}) % 10000) / 100.0, 2) AS amount,
            json_object('category', 'damaged', 'action', 'refund',
              'order_id', 'A-' || (k // {n} % 10000)::VARCHAR,
              'amount', round(100 + (hash(k // {n}) % 10000) / 100.0, 2),
              'confidence', 0.99, 'reason', 'arrived broken') AS decision
          FROM range({flows * n}) r(k)
        )
        """,
        {"start": start},
    )


def build(folder: Path, pending: int, done: int) -> float:
    (folder / "pyproject.toml").write_text('[project]\nname = "bench"\n\n[tool.mir]\n')
    agents = folder / "capabilities" / "refunds" / "agents"
    agents.mkdir(parents=True)
    shutil.copy(CONTRACT / "triage.yaml", agents / "triage.yaml")
    traces = folder / ".mir" / "traces"
    TraceStore(traces).compact()  # an empty, migrated traces.duckdb
    started = time.perf_counter()
    con = duckdb.connect(str(traces / "traces.duckdb"))
    end = datetime.now(UTC)
    _generate(con, pending, True, end)
    _generate(con, done, False, end)
    con.close()
    return time.perf_counter() - started


def wall(folder: Path, repeat: int, *args: str) -> tuple[float, str]:
    mir = Path(sys.executable).parent / "mir"
    best, out = float("inf"), ""
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run([str(mir), *args], cwd=folder, capture_output=True, text=True)
        best = min(best, time.perf_counter() - started)
        if done.returncode:
            raise SystemExit(f"mir {' '.join(args)} failed: {done.stderr}")
        out = done.stdout
    return best, out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pending", type=int, default=100_000)
    parser.add_argument("--done", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--expire", type=int, default=100, help="flows one read closes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        built = build(folder, args.pending, args.done)
        print(
            f"generated {args.pending:,} flows waiting for review and {args.done:,} ended "
            f"({args.pending * 4 + args.done * 6:,} events) in {built:.1f} s"
        )
        reference, _ = wall(folder, args.repeat, "traces", "list", "--json")
        listed, out = wall(folder, args.repeat, "review", "list", "--json")
        page = json.loads(out)
        assert page["total"] == args.pending, page["total"]
        assert len(page["items"]) == 50 and page["items"][0]["fields"]["amount"] > 0
        best = float("inf")
        for _ in range(args.repeat):
            started = time.perf_counter()
            pending_page(folder)
            best = min(best, time.perf_counter() - started)
        # a week later every flow is past its TTL: one read closes a batch of them
        later = datetime.now(UTC) + timedelta(days=8)
        started = time.perf_counter()
        closed = pending_page(folder, now=later, expire_at_most=args.expire)
        expiring = time.perf_counter() - started
        assert len(closed.expired) == args.expire and closed.total == 0
    rows = [
        ("mir traces list --json (reference)", reference, None),
        ("mir review list --json", listed, TARGET_S),
        ("pending_page() in process", best, None),
    ]
    print(f"\n{'what':<38} {'seconds':>8} {'x reference':>12} {'target':>8}")
    for what, seconds, target in rows:
        shown = f"<= {target:g} s" if target else ""
        print(f"{what:<38} {seconds:>8.3f} {seconds / reference:>12.2f} {shown:>8}")
    print(
        f"\na read closing {args.expire} expired flows: {expiring:.2f} s "
        f"({expiring / args.expire * 1000:.0f} ms a flow: its events read, claimed, closed)"
    )
    return 1 if listed > TARGET_S else 0


if __name__ == "__main__":
    sys.exit(main())
