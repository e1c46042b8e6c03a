"""`mir run agent` with a registry shadow version: the shadow decision it starts ends in
the trace (a snapshot and a final event) before the process exits, with or without the
terminal spinner, and the shadow's model calls never speak through the spinner."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mir.project import find_project
from mir.traces import TraceStore
from tests.functional.test_run_spinner import run_with_terminal_stderr
from tests.support.tiny_gguf import write_tiny_gguf

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
CONTRACT = Path("capabilities/refunds/agents/triage.yaml")
TICKET = "@inputs/blender_broken.json"


@pytest.fixture
def desk(tmp_path: Path, tiny_gguf: Path) -> Path:
    """The example with qwen 1 (a tiny GGUF) in production and qwen 2 in shadow."""
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir"))
    (root / "models").mkdir()
    shutil.copy(tiny_gguf, root / "models" / "a.gguf")
    write_tiny_gguf(root / "models" / "b.gguf", seed=1)
    (root / "models.toml").write_text(
        '[[models]]\nname = "qwen"\nversion = "1"\nstage = "production"\n'
        'artifact = "models/a.gguf"\n\n'
        '[[models]]\nname = "qwen"\nversion = "2"\nstage = "shadow"\n'
        'artifact = "models/b.gguf"\n'
    )
    contract = root / CONTRACT
    contract.write_text(contract.read_text().replace("model: default", "model: qwen"))
    return root


def _flows(root: Path) -> dict[str, dict[str, object]]:
    """flow id -> {source, shadow_of, final} read back from the store."""
    out: dict[str, dict[str, object]] = {}
    with TraceStore.for_project(find_project(root)) as store:
        for event in store.events():
            entry = out.setdefault(event.flow_id, {"final": None})
            if event.step == "snapshot":
                entry["source"] = event.data.get("source")
                entry["shadow_of"] = event.data.get("shadow_of")
            if event.step == "final":
                entry["final"] = event.status
    return out


def _assert_one_finished_shadow(root: Path) -> None:
    flows = _flows(root)
    shadows = [f for f in flows.values() if f.get("source") == "shadow"]
    production = [i for i, f in flows.items() if f.get("source") == "production"]
    assert len(production) == 1, flows
    assert len(shadows) == 1, flows
    assert shadows[0]["shadow_of"] == production[0]
    assert shadows[0]["final"] is not None, f"orphan shadow flow: {flows}"


def test_a_piped_run_finishes_its_shadow_decision(run_mir, desk: Path):
    done = run_mir("run", "agent", "refunds.triage", "-i", TICKET, cwd=desk)
    assert done.returncode in (0, 1), done.stderr
    _assert_one_finished_shadow(desk)


def test_a_run_on_a_terminal_finishes_its_shadow_decision(desk: Path):
    code, _, terminal = run_with_terminal_stderr(
        desk, "run", "agent", "refunds.triage", "-i", TICKET
    )
    assert code in (0, 1), terminal
    # the spinner names production's model, never the shadow version's
    assert "b.gguf" not in terminal, terminal
    _assert_one_finished_shadow(desk)
