"""Shadow mode's cost on the production decision's latency (target: <= 5 %).

Two copies of the runtime test project decide the same orders on the embedded SmolLM2
(real llama.cpp), interleaved in one run: one registry has only a production version,
the other also a shadow version (the same GGUF with another context size, so it is a
separately loaded model with its own lock, as a new version would be), in alternating
blocks. Prints p50/p95 of ``agent.decide`` for both and their ratio. ``--gap`` is
the pause between a caller's decisions (an app's think time): the shadow worker starts
a shadow decision only while no production decision is in flight, and its generation
pauses between tokens while one runs (at most 1 s a token), so with gap 0 (a saturated
agent) the shadow still advances one token a second beside production.

    python bench/shadow.py [--n 12] [--block 4] [--gap 0.5] [--threads 1]

Needs ``mir[local]``. Executors write only inside the temporary copies.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.projects import llama_route, runtime_project  # noqa: E402


def _project(root: Path, gguf: Path, shadow: bool) -> Path:
    registry = (
        f'[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\nartifact = "{gguf}"\n'
    )
    if shadow:
        registry += (
            f'\n[[models]]\nname = "triage"\nversion = "2"\nstage = "shadow"\n'
            f'artifact = "{gguf}"\ncontext = 1024\n'
        )
    return runtime_project(root, llama_route("triage"), registry=registry)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=12, help="decisions per arm")
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between decisions")
    parser.add_argument("--block", type=int, default=4, help="decisions per arm in a row")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    args = parser.parse_args()
    os.environ.setdefault("MIR_LLAMA_THREADS", str(args.threads))

    from mir.inference import embedded_model_path
    from mir.runtime import load_agent
    from mir.traces import TraceStore

    gguf = embedded_model_path()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        agents = {}
        for label, shadow in (("without shadow", False), ("with shadow", True)):
            root = _project(work / label.replace(" ", "_"), gguf, shadow)
            store = TraceStore(work / f"traces_{shadow}")
            agents[label] = load_agent("refunds.triage", project=root, traces=store), store
        times: dict[str, list[float]] = {label: [] for label in agents}
        orders = [{"order_id": f"A{i}", "amount": 40, "message": "refund please"} for i in range(3)]
        for agent, _ in agents.values():  # warm-up: load every model once
            agent.decide(orders[0])
            if agent.shadow is not None:
                agent.shadow.wait(120)
        # Alternating blocks (same machine load for both arms); each arm's block feels its
        # own shadows, and a block starts only once the other arm's shadows are done.
        for block in range(0, args.n, args.block):
            for label, (agent, _) in agents.items():
                for i in range(block, min(args.n, block + args.block)):
                    time.sleep(args.gap)
                    started = time.perf_counter()
                    agent.decide(orders[i % len(orders)])
                    times[label].append((time.perf_counter() - started) * 1000)
                if agent.shadow is not None:
                    agent.shadow.wait(120)
        shadowed = agents["with shadow"][0].shadow
        assert shadowed is not None
        shadowed.wait(120)
        stats = shadowed.stats
        for agent, store in agents.values():
            agent.close()
            store.close()
    base, shad = times["without shadow"], times["with shadow"]
    print(f"{'':16}{'p50 ms':>10}{'p95 ms':>10}")
    for label, values in times.items():
        print(f"{label:16}{statistics.median(values):>10.1f}{_pct(values, 0.95):>10.1f}")
    p50 = statistics.median(shad) / statistics.median(base)
    p95 = _pct(shad, 0.95) / _pct(base, 0.95)
    print(f"{'ratio':16}{p50:>10.3f}{p95:>10.3f}")
    print(
        f"n={args.n} per arm, gap {args.gap} s; shadow decisions: {stats.decided} decided, "
        f"{stats.failed} failed, {stats.dropped} dropped"
    )


if __name__ == "__main__":
    main()
