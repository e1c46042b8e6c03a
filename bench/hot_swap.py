"""Hot swap under load (issue 12, point 6): 4 threads decide continuously while
models.toml promotes version 2; how long does any caller pause around the swap?

Copies tests/fixtures/runtime/project to a temporary folder, registers two copies of a
GGUF as versions 1 (production) and 2 (candidate), starts the threads, then rewrites
models.toml with version 2 in production. Prints, per thread, the longest gap between
two consecutive decisions across the swap, next to the gaps before it (the 4 threads
share one model lock, so an ordinary gap is ~4 decisions) and version 2's load time
(loaded on the watcher's thread before the registry is swapped).

    python bench/hot_swap.py [--model tiny|smollm2] [--seconds 20]

Target: longest pause <= load time + 100 ms; with preloading, far below.

Measured 2026-12-01 (tiny GGUF, 2 cores shared with other jobs, one run): write ->
swap 41 ms (load of version 2: 29 ms); per thread, median gap before 1.1-1.5 s, longest
before 1.8-2.5 s, longest across the swap 2.3-4.4 s. The target is NOT met: the load
is off the callers' path, but the first calls on version 2 still pay for work the
preload does not do (the grammar check of the decision schema is per loaded model) and
run beside version 1's calls (each model has its own lock) on a busy machine.
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mir.inference import MODEL_CACHE, embedded_model_path  # noqa: E402
from mir.runtime import load_agent  # noqa: E402
from mir.traces import TraceStore  # noqa: E402
from tests.support.tiny_gguf import write_tiny_gguf  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "runtime" / "project"
THREADS = 4


def registry(v1: Path, v2: Path, promoted: bool) -> str:
    return (
        f'[[models]]\nname = "triage"\nversion = "1"\n'
        f'stage = "{"retired" if promoted else "production"}"\nartifact = "{v1}"\n\n'
        f'[[models]]\nname = "triage"\nversion = "2"\n'
        f'stage = "{"production" if promoted else "candidate"}"\nartifact = "{v2}"\n'
    )


def project(tmp: Path, v1: Path, v2: Path) -> Path:
    root = tmp / "app"
    shutil.copytree(FIXTURE, root)
    contract = root / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    routes = text[text.index("routes:") : text.index("cascade_on:")]
    contract.write_text(
        text.replace(
            routes, "routes:\n  - {name: local, provider: llama, model: triage, max_tokens: 64}\n"
        )
    )
    (root / "models.toml").write_text(registry(v1, v2, promoted=False))
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["tiny", "smollm2"], default="tiny")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        v1, v2 = tmp / "v1.gguf", tmp / "v2.gguf"
        if args.model == "tiny":
            write_tiny_gguf(v1)
        else:
            shutil.copy(embedded_model_path(), v1)
        shutil.copy(v1, v2)
        root = project(tmp, v1, v2)
        store = TraceStore(tmp / "traces")
        finished: list[list[float]] = [[] for _ in range(THREADS)]
        stop = threading.Event()

        def decide(n: int) -> None:
            i = 0
            while not stop.is_set():
                i += 1
                agent.decide({"order_id": f"B{n}-{i}", "amount": 40, "message": "x"})
                finished[n].append(time.monotonic())

        with load_agent("refunds.triage", project=root, traces=store) as agent:
            agent.decide({"order_id": "warm", "amount": 40, "message": "x"})  # load version 1
            threads = [threading.Thread(target=decide, args=(n,)) for n in range(THREADS)]
            for thread in threads:
                thread.start()
            time.sleep(args.seconds / 2)
            written = time.monotonic()
            (root / "models.toml").write_text(registry(v1, v2, promoted=True))
            resolver = agent.deps.models
            while resolver.registry.get("triage", "2").stage != "production":
                time.sleep(0.001)
            swapped = time.monotonic()
            time.sleep(args.seconds / 2)
            stop.set()
            for thread in threads:
                thread.join()
        store.close()
        loaded = [m for m in MODEL_CACHE._models.values() if m.path == v2]
        load_ms = loaded[0].load_ms if loaded else float("nan")
        print(
            f"model {args.model}; write -> swap {1000 * (swapped - written):.0f} ms "
            f"(watcher + load of version 2: {load_ms:.0f} ms)"
        )
        for n, times in enumerate(finished):
            gaps = list(itertools.pairwise(times))
            before = sorted(b - a for a, b in gaps if b < written)
            # Gaps overlapping [write, swap + 1 s]: what a caller waited across the swap.
            around = [b - a for a, b in gaps if b >= written and a <= swapped + 1]
            median = before[len(before) // 2] if before else 0.0
            print(
                f"thread {n}: {len(times)} decisions; median gap before "
                f"{1000 * median:.0f} ms, longest before {1000 * max(before, default=0):.0f} "
                f"ms, longest across the swap {1000 * max(around, default=0):.0f} ms"
            )


if __name__ == "__main__":
    main()
