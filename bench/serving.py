"""Serving beyond one machine: decisions per second of concurrent callers, in-process
llama.cpp vs the same model behind an OpenAI-compatible server reached through litellm.

Every setup runs in one run, through the full mir pipeline (a real project and contract;
the route names the registry model ``triage``; ``models.toml`` makes it (a) a llama file,
loaded in-process: one model, one context, calls serialise on its lock; or a ``provider =
"litellm"`` entry, ``artifact = "openai/triage"``, whose ``api_base`` is on 127.0.0.1:
(b) llama.cpp's C++ ``llama-server --parallel 4`` (four slots, continuous batching: the
slots' tokens are decoded together in one batch), built once by ``bench/llama_server.py``
from the llama.cpp that llama-cpp-python vendors; (c) ``python -m llama_cpp.server``
(llama-cpp-python's server: no parallel slots, one lock, requests run one at a time).

Each server gets what the in-process model gets: the same GGUF, 2 threads, a 2048-token
context per slot (llama-server's ``-c`` is shared by its slots, so it gets 4 x 2048).
``--logs DIR`` keeps each server's log (its per-request timings) for a closer look.

    python bench/serving.py [--quick] [--callers 8 1] [--seconds 40] [--logs DIR]

``--quick`` uses the tiny random-weight GGUF of the tests (seconds, not minutes): a
plumbing check only. Its noise never makes a valid decision (every row falls back to the
rules), and llama-server answers HTTP 400 to it (its log: "error initializing grammar
sampler"; SmolLM2's vocabulary works), so that row measures errors.

Measured 2026-12-01 (SmolLM2-135M Q4_1, 40 s a row, one run each, 2 cores, servers on the
same machine, otherwise idle): 8 callers, decisions/s in-process 0.80, llama-server -np 4
1.27 (1.58x), llama_cpp.server 0.76; 1 caller 0.79 / 1.03 / 0.86; no rules fallbacks. A
second run: 8 callers 0.72 / 0.95 (1.31x) / 0.66; 1 caller 0.78 / 1.01 / 0.84.
The 25.6 s for one served decision measured earlier was the busy machine, not the server:
under CPU contention a llama.cpp with 2 threads spin-waits for its descheduled partner at
every barrier (llama-server at 2 threads generated 1-9 tokens/s with the machine loaded,
77 tokens/s at 2 threads a minute later when quieter, 50 tokens/s at 1 thread under the same load).
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
from collections.abc import Callable
from pathlib import Path

from mir.inference import embedded_model_path
from mir.runtime import load_agent
from mir.traces import TraceStore

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.llama_server import ensure_llama_server  # noqa: E402
from tests.support.fixtures import free_port  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "runtime" / "project"
ROUTE = "routes:\n  - {name: triage, provider: llama, model: triage, max_tokens: 64}\n"
N_CTX = 2048  # the in-process default ([tool.mir.model] n_ctx), per slot for the servers
SLOTS = 4  # llama-server --parallel; also mir's default remote_concurrency
THREADS = "2"


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


def served(base: str) -> str:
    return entry(f'provider = "litellm"\nartifact = "openai/triage"\napi_base = "{base}"')


def llama_server_command(model: Path, port: int) -> list[str]:
    command = [str(ensure_llama_server()), "--model", str(model), "--alias", "triage"]
    command += ["--parallel", str(SLOTS), "--ctx-size", str(SLOTS * N_CTX)]
    command += ["--threads", THREADS, "--threads-batch", THREADS, "--cont-batching", "--no-webui"]
    return [*command, "--host", "127.0.0.1", "--port", str(port)]


def python_server_command(model: Path, port: int) -> list[str]:
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--model_alias", "triage", "--n_ctx", str(N_CTX)]
    command += ["--n_threads", THREADS, "--n_threads_batch", THREADS]
    return [*command, "--host", "127.0.0.1", "--port", str(port)]


def start_server(command: Callable[[Path, int], list[str]], model: Path, log: Path):
    port = free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen(command(model, port), stdout=sink, stderr=subprocess.STDOUT)
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
    tokens: list[int] = []
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
                    tokens.append(record.tokens)
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
        "tokens": statistics.mean(tokens),
    }


SERVERS = {
    f"litellm -> llama-server -np {SLOTS}": ("llama-server", llama_server_command),
    "litellm -> llama_cpp.server": ("llama_cpp.server", python_server_command),
}
IN_PROCESS = "in-process llama (one context)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tiny GGUF of the tests")
    parser.add_argument("--callers", type=int, nargs="+", default=[8])
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--logs", type=Path, default=None, help="keep the servers' logs here")
    args = parser.parse_args()
    seconds = args.seconds or (8.0 if args.quick else 40.0)
    rows: list[tuple[int, str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        if args.quick:
            from tests.support.tiny_gguf import write_tiny_gguf

            model = write_tiny_gguf(tmp / "tiny.gguf")
        else:
            model = embedded_model_path()
        ensure_llama_server()  # a first build is no part of any row
        local = project(tmp / "local", entry(f'artifact = "{model}"'))
        for callers in args.callers:
            rows.append((callers, IN_PROCESS, run(local, tmp / f"t{callers}", callers, seconds)))
            # one server at a time, started per row: an idle server still holds memory, and
            # a fresh one has no queue or prompt cache left from the previous row
            for setup, (name, command) in SERVERS.items():
                log = tmp / f"{name}-{callers}.log"
                server, base = start_server(command, model, log)
                try:
                    root = project(tmp / f"{name}-{callers}", served(base))
                    rows.append(
                        (callers, setup, run(root, tmp / f"t{name}{callers}", callers, seconds))
                    )
                finally:
                    server.terminate()
                    server.wait(timeout=10)
                if args.logs:
                    args.logs.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(log, args.logs / log.name)
    print(f"model: {model.name}  {seconds:.0f} s a row  cores: {os.cpu_count()}")
    print(
        f"{'callers':>7}  {'setup':<32} {'n':>5} {'dec/s':>7} {'p50 s':>7} {'p95 s':>7} "
        f"{'tok':>5} {'rules':>5} {'ratio':>6}"
    )
    base_rate = {c: r["per_s"] for c, s, r in rows if s == IN_PROCESS}
    for callers, setup, r in rows:
        print(
            f"{callers:>7}  {setup:<32} {r['decisions']:>5} {r['per_s']:>7.2f} "
            f"{r['p50']:>7.2f} {r['p95']:>7.2f} {r['tokens']:>5.0f} {r['fallbacks']:>5} "
            f"{r['per_s'] / base_rate[callers]:>5.2f}x"
        )


if __name__ == "__main__":
    main()
