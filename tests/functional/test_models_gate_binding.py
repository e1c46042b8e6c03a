"""The production gate promotes what it tested, and only what it tested live.

Through the installed ``mir``: the runtime fixture project whose triage route names the
registry model ``qwen``; version 2 is gated live on a tiny random GGUF (fast, its text is
noise: the suite's ``min_pass_rate: 0`` lets the gate pass on structure alone)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.support.projects import llama_route, runtime_project
from tests.support.tiny_gguf import write_tiny_gguf

SUITE = """\
agent: triage
description: the gate's suite
min_pass_rate: 0
cases:
  - id: small
    input: {order_id: A1, amount: 10, message: "broken"}
  - id: large
    input: {order_id: A1, amount: 40, message: "never came"}
"""

# Appended to the copied fixture's adapters: the context loader runs inside the gate's
# decisions; when the marker file exists it rewrites models.toml once (an edit made while
# the gate runs), exactly as a teammate's `git pull` or hand edit would.
EDIT_DURING_GATE = """

_load_order = load_order


def load_order(input):
    marker = ROOT / "edit-during-gate.toml"
    if marker.exists():
        (ROOT / "models.toml").write_text(marker.read_text())
        marker.unlink()
    return _load_order(input)
"""


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _entry(version: str, stage: str, artifact: Path) -> str:
    return (
        f'[[models]]\nname = "qwen"\nversion = "{version}"\nstage = "{stage}"\n'
        f'artifact = "{artifact}"\nsha256 = "{_sha(artifact)}"\n\n'
    )


@pytest.fixture
def desk(tmp_path: Path, tiny_gguf: Path) -> Path:
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(tiny_gguf, models / "a.gguf")
    write_tiny_gguf(models / "b.gguf", seed=1)
    write_tiny_gguf(models / "c.gguf", seed=2)
    registry = _entry("1", "production", models / "a.gguf")
    registry += _entry("2", "candidate", models / "b.gguf")
    root = runtime_project(tmp_path / "app", llama_route("qwen"), registry=registry, retries=0)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    evals = root / "capabilities" / "refunds" / "evals"
    evals.mkdir()
    (evals / "triage.yaml").write_text(SUITE)
    adapters = root / "capabilities" / "refunds" / "adapters.py"
    adapters.write_text(adapters.read_text() + EDIT_DURING_GATE)
    return root


def _history(run_mir, root: Path) -> list[dict]:
    done = run_mir("models", "history", "qwen", "--format", "json", cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _stages(root: Path) -> dict[str, str]:
    import tomllib

    entries = tomllib.loads((root / "models.toml").read_text())["models"]
    return {e["version"]: e["stage"] for e in entries}


def test_a_live_gate_promotes_and_records_the_digest_it_tested(run_mir, desk):
    done = run_mir("models", "promote", "qwen", "2", "--to", "production", cwd=desk)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "qwen@2 is now production" in done.stdout
    gate = _history(run_mir, desk)[-1]["gate"]
    assert gate["ran"] and gate["passed"] and not gate["replayed"]
    assert gate["sha256"] == _sha(desk.parent / "models" / "b.gguf")


def test_an_entry_edited_while_its_gate_runs_is_not_promoted(run_mir, desk):
    # Broke: the gate ran without the edit lock and set_stage then promoted whatever
    # qwen@2 named at the end: here c.gguf, a file no gate ever ran on.
    text = (desk / "models.toml").read_text()
    b, c = desk.parent / "models" / "b.gguf", desk.parent / "models" / "c.gguf"
    edited = text.replace(str(b), str(c)).replace(_sha(b), _sha(c))
    (desk / "edit-during-gate.toml").write_text(edited)
    done = run_mir("models", "promote", "qwen", "2", "--to", "production", cwd=desk)
    assert not (desk / "edit-during-gate.toml").exists(), "the edit ran during the gate"
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "changed in models.toml while its gate ran" in done.stderr
    assert "Traceback" not in done.stderr
    assert (desk / "models.toml").read_text() == edited  # the edit stands, unpromoted
    assert _stages(desk) == {"1": "production", "2": "candidate"}
    last = _history(run_mir, desk)[-1]
    assert (last["version"], last["to_stage"]) == ("2", "refused")
    assert last["gate"]["sha256"] == _sha(b) and "changed" in last["gate"]["note"]
    # --force overrides a failed gate, never a gate that tested something else.
    (desk / "edit-during-gate.toml").write_text(text)
    done = run_mir("models", "promote", "qwen", "2", "--to", "production", "--force", cwd=desk)
    assert done.returncode == 2 and "while its gate ran" in done.stderr, done.stderr
    assert _stages(desk) == {"1": "production", "2": "candidate"}


def test_a_replayed_gate_does_not_promote_without_force_and_says_so(run_mir, desk):
    # Broke: `--responses FILE` passed the production gate on answers recorded for some
    # other model, and the history recorded an ordinary pass.
    line = json.dumps(
        json.dumps({"action": "deny", "confidence": 0.9, "amount": 0, "reason": "recorded"})
    )
    (desk / "replies.jsonl").write_text(f"{line}\n{line}\n")
    args = ("models", "promote", "qwen", "2", "--to", "production", "--responses", "replies.jsonl")
    before = (desk / "models.toml").read_bytes()
    done = run_mir(*args, cwd=desk)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not promoted" in done.stdout and "replayed" in done.stdout
    assert (desk / "models.toml").read_bytes() == before
    last = _history(run_mir, desk)[-1]
    assert last["to_stage"] == "refused" and last["gate"]["replayed"] is True

    done = run_mir(*args, "--force", "--why", "offline CI", cwd=desk)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "qwen@2 is now production (forced on a replayed gate)" in done.stdout
    last = _history(run_mir, desk)[-1]
    assert (last["to_stage"], last["forced"], last["gate"]["replayed"]) == (
        "production",
        True,
        True,
    )
    table = run_mir("models", "history", "qwen", cwd=desk).stdout
    rows = [line for line in table.splitlines() if "refused" in line or "production" in line]
    assert any("passed, replayed" in row and "refused" in row for row in rows), table
    assert any("passed, forced, replayed" in row for row in rows), table
