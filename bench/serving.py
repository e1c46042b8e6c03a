"""Serving beyond one machine: decisions per second of 8 concurrent callers, in-process
llama.cpp vs the same model behind an OpenAI-compatible server reached through litellm.

Both setups run in one run, through the full mir pipeline (a real project and contract; the
route names the registry model ``triage``; ``models.toml`` makes it (a) a llama file, loaded
in-process: one model, one context, calls serialise on its lock; or (b) a ``provider =
"litellm"`` entry whose ``api_base`` is ``python -m llama_cpp.server`` on 127.0.0.1).

llama-cpp-python's server (0.3.x) has no parallel slots / continuous batching option (no
``--n_parallel``; it serialises requests behind one lock), so (b) measures what it does:
the model call leaves the caller's process, the pipeline work around it overlaps. vLLM, TGI
or llama.cpp's C++ ``llama-server --parallel 4`` batch concurrent requests; they are not
installed here.

    python bench/serving.py [--quick] [--callers 8] [--seconds 40]

``--quick`` uses the tiny random-weight GGUF of the tests (seconds, not minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from mir.inference import embedded_model_path
from mir.runtime import load_agent
from mir.traces import TraceStore

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "runtime" / "project"
ROUTE = "routes:\n  - {name: triage, provider: llama, model: triage, max_tokens: 64}\n"


def project(folder: Path, registry: str) -> Path:
    root = folder / "app"
    shutil.copytree(FIXTURE, root)
    contract = root / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    contract.write_text(
        text.replace(text[text.index("routes:") : text.index("cascade_on:")], ROUTE)
    )
    (root / "models.toml").write_text(registry)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root


def entry(body: str) -> str:
    return f'[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n{body}\n'


def start_server(model: Path, log: Path) -> tuple[subprocess.Popen, str]:
    sys.path.insert(0, str(REPO))
    from tests.support.fixtures import free_port

    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--model_alias", "triage", "--n_threads", "2", "--host", "127.0.0.1"]
    command += ["--port", str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited:\n{log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"{base}/models", timeout=1).close()
            return process, base
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit("the server did not start in 120 s")


def run(root: Path, traces: Path, callers: int, seconds: float) -> dict[str, float]:
    """``callers`` threads share one agent and call ``decide`` until the time is up."""
    latencies: list[float] = []
    fallbacks = [0]
    lock = threading.Lock()
    store = TraceStore(traces)
    with load_agent("refunds.triage", project=root, traces=store) as agent:
        agent.decide({"order_id": "W", "amount": 40, "message": "warm-up"})  # load / connect
        stop = time.monotonic() + seconds

        def caller(n: int) -> None:
            i = 0
            while time.monotonic() < stop:
                started = time.perf_counter()
                # distinct inputs: the response cache must not answer for the model
                record = agent.decide({"order_id": f"C{n}-{i}", "amount": 40, "message": "broken"})
                took = time.perf_counter() - started
                with lock:
                    latencies.append(took)
                    fallbacks[0] += record.provider == "rules"
                i += 1

        began = time.perf_counter()
        threads = [threading.Thread(target=caller, args=(n,)) for n in range(callers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
    store.close()
    ordered = sorted(latencies)
    return {
        "decisions": len(latencies),
        "per_s": len(latencies) / wall,
        "p50": statistics.median(ordered),
        "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
        "fallbacks": fallbacks[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tiny GGUF of the tests")
    parser.add_argument("--callers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=None)
    args = parser.parse_args()
    seconds = args.seconds or (8.0 if args.quick else 40.0)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if args.quick:
            sys.path.insert(0, str(REPO))
            from tests.support.tiny_gguf import write_tiny_gguf

            model = write_tiny_gguf(tmp / "tiny.gguf")
        else:
            model = embedded_model_path()
        server, base = start_server(model, tmp / "server.log")
        try:
            local = project(tmp / "a", entry(f'artifact = "{model}"'))
            served = project(
                tmp / "b",
                entry(f'provider = "litellm"\nartifact = "openai/triage"\napi_base = "{base}"'),
            )
            results = {
                "in-process llama (one context)": run(local, tmp / "ta", args.callers, seconds),
                "litellm -> llama_cpp.server": run(served, tmp / "tb", args.callers, seconds),
            }
        finally:
            server.terminate()
            server.wait(timeout=10)
    base_rate = next(iter(results.values()))["per_s"]
    print(
        f"model: {model.name}  callers: {args.callers}  {seconds:.0f} s each  "
        f"cores: {os.cpu_count()}"
    )
    print(
        f"{'callers':>7}  {'setup':<32} {'n':>5} {'dec/s':>7} {'p50 s':>7} {'p95 s':>7} "
        f"{'rules':>5} {'ratio':>6}"
    )
    for setup, r in results.items():
        print(
            f"{args.callers:>7}  {setup:<32} {r['decisions']:>5} {r['per_s']:>7.2f} "
            f"{r['p50']:>7.2f} {r['p95']:>7.2f} {r['fallbacks']:>5} {r['per_s'] / base_rate:>5.2f}x"
        )


if __name__ == "__main__":
    main()
