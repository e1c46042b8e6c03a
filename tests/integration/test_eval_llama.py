"""``mir.run_eval`` on real llama.cpp in worker processes (the tiny random-weight model):
each worker loads the model itself, and every case run is a complete, traced flow."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import mir
from mir.project import find_project
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
pytestmark = pytest.mark.slow


def test_jobs_2_on_llama_runs_every_case_through_the_model(tmp_path: Path, tiny_gguf: Path):
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    evals = root / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    cases = "".join(
        f"  - id: c{i}\n    input: {{order_id: A1, amount: 10, message: m{i}}}\n"
        "    assert: [{type: status, value: [executed, fallback, pending_review]}]\n"
        for i in range(4)
    )
    (evals / "triage.yaml").write_text("agent: triage\ncases:\n" + cases)
    report = mir.run_eval(project=root, provider="llama", model=str(tiny_gguf), jobs=2)
    runs = report.suites[0].runs
    assert [r.case_id for r in runs] == ["c0", "c1", "c2", "c3"]
    assert all(r.error is None and r.flow_id for r in runs)
    with TraceStore.for_project(find_project(root)) as store:
        for run in runs:
            events = store.flow(run.flow_id)
            assert events[0].data["source"] == "eval" and events[-1].step == "final"
            assert any(e.step == "infer" and e.provider == "llama" for e in events)
    assert not (root / "executed.jsonl").exists()
    assert not (root / ".mir" / "executions.db").exists()
