"""Back-pressure: how fast a shed decision is decided by the rules, and whether a burst of
calls with a deadline all return in time.

    python bench/backpressure.py [--decisions 300] [--burst 50]

(a) Shed: while two callers keep the model busy, a decision whose deadline (1 ms) the
    queue cannot meet is shed at admission and decided by the contract's rules; timed
    against the same decision made by the rules directly (``--provider rules``), in the
    same run. Target: shed ≤ 5 ms.
(b) Burst: ``--burst`` threads call ``agent.decide(..., deadline_ms=200)`` at once on one
    model with a queue of 4; the share that returned within deadline + 50 ms.

Runs on a tiny random-weight GGUF written at start (tests/support/tiny_gguf.py), so the
model's speed does not matter: what is measured is mir's queue and fallback path.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mir.runtime import load_agent  # noqa: E402
from mir.traces import TraceStore  # noqa: E402
from tests.support.projects import llama_route, runtime_project  # noqa: E402
from tests.support.tiny_gguf import write_tiny_gguf  # noqa: E402

TICKET = {"order_id": "A1", "amount": 40, "message": "broken"}


def project(folder: Path, gguf: Path) -> Path:
    return runtime_project(
        folder / "app", llama_route(gguf, temperature=1.0), model_settings="queue = 4"
    )


def timings(decide, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        decide()
        out.append((time.perf_counter() - started) * 1000)
    return out


def p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--burst", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        gguf = write_tiny_gguf(folder / "tiny.gguf")
        root = project(folder, gguf)
        store = TraceStore(folder / "traces")
        with load_agent("refunds.triage", project=root, traces=store) as agent:
            agent.decide(TICKET)  # the model is loaded outside the clock
            # Two callers without a deadline keep the model busy (one running, one queued),
            # so each timed call meets a model it cannot wait for: shed at admission.
            busy = threading.Event()

            def occupy() -> None:
                while not busy.is_set():
                    agent.decide(TICKET)

            workers = [threading.Thread(target=occupy) for _ in range(2)]
            for worker in workers:
                worker.start()
            time.sleep(0.5)
            shed = timings(lambda: agent.decide(TICKET, deadline_ms=1), args.decisions)
            record = agent.decide(TICKET, deadline_ms=1)
            busy.set()
            for worker in workers:
                worker.join()
            assert "shed" in record.reasons and record.provider == "rules", record

            def call(_: int) -> float:
                started = time.monotonic()
                agent.decide(TICKET, deadline_ms=200)
                return time.monotonic() - started

            with ThreadPoolExecutor(max_workers=args.burst) as pool:
                took = list(pool.map(call, range(args.burst)))
        with load_agent("refunds.triage", project=root, traces=store, provider="rules") as rules:
            direct = timings(lambda: rules.decide(TICKET), args.decisions)
        store.close()
    print(f"{'measure':<44} {'p50 ms':>8} {'p99 ms':>8}")
    print(
        f"{'(a) shed at admission, decided by rules':<44} "
        f"{p(shed, 0.5):>8.2f} {p(shed, 0.99):>8.2f}"
    )
    print(f"{'    reference: rules directly':<44} {p(direct, 0.5):>8.2f} {p(direct, 0.99):>8.2f}")
    print(
        f"    ratio shed / rules (p50): {statistics.median(shed) / statistics.median(direct):.2f}x"
        f"   target: shed p50 <= 5 ms -> {'met' if p(shed, 0.5) <= 5 else 'MISSED'}"
    )
    in_time = sum(t <= 0.25 for t in took)
    print(
        f"(b) burst of {args.burst}, queue 4, deadline 200 ms: {in_time}/{args.burst} returned "
        f"within deadline + 50 ms (slowest {max(took) * 1000:.0f} ms)"
    )
    return 0 if p(shed, 0.5) <= 5 and in_time == args.burst else 1


if __name__ == "__main__":
    sys.exit(main())
