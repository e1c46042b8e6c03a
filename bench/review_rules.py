"""Review rules: what deciding "does a human look first?" costs per decision.

    python bench/review_rules.py [--decisions 20000] [--rounds 5]

Over the same random decisions (seeded; input, world and proposal shaped like the
support-desk example's), best of ``--rounds``:

- ``review_reasons`` on the example's contract as committed (one rule of two conditions
  plus the confidence threshold), and on a heavy review section (10 rules of 3
  conditions, 2 ``always`` actions, a risk score of 6 factors);
- references measured in the same run: the confidence check alone (what review cost
  before rules existed, ``confidence_below``) and the fallback rule matcher
  (``rules.matching_rule``) on the example's fallback, the same condition evaluator.

Prints one table (microseconds per decision and the ratio to each reference).
``measure()`` returns its rows for ``bench/review.py``. Exits 1 when a review section
costs more than 0.2 ms per decision.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mir.contracts import AgentContract, load_contract
from mir.runtime.review_rules import confidence_below, review_reasons
from mir.runtime.rules import matching_rule

REPO = Path(__file__).resolve().parents[1]
CONTRACT = (
    REPO / "examples" / "support_desk" / "capabilities" / "refunds" / "agents" / "triage.yaml"
)
TARGET_MS = 0.2
ACTIONS = ["refund", "reject", "escalate"]
CATEGORIES = ["damaged", "not_delivered", "wrong_item", "changed_mind", "other"]


def cases(count: int, seed: int = 19) -> list[tuple[dict, dict, dict]]:
    """(decision, input, context) triples like the example's."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        amount = round(rng.uniform(0, 250), 2)
        category = rng.choice(CATEGORIES)
        order_id = f"A-{i % 9000 + 1000}"
        order = {
            "id": order_id,
            "total": amount,
            "refundable": amount,
            "status": rng.choice(["delivered", "shipped", "cancelled"]),
            "belongs_to_customer": rng.random() > 0.05,
        }
        ticket = {
            "ticket_id": f"T-{i}",
            "customer_id": f"C-{i % 500}",
            "order_id": order_id,
            "category": category,
            "requested_amount": amount,
            "message": "x" * 80,
        }
        customer = {"tier": rng.choice(["gold", "standard"]), "refunds_last_90d": rng.randrange(10)}
        context = {"order": order, "refund_allowance": amount, "customer": customer}
        decision = {
            "category": category,
            "action": rng.choice(ACTIONS),
            "order_id": order_id,
            "amount": amount,
            "confidence": round(rng.random(), 2),
            "reason": "r",
        }
        out.append((decision, ticket, context))
    return out


def heavy(contract: AgentContract) -> AgentContract:
    """The example's contract with a large review section (every condition evaluated)."""
    fields = [
        ("decision.amount", ">", 120.0),
        ("input.requested_amount", ">=", 30),
        ("context.customer.refunds_last_90d", ">", 3),
        ("context.order.status", "==", "shipped"),
        ("action", "in", ["refund", "escalate"]),
        ("input.category", "!=", "other"),
    ]

    def conditions(k: int, n: int) -> list[dict[str, Any]]:
        return [
            {"field": f, "op": op, "value": v}
            for f, op, v in (fields[(k + j) % len(fields)] for j in range(n))
        ]

    review = {
        "confidence_threshold": 0.7,
        "always": ["escalate", "reject"],
        "when": [{"name": f"rule_{k}", "conditions": conditions(k, 3)} for k in range(10)],
        "risk": {
            "threshold": 1.5,
            "factors": [
                {"name": f"f{k}", "weight": 0.3 + k / 10, "conditions": conditions(k, 1)}
                for k in range(6)
            ],
        },
    }
    data = contract.model_dump(exclude_none=True)
    return AgentContract.model_validate({**data, "review": review})


def per_decision_us(fn: Callable[[dict, dict, dict], Any], data: list, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for decision, ticket, context in data:
            fn(decision, ticket, context)
        best = min(best, time.perf_counter() - started)
    return best / len(data) * 1e6


def measure(decisions: int = 20_000, rounds: int = 5) -> list[dict[str, Any]]:
    """Rows: name, us (per decision), and the ratios to the two references."""
    example = load_contract(CONTRACT)
    big = heavy(example)
    data = cases(decisions)
    fallback = example.fallback

    def matcher(d: dict, i: dict, c: dict) -> Any:
        return matching_rule(fallback, {"input": i, "context": c})

    timings = {
        "confidence check alone (before review rules)": per_decision_us(
            lambda d, i, c: confidence_below(d, example), data, rounds
        ),
        "fallback rule matcher (example's 1 rule + default)": per_decision_us(
            matcher, data, rounds
        ),
        "review_reasons, example contract (1 rule)": per_decision_us(
            lambda d, i, c: review_reasons(d, example, i, c), data, rounds
        ),
        "review_reasons, 10 rules x 3 + always + 6-factor risk": per_decision_us(
            lambda d, i, c: review_reasons(d, big, i, c), data, rounds
        ),
    }
    confidence, matched = list(timings.values())[:2]
    pending = sum(bool(review_reasons(d, example, i, c)) for d, i, c in data)
    rows = [
        {
            "name": name,
            "us": us,
            "vs_confidence": us / confidence,
            "vs_matcher": us / matched,
            "reference": not name.startswith("review_reasons"),
        }
        for name, us in timings.items()
    ]
    rows[2]["pending_share"] = pending / len(data)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows = measure(args.decisions, args.rounds)
    print(f"review rules over {args.decisions:,} decisions, best of {args.rounds} rounds")
    print(f"{'':56} {'us/decision':>12} {'x confidence':>13} {'x matcher':>10}")
    for row in rows:
        print(
            f"{row['name']:56} {row['us']:12.2f} {row['vs_confidence']:12.1f}x "
            f"{row['vs_matcher']:9.2f}x"
        )
    share = rows[2]["pending_share"]
    print(f"(the example's rules sent {share:.0%} of these decisions to review)")
    worst = max(row["us"] for row in rows if not row["reference"]) / 1000
    verdict = "ok" if worst <= TARGET_MS else "MISSED"
    print(f"target: <= {TARGET_MS} ms per decision; worst {worst:.4f} ms: {verdict}")
    return 0 if worst <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
