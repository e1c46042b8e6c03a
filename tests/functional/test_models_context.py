"""A llama model's context window is bounded by what its GGUF was trained on.

Through the installed ``mir``: ``register --context``, a hand-edited ``models.toml`` and
a route's own ``n_ctx``, each past the tiny test model's 4096 trained tokens."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.projects import llama_route, runtime_project
from tests.support.tiny_gguf import N_CTX


@pytest.fixture
def desk(tmp_path: Path, tiny_gguf: Path) -> Path:
    root = runtime_project(tmp_path / "app", llama_route("triage"), retries=0)
    (root / "models").mkdir()
    shutil.copy(tiny_gguf, root / "models" / "a.gguf")
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root


def _register(run_mir, root: Path, context: str):
    return run_mir(
        "models", "register", "triage", "1", "--artifact", "models/a.gguf", "--context", context,
        cwd=root,
    )  # fmt: skip


def _one_line_exit_2(done) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize("context", ["99999999999", "4294967297", str(N_CTX + 1), "100"])
def test_register_refuses_a_context_the_model_cannot_have(run_mir, desk, context):
    # Broke: --context 99999999999 was accepted; llama.cpp read it as 32 bits and
    # allocated a context of 1.2 G tokens at the first decision.
    line = _one_line_exit_2(_register(run_mir, desk, context))
    assert "context" in line
    if int(context) > N_CTX and int(context) < 1 << 24:
        assert f"trained on {N_CTX}" in line and "a.gguf" in line
    assert not (desk / "models.toml").exists()


def test_register_accepts_the_trained_context(run_mir, desk):
    done = _register(run_mir, desk, str(N_CTX))
    assert done.returncode == 0, done.stderr
    assert f"context = {N_CTX}" in (desk / "models.toml").read_text()


def test_a_hand_edited_context_past_the_trained_one_is_one_line_at_run(run_mir, desk):
    assert _register(run_mir, desk, "1024").returncode == 0
    done = run_mir("models", "promote", "triage", "1", "--to", "production", cwd=desk)
    assert done.returncode == 0, done.stdout + done.stderr
    registry = desk / "models.toml"
    registry.write_text(registry.read_text().replace("context = 1024", "context = 8192"))
    done = run_mir("run", "agent", "refunds.triage", "-i", '{"order_id": "A1", "amount": 40, '
                   '"message": "x"}', cwd=desk)  # fmt: skip
    line = _one_line_exit_2(done)
    assert f"trained on {N_CTX}" in line and "8192" in line
    registry.write_text(registry.read_text().replace("context = 8192", "context = 99999999999"))
    line = _one_line_exit_2(run_mir("models", "list", cwd=desk))
    assert "models.toml:" in line and "context" in line


def test_a_route_n_ctx_past_the_trained_context_is_one_line(run_mir, tmp_path, tiny_gguf):
    root = runtime_project(tmp_path / "r", llama_route(tiny_gguf, n_ctx=N_CTX * 2), retries=0)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    done = run_mir("run", "agent", "refunds.triage", "-i", '{"order_id": "A1", "amount": 40, '
                   '"message": "x"}', cwd=root)  # fmt: skip
    assert f"trained on {N_CTX}" in _one_line_exit_2(done)
