"""``scaffold_demo``: the library entry point ``examples/demo.py`` builds its project with."""

from __future__ import annotations

import pytest

from mir.contracts import load_contract, load_intent_doc
from mir.errors import UsageError
from mir.scaffold import ChangeKind, scaffold_demo


def test_scaffold_demo_builds_a_project_with_a_capability_and_an_agent(tmp_path):
    init, capability, agent = scaffold_demo(tmp_path / "demo")
    caps = tmp_path / "demo" / "capabilities"
    assert {c.kind for c in init.changes} == {ChangeKind.CREATE}
    assert len(capability.changes) == 7
    assert load_intent_doc(caps / "support_desk" / "CLAUDE.md").capability == "support_desk"
    contract = load_contract(caps / "support_desk" / "agents" / "triage.yaml")
    assert list(contract.actions) == ["reply", "escalate"]
    assert {c.kind for c in agent.changes} == {ChangeKind.CREATE, ChangeKind.APPEND}


def test_scaffold_demo_refuses_a_folder_that_already_has_the_capability(tmp_path):
    scaffold_demo(tmp_path)
    with pytest.raises(UsageError, match="refusing to overwrite"):
        scaffold_demo(tmp_path)
