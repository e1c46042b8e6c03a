"""No byte under ``.mir/`` holds a secret a model wrote, the response cache included.

Through the installed ``mir``: the tiny test model is made to answer with a secret (the
decision schema allows one reason only, a key-shaped string, and llama.cpp's grammar
forces it), exactly as a real model echoing a token from its prompt would. Traces and
reports redact it; the response cache does not keep an answer that needed redaction, so
a re-run asks the model again (and redacts again) instead of replaying it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.projects import llama_route, runtime_project

SECRET = "sk-proj4f9QkzT2xWb7Lm3Nc8Rv"
SAFE = "damaged on arrival"
SUITE = """\
agent: triage
description: the model answers with a secret
min_pass_rate: 0
cases:
  - id: first
    input: {order_id: A1, amount: 10, message: "broken"}
  - id: second
    input: {order_id: A1, amount: 40, message: "never came"}
"""


def _desk(tmp_path: Path, tiny_gguf: Path, reason: str) -> Path:
    root = runtime_project(tmp_path / "app", llama_route(tiny_gguf, max_tokens=200), retries=0)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    domain = root / "capabilities" / "refunds" / "domain.py"
    domain.write_text(
        domain.read_text().replace(
            "reason: str = Field(max_length=80)", f"reason: Literal[{reason!r}]"
        )
    )
    contract = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
    text = contract.read_text()
    for said in ("small amounts are refunded by rule", "fallback: no valid model decision"):
        text = text.replace(said, reason)  # the rules' decisions fit the schema too
    contract.write_text(text)
    evals = root / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(SUITE)
    return root


def _eval(run_mir, root: Path) -> list[dict]:
    done = run_mir("eval", "refunds.triage", "--format", "json", cwd=root)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    [suite] = json.loads(done.stdout)["suites"]
    return suite["runs"]


def _files_holding(root: Path, needle: bytes) -> list[str]:
    return [
        str(path.relative_to(root))
        for path in sorted((root / ".mir").rglob("*"))
        if path.is_file() and needle in path.read_bytes()
    ]


def test_a_secret_in_a_model_answer_is_never_written_under_dot_mir(run_mir, tmp_path, tiny_gguf):
    # Broke: .mir/cache/responses.sqlite3 kept the answer as written, so a token the
    # model echoed was redacted in traces and reports but stored in clear.
    root = _desk(tmp_path, tiny_gguf, SECRET)
    first = _eval(run_mir, root)
    assert (root / ".mir" / "cache" / "responses.sqlite3").exists()
    assert not _files_holding(root, SECRET.encode())
    again = _eval(run_mir, root)
    assert not any(run["cached"] for run in again), "an answer that needed redaction replayed"
    assert [r["status"] for r in again] == [r["status"] for r in first]
    assert not _files_holding(root, SECRET.encode())
    assert not _files_holding(root, SECRET[3:].encode())


def test_an_answer_without_a_secret_is_still_cached(run_mir, tmp_path, tiny_gguf):
    root = _desk(tmp_path, tiny_gguf, SAFE)
    _eval(run_mir, root)
    assert all(run["cached"] for run in _eval(run_mir, root))
    assert _files_holding(root, SAFE.encode())  # the cache (and traces) keep it
