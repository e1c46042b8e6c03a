"""Scripted decisions of the support_desk example: does the cost per decision stay flat?

Runs ``--decisions`` scripted decisions (reject / escalate: every one writes the
example's ledger, and every context read sums an order's refunds) in one process on a
copy of ``examples/support_desk``, and prints the cost per decision for each slice of
``--slice`` decisions, plus the share of time spent in the ledger. A ledger that
rewrites its whole file per entry grows with history (the issue measured 28 s for 1,000
decisions, ~10 a second by 10,000); the SQLite one should be flat.

    python bench/support_desk.py [--decisions 10000] [--slice 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "support_desk"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=10_000)
    parser.add_argument("--slice", type=int, default=1_000)
    args = parser.parse_args()
    from mir import load_agent

    with tempfile.TemporaryDirectory() as tmp:
        desk = Path(tmp) / "support_desk"
        shutil.copytree(EXAMPLE, desk, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
        responses = desk / "bench.jsonl"
        with responses.open("w") as out:
            for i in range(args.decisions):
                decision = {
                    "category": "damaged",
                    "action": ("reject", "escalate")[i % 2],
                    "order_id": "A-1003",
                    "amount": 0,
                    "confidence": 0.9,
                    "reason": f"bench {i}",
                }
                out.write(json.dumps(json.dumps(decision)) + "\n")
        in_ledger = [0.0]
        with load_agent(
            "refunds.triage", project=desk, provider="scripted", responses=responses
        ) as agent:
            adapters = sys.modules["capabilities.refunds.adapters"]
            record = adapters.SqliteLedger.record

            def timed(self, *a, **kw):  # type: ignore[no-untyped-def]
                start = time.perf_counter()
                try:
                    return record(self, *a, **kw)
                finally:
                    in_ledger[0] += time.perf_counter() - start

            adapters.SqliteLedger.record = timed
            ticket = {
                "ticket_id": "T-1",
                "customer_id": "C-003",
                "order_id": "A-1003",
                "category": "damaged",
                "requested_amount": 0,
                "message": "bench",
            }
            print(f"{'decisions':>12}{'ms/decision':>14}{'ledger ms':>12}")
            total_start = time.perf_counter()
            for first in range(0, args.decisions, args.slice):
                in_ledger[0] = 0.0
                start = time.perf_counter()
                count = min(args.slice, args.decisions - first)
                for _ in range(count):
                    outcome = agent.decide(ticket)
                    assert outcome.executed, outcome
                spent = time.perf_counter() - start
                print(
                    f"{first + count:>12,}{spent / count * 1000:>14.2f}"
                    f"{in_ledger[0] / count * 1000:>12.2f}"
                )
            total = time.perf_counter() - total_start
    print(f"\n{args.decisions:,} decisions in {total:.1f} s ({args.decisions / total:,.0f}/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
