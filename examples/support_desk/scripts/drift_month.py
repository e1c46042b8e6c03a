"""Write a realistic month of production traces for the triage agent, with a planted
shift in week 4, so `mir drift` has something to catch.

    python scripts/drift_month.py            # into this project's .mir/traces
    mir drift --window 7d --reference 21d    # week 4 against weeks 1-3
    mir drift check --window 7d --reference 21d   # the breaker suspends the agent

Weeks 1-3: the agent refunds about half the tickets, asks a human below 0.7 confidence,
and refunds rarely sit near the 200 EUR limit. Week 4, after a model update (a new
model file): it refunds far more often, with amounts pressed against the limit (a
shortcut: optimization drift), and more confidently (semantic drift). The events are
those `mir run agent` writes (snapshot, infer, validate, route, execute, final), through
the same TraceStore API, with times spread over the month.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

AGENT = "refunds.triage"
CATEGORIES = {
    "damaged": 0.35,
    "not_delivered": 0.25,
    "wrong_item": 0.1,
    "changed_mind": 0.2,
    "cancelled": 0.1,
}


@dataclass(frozen=True)
class Regime:
    """How the agent behaves during one period."""

    actions: dict[str, float] = field(
        default_factory=lambda: {"refund": 0.5, "reject": 0.3, "escalate": 0.2}
    )
    confidence: tuple[float, float] = (9.0, 2.0)  # beta(a, b): mean ~0.82
    retry_rate: float = 0.03
    fallback_rate: float = 0.02
    override_rate: float = 0.2  # of the decisions a human reviews
    stale_rate: float = 0.01
    executor_error_rate: float = 0.005
    latency_ms: float = 900.0  # median; lognormal, sigma 0.35
    latency_sigma: float = 0.35
    prompt_tokens: int = 260
    completion_tokens: int = 42
    hug_rate: float = 0.04  # refunds within 5 % of the 200 EUR limit
    model: str = "SmolLM2-135M-Instruct.Q4_1.gguf"
    prompt_hash: str = "9c1e4a0b7d2f"
    contract_hash: str = "c0a1f3e9b2d4"


STABLE = Regime()
WEEK4 = replace(
    STABLE,
    actions={"refund": 0.72, "reject": 0.16, "escalate": 0.12},
    confidence=(14.0, 1.5),
    hug_rate=0.3,
    model="SmolLM2-360M-Instruct.Q4_1.gguf",
)


def _pick(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def flow_events(rng: random.Random, at: datetime, regime: Regime) -> list[Any]:
    """The events of one decision flow, as the runtime writes them."""
    from mir.traces import TraceEvent

    flow = f"{rng.getrandbits(128):032x}"
    category = _pick(rng, CATEGORIES)
    order = f"A-{rng.randrange(10000):04d}"
    action = _pick(rng, regime.actions)
    confidence = round(rng.betavariate(*regime.confidence), 3)
    if action == "refund":
        near = rng.random() < regime.hug_rate
        amount = round(
            rng.uniform(190, 200) if near else min(185.0, rng.lognormvariate(3.6, 0.6)), 2
        )
    else:
        amount = 0.0
    decision = {
        "category": category,
        "action": action,
        "order_id": order,
        "amount": amount,
        "confidence": confidence,
        "reason": f"{category} ticket",
    }
    events: list[Any] = []

    def emit(step: str, offset_ms: float, **fields: Any) -> None:
        events.append(
            TraceEvent(
                flow_id=flow,
                seq=len(events),
                step=step,  # type: ignore[arg-type]
                agent=AGENT,
                at=at + timedelta(milliseconds=offset_ms),
                **fields,
            )
        )

    emit(
        "snapshot",
        0,
        data={
            "input": {"order_id": order, "category": category},
            "context_source": "loader",
            "contract": "capabilities/refunds/agents/triage.yaml",
            "contract_hash": regime.contract_hash,
        },
    )
    latency = rng.lognormvariate(math.log(regime.latency_ms), regime.latency_sigma)
    tokens = {
        "provider": "llama",
        "model": regime.model,
        "prompt_hash": regime.prompt_hash,
        "prompt_version": "1",
        "prompt_tokens": regime.prompt_tokens,
        "completion_tokens": regime.completion_tokens,
        "latency_ms": round(latency, 3),
    }
    offset = latency
    met: list[str] = []  # reasons met on the way: the final event lists them all
    attempts = [1]
    fallback_route = {"provider": "rules", "model": "fallback.default"}
    model_route = {"provider": "llama", "model": regime.model}

    def finish(offset: float, decision: dict, status: str, reasons: list[str]) -> list[Any]:
        reasons = list(dict.fromkeys([*met, *reasons]))
        route = fallback_route if status == "fallback" else model_route
        tokens_used = attempts[0] * (regime.prompt_tokens + regime.completion_tokens)
        record = {
            "flow_id": flow,
            "agent": AGENT,
            "status": status,
            "decision": decision,
            "action": decision["action"],
            "executed": status == "executed",
            "reasons": reasons,
            **route,
            # the flow's own time (model calls + checks), not a reviewer's wait
            "latency_ms": round(attempts[0] * latency + 25, 3),
            "tokens": tokens_used,
        }
        emit(
            "final",
            offset + 5,
            status=status,
            reasons=reasons,
            latency_ms=5.0,
            # beside the record, as the runtime writes them: drift reads a flow's
            # source, contract and prompts from its final event alone
            data={
                "record": record,
                "source": "production",
                "contract_hash": regime.contract_hash,
                "prompt_hashes": [regime.prompt_hash],  # every flow here asked the model
            },
            **route,
        )
        return events

    if rng.random() < regime.retry_rate:
        emit("infer", offset, **tokens, data={"attempt": 0})
        emit("validate", offset, reasons=["schema_invalid"], data={"attempt": 0})
        met.append("schema_invalid")
        attempts[0] += 1
        offset += latency
    if rng.random() < regime.fallback_rate:
        attempts[0] += 2
        met.extend(["not_json", "retries_exhausted"])
        for attempt in range(3):
            emit("infer", offset, **tokens, data={"attempt": attempt})
            emit("validate", offset, reasons=["not_json"], data={"attempt": attempt})
        decision = {**decision, "action": "escalate", "amount": 0.0, "confidence": 1.0}
        emit(
            "fallback",
            offset,
            provider="rules",
            model="fallback.default",
            data={"rule": "default", "decision": decision},
        )
        return finish(offset, decision, "fallback", [])
    emit("infer", offset, **tokens, data={"attempt": 0})
    emit("validate", offset, data={"attempt": 0, "decision": decision, "problems": []})
    if confidence < 0.7:
        emit(
            "route",
            offset,
            status="pending_review",
            reasons=["low_confidence"],
            data={"decision": decision},
        )
        met.append("low_confidence")
        if rng.random() < regime.override_rate:
            emit("review", offset + 6e5, data={"verdict": "reject"})
            return finish(offset + 6e5, decision, "rejected", ["rejected_by_reviewer"])
        offset += 6e5
    if rng.random() < regime.stale_rate:
        emit("recheck", offset, reasons=["state_changed"], data={"result": "changed"})
        return finish(offset, decision, "stale", ["state_changed"])
    emit(
        "execute",
        offset,
        data={"phase": "claim", "action": decision["action"], "decision": decision},
    )
    if rng.random() < regime.executor_error_rate:
        emit("execute", offset, reasons=["executor_error"], data={"phase": "failed"})
        return finish(offset, decision, "aborted", ["executor_error"])
    emit("execute", offset + 20, data={"phase": "done", "result": {"ok": True}})
    return finish(offset + 20, decision, "executed", [])


def write_month(
    traces: Any,
    *,
    end: datetime,
    days: int = 30,
    per_day: int = 160,
    shift_day: int | None = 23,
    seed: int = 7,
    before: Regime = STABLE,
    after: Regime = WEEK4,
) -> int:
    """Append ``days`` days of decisions ending at ``end`` into the TraceStore
    ``traces``; from ``shift_day`` on (0-based) the agent behaves as ``after``."""
    rng = random.Random(seed)
    start = end - timedelta(days=days)
    written = 0
    batch: list[Any] = []
    for day in range(days):
        regime = after if shift_day is not None and day >= shift_day else before
        for _ in range(per_day):
            at = start + timedelta(days=day, seconds=rng.uniform(0, 86_000))
            batch += flow_events(rng, at, regime)
            written += 1
        if len(batch) > 5000:
            traces.append(batch)
            batch = []
    traces.append(batch)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--per-day", type=int, default=160)
    parser.add_argument("--no-shift", action="store_true", help="a stable month")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    from mir.project import find_project
    from mir.traces import TraceStore

    project = find_project(args.project)
    with TraceStore.for_project(project) as traces:
        n = write_month(
            traces,
            end=datetime.now(UTC),
            per_day=args.per_day,
            shift_day=None if args.no_shift else 23,
            seed=args.seed,
        )
    kind = "stable" if args.no_shift else "shift in week 4"
    print(f"wrote {n} decisions of {AGENT} over 30 days ({kind})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
