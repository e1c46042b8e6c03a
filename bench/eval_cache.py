"""The response cache: a fully cached re-run against the uncached run.

Target: a fully cached re-run of a 200-case suite on the embedded llama model takes at
most 5 % of the uncached run.

The agent is the runtime fixture's ``refunds.triage`` (a scaffold-like contract: three
actions, a pydantic decision, a jinja prompt) on the embedded SmolLM2, one route, no
retries, so every case is one model call. Each phase runs in a fresh process, as
``mir eval`` would, through the runtime directly (``load_agent(..., response_cache=)``
and ``Agent.decide``): (1) uncached, into an empty cache; (2) the same cases again,
answered from the cache. For each phase: wall time of the process, time of the
decisions alone, how many infer events were cached, and whether llama_cpp was
imported at all.

    python bench/eval_cache.py [--cases 200] [--threads N]

Measured 2026-11-30 (2 shared cores, --threads 1, 200 cases): uncached 951.6 s wall
(4.8 s a case), fully cached re-run 6.15 s wall (5.7 s of decisions, llama_cpp never
imported): 0.65 % of the uncached run. With 50 cases: 486.5 s vs 2.59 s (0.53 %).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "runtime" / "project"
MESSAGES = [
    "the parcel arrived broken",
    "it never came",
    "wrong size, I want my money back",
    "I changed my mind",
    "the box was empty",
    "can I get a discount?",
    "charged twice for the same order",
    "the colour is not what the picture showed",
]

PHASE = """
import json, sys, time
from pathlib import Path
started = time.perf_counter()
from mir.runtime import load_agent
from mir.traces import TraceStore

root, cache, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[4]
cases = json.loads(sys.argv[3])
store = TraceStore(root / ".mir" / f"traces-{name}")
cached = calls = 0
with load_agent("refunds.triage", project=root, traces=store, response_cache=cache) as agent:
    begin = time.perf_counter()
    statuses = {}
    for case in cases:
        record = agent.decide(case)
        statuses[record.status] = statuses.get(record.status, 0) + 1
        for event in agent.trace(record.flow_id):
            if event.step == "infer":
                calls += 1
                cached += bool(event.data.get("cached"))
    decide_s = time.perf_counter() - begin
store.close()
print(json.dumps({"decide_s": decide_s, "in_process_s": time.perf_counter() - started,
                  "calls": calls, "cached": cached, "statuses": statuses,
                  "llama_imported": "llama_cpp" in sys.modules}))
"""


def cases(count: int) -> list[dict]:
    return [
        {
            "order_id": "A1",
            "amount": 5 + (i * 7) % 300,
            "message": f"{MESSAGES[i % len(MESSAGES)]} (ticket {i})",
        }
        for i in range(count)
    ]


def project(folder: Path) -> Path:
    root = folder / "app"
    shutil.copytree(FIXTURE, root)
    path = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract = yaml.safe_load(path.read_text())
    contract["routes"] = [
        {"name": "local", "provider": "llama", "model": "default", "max_tokens": 96}
    ]
    contract.pop("cascade_on", None)
    contract["retries"] = 0  # one model call a case: the cache's effect, nothing else
    contract["budget"] = {"max_tokens": 100000}
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    (root / "world.json").write_text('{"A1": {"order_total": 400}}')
    (root / "pyproject.toml").write_text(
        (root / "pyproject.toml").read_text() + "\n[tool.mir.model]\nn_ctx = 1024\n"
    )
    return root


def phase(root: Path, cache: Path, batch: list[dict], name: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PHASE, str(root), str(cache), json.dumps(batch), name],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{name} failed:\n{done.stderr[-3000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        os.environ["MIR_LLAMA_THREADS"] = str(args.threads)
    batch = cases(args.cases)
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp))
        cache = Path(tmp) / "cache"
        cold = phase(root, cache, batch, "uncached")
        warm = phase(root, cache, batch, "cached")
    print(f"{args.cases} cases, embedded SmolLM2, one model call a case")
    print(
        f"{'run':10} {'wall s':>9} {'decide s':>9} {'calls':>6} {'cached':>7}  llama_cpp imported"
    )
    for name, row in (("uncached", cold), ("cached", warm)):
        print(
            f"{name:10} {row['wall_s']:9.2f} {row['decide_s']:9.2f} {row['calls']:6d} "
            f"{row['cached']:7d}  {row['llama_imported']}"
        )
    print(f"statuses: {cold['statuses']}")
    wall = warm["wall_s"] / cold["wall_s"]
    decide = warm["decide_s"] / cold["decide_s"]
    print(
        f"cached / uncached: {wall:.2%} of the wall time (process start included), "
        f"{decide:.2%} of the decision time (target <= 5 %)"
    )


if __name__ == "__main__":
    main()
