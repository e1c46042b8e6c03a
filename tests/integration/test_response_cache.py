"""The response cache through ``load_agent``: real llama.cpp on the tiny random model, real
SQLite, real processes. A fully cached run never imports llama_cpp, let alone loads the
GGUF; two worker processes share one cache file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
REPO = Path(__file__).parents[2]
TICKETS = [
    {"order_id": "A1", "amount": 40, "message": "arrived broken"},
    {"order_id": "A1", "amount": 30, "message": "never came"},
    {"order_id": "A1", "amount": 25, "message": "wrong colour"},
]

# Real llama.cpp and one child process per run.
pytestmark = pytest.mark.slow

# One run of the agent in a fresh process; prints what the test needs as JSON.
DECIDE = """
import json, sys
from pathlib import Path
from mir.runtime import load_agent
from mir.traces import TraceStore

root, cache, tickets = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
store = TraceStore(root / ".mir" / f"traces-{sys.argv[4]}")
with load_agent("refunds.triage", project=root, traces=store,
                response_cache=Path(cache) if cache else None) as agent:
    infer = []
    for ticket in tickets:
        record = agent.decide(ticket)
        infer += [e.data.get("cached", False) for e in agent.trace(record.flow_id)
                  if e.step == "infer"]
store.close()
print(json.dumps({"cached": infer, "llama_imported": "llama_cpp" in sys.modules}))
"""


@pytest.fixture
def app(tmp_path: Path, tiny_gguf: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    path = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract = yaml.safe_load(path.read_text())
    contract["routes"] = [
        {"name": "local", "provider": "llama", "model": str(tiny_gguf), "max_tokens": 48}
    ]
    contract.pop("cascade_on", None)
    contract["retries"] = 1
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    (root / "world.json").write_text('{"A1": {"order_total": 80}}')
    return root


def decide(
    root: Path, cache: Path | None, tickets: list[dict] = TICKETS, name: str = "a"
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", DECIDE, str(root), str(cache or ""), json.dumps(tickets), name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def result(process: subprocess.Popen[str]) -> tuple[dict, str]:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1]), err


def test_a_fully_cached_run_never_loads_the_model(app: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    first, _ = result(decide(app, cache))
    assert first["cached"] and not any(first["cached"]) and first["llama_imported"]
    again, err = result(decide(app, cache))
    assert again["cached"] == [True] * len(first["cached"])  # the same calls, all replayed
    assert not again["llama_imported"], "a fully cached run must not import llama_cpp"
    assert "warning" not in err


def test_without_the_cache_the_model_is_asked_again(app: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    result(decide(app, cache))
    uncached, _ = result(decide(app, None))
    assert not any(uncached["cached"]) and uncached["llama_imported"]


def test_a_new_input_misses_and_is_asked(app: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    result(decide(app, cache, TICKETS[:1]))
    mixed, _ = result(decide(app, cache, TICKETS[:2]))
    assert mixed["cached"][0] is True and not mixed["cached"][-1]


def test_two_worker_processes_share_one_cache_file(app: Path, tmp_path: Path):
    cache = tmp_path / "cache"
    tickets = [{**TICKETS[0], "amount": amount} for amount in range(10, 22)]
    workers = [decide(app, cache, tickets, name) for name in ("w1", "w2")]
    outcomes = [result(w) for w in workers]
    for _, err in outcomes:
        assert "warning" not in err
    replay, _ = result(decide(app, cache, tickets, "w3"))
    assert replay["cached"] and all(replay["cached"]) and not replay["llama_imported"]
