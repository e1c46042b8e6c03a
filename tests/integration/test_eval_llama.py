"""``mir.run_eval`` on real llama.cpp in worker processes (the tiny random-weight model):
each worker loads the model itself, and every case run is a complete, traced flow."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mir
from mir.evals.workers import start_method
from mir.project import find_project
from mir.traces import TraceStore

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
pytestmark = pytest.mark.slow


def _suite(tmp_path: Path, cases: int = 3) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    evals = root / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    cases = "".join(
        f"  - id: c{i}\n    input: {{order_id: A1, amount: 10, message: m{i}}}\n"
        "    assert: [{type: status, value: [executed, fallback, pending_review]}]\n"
        for i in range(cases)
    )
    (evals / "triage.yaml").write_text("agent: triage\ncases:\n" + cases)
    return root


def test_jobs_2_on_llama_runs_every_case_through_the_model(tmp_path: Path, tiny_gguf: Path):
    root = _suite(tmp_path, cases=4)
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


def test_jobs_2_after_this_process_ran_llama_does_not_hang(tmp_path: Path, tiny_gguf: Path):
    """llama.cpp's thread pool does not survive a fork: once this process has decoded,
    forked workers waited forever on their first decode (this hung CI). Workers then
    start from a clean forkserver."""
    from llama_cpp import Llama

    llm = Llama(model_path=str(tiny_gguf), n_ctx=128, verbose=False)
    llm.create_completion("warm", max_tokens=2)  # the thread pool now exists here
    assert start_method() != "fork"
    report = mir.run_eval(project=_suite(tmp_path), provider="llama", model=str(tiny_gguf), jobs=2)
    assert [r.case_id for r in report.suites[0].runs] == ["c0", "c1", "c2"]
    assert all(r.error is None and r.flow_id for r in report.suites[0].runs)


def test_a_script_without_a_main_guard_gets_one_clear_line(tmp_path: Path, tiny_gguf: Path):
    root = _suite(tmp_path)
    script = tmp_path / "app_script.py"
    script.write_text(
        "import mir\n"
        "from llama_cpp import Llama\n"
        f"Llama(model_path={str(tiny_gguf)!r}, n_ctx=128, verbose=False)"
        ".create_completion('warm', max_tokens=2)\n"
        "try:\n"
        f"    mir.run_eval(project={str(root)!r}, provider='llama',"
        f" model={str(tiny_gguf)!r}, jobs=2)\n"
        "except mir.MirError as exc:\n"
        "    print('ERROR', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("ERROR")]
    assert len(lines) == 1, done.stdout + done.stderr
    assert "could not start" in lines[0] and "__main__" in lines[0]
