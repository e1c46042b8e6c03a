"""Planning init / capability / agent against in-memory fakes of every port."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from mir.errors import ConfigError, UsageError
from mir.scaffold.application import plan_agent, plan_capability, plan_init
from mir.scaffold.domain import ChangeKind
from tests.unit.scaffold.fakes import (
    AcceptAll,
    EchoTemplates,
    FakeEditor,
    MemoryWorkspace,
    RejectPython,
)

ROOT = Path("/proj")

STARTER_DOMAIN = "from typing import Literal\n\nfrom pydantic import BaseModel, Field\n"
STARTER_ADAPTERS = "from collections.abc import Mapping\nfrom typing import Any\n"


def kinds(plan) -> dict[str, ChangeKind]:
    return {str(c.path): c.kind for c in plan.changes}


def init(workspace: MemoryWorkspace):
    return plan_init(
        ROOT,
        templates=EchoTemplates(),
        workspace=workspace,
        editor=FakeEditor(),
        check=AcceptAll(),
    )


def test_init_in_an_empty_folder_creates_everything():
    plan = init(MemoryWorkspace())
    assert kinds(plan) == {
        "pyproject.toml": ChangeKind.CREATE,
        "CLAUDE.md": ChangeKind.CREATE,
        "AGENTS.md": ChangeKind.CREATE,
        "capabilities/__init__.py": ChangeKind.CREATE,
        ".gitignore": ChangeKind.CREATE,
    }
    gitignore = next(c for c in plan.changes if c.path.name == ".gitignore")
    assert gitignore.text == ".mir/\n"


def test_init_keeps_what_exists_and_adds_tool_mir_to_a_foreign_pyproject():
    workspace = MemoryWorkspace(
        {
            ROOT / "pyproject.toml": "[project]\n",
            ROOT / "CLAUDE.md": "mine",
            ROOT / ".gitignore": "dist",
        }
    )
    plan = init(workspace)
    assert kinds(plan)["pyproject.toml"] is ChangeKind.UPDATE
    assert kinds(plan)["CLAUDE.md"] is ChangeKind.KEEP
    assert kinds(plan)["AGENTS.md"] is ChangeKind.CREATE
    gitignore = next(c for c in plan.changes if c.path.name == ".gitignore")
    assert gitignore.kind is ChangeKind.APPEND
    assert gitignore.text == "dist\n.mir/\n"  # the missing newline is added first


@pytest.mark.parametrize("line", [".mir", ".mir/", "/.mir/", "  .mir/  "])
def test_init_never_duplicates_the_gitignore_entry(line):
    plan = init(MemoryWorkspace({ROOT / ".gitignore": f"build/\n{line}\n"}))
    assert kinds(plan)[".gitignore"] is ChangeKind.KEEP


def test_init_uses_the_configured_capabilities_folder():
    plan = init(MemoryWorkspace({ROOT / "pyproject.toml": "[tool.mir]\n"}))
    assert kinds(plan)["pyproject.toml"] is ChangeKind.KEEP
    assert "src/caps/__init__.py" in kinds(plan)


def test_init_reports_a_malformed_pyproject():
    with pytest.raises(ConfigError, match="invalid TOML") as info:
        init(MemoryWorkspace({ROOT / "pyproject.toml": "BROKEN"}))
    assert info.value.where == str(ROOT / "pyproject.toml")


def test_capability_plan_lists_the_whole_slice():
    templates = EchoTemplates()
    plan = plan_capability(
        ROOT, "capabilities", "support-desk", templates=templates, check=AcceptAll()
    )
    base = "capabilities/support_desk/"
    assert sorted(kinds(plan)) == sorted(
        base + rel
        for rel in [
            "CLAUDE.md",
            "__init__.py",
            "domain.py",
            "application.py",
            "adapters.py",
            "tests/__init__.py",
            "tests/test_support_desk.py",
        ]
    )
    assert set(kinds(plan).values()) == {ChangeKind.CREATE}
    assert "'pascal': 'SupportDesk'" in plan.changes[0].text


def test_a_template_that_renders_invalid_code_stops_the_plan():
    with pytest.raises(ConfigError, match="not valid Python"):
        plan_capability(
            ROOT, "capabilities", "desk", templates=EchoTemplates(), check=RejectPython()
        )


def agent_workspace(domain: str = STARTER_DOMAIN, adapters: str = STARTER_ADAPTERS):
    base = ROOT / "capabilities" / "desk"
    return MemoryWorkspace({base / "domain.py": domain, base / "adapters.py": adapters})


def agent(workspace, name="triage", actions=("reply",)):
    return plan_agent(
        ROOT,
        "capabilities",
        "desk",
        name,
        actions=actions,
        templates=EchoTemplates(),
        workspace=workspace,
        check=AcceptAll(),
    )


def test_agent_plan_creates_files_and_appends_to_domain_and_adapters():
    plan = agent(agent_workspace())
    assert kinds(plan) == {
        "capabilities/desk/agents/triage.yaml": ChangeKind.CREATE,
        "capabilities/desk/agents/triage.j2": ChangeKind.CREATE,
        "capabilities/desk/evals/triage.yaml": ChangeKind.CREATE,
        "capabilities/desk/tests/test_triage_agent.py": ChangeKind.CREATE,
        "capabilities/desk/domain.py": ChangeKind.APPEND,
        "capabilities/desk/adapters.py": ChangeKind.APPEND,
        # the editor schemas the YAML files' modelines point at
        "schemas/agent-contract.schema.json": ChangeKind.CREATE,
        "schemas/eval-suite.schema.json": ChangeKind.CREATE,
    }
    domain = next(c for c in plan.changes if c.path.name == "domain.py")
    assert domain.before == STARTER_DOMAIN
    assert domain.text.startswith(STARTER_DOMAIN.rstrip() + "\n\n\n# agent/decision.py.j2")
    assert "'decision_class': 'TriageDecision'" in domain.text
    assert "'actions': ('reply', 'escalate')" in domain.text
    assert "'triage_escalate'" in domain.text


def test_agent_needs_an_existing_capability():
    with pytest.raises(UsageError, match="capability 'desk' not found") as info:
        agent(MemoryWorkspace())
    assert "mir new capability desk" in (info.value.hint or "")


@pytest.mark.parametrize(
    ("domain", "adapters", "message"),
    [
        (
            STARTER_DOMAIN + "class TriageDecision: ...\n",
            STARTER_ADAPTERS,
            "'TriageDecision' is already defined",
        ),
        (
            STARTER_DOMAIN,
            STARTER_ADAPTERS + "def triage_reply(): ...\n",
            "'triage_reply' is already defined",
        ),
        ("from pydantic import BaseModel, Field\n", STARTER_ADAPTERS, "needs 'Literal'"),
        (STARTER_DOMAIN, "from typing import Any\n", "needs 'Mapping'"),
    ],
)
def test_agent_refuses_to_append_what_would_clash_or_not_import(domain, adapters, message):
    with pytest.raises(UsageError, match=message):
        agent(agent_workspace(domain, adapters))


def test_agent_reports_a_domain_module_that_does_not_parse():
    with pytest.raises(ConfigError, match="cannot parse") as info:
        agent(agent_workspace(domain="def broken(:\n"))
    assert info.value.where.endswith("domain.py:1")


def test_agent_actions_are_names_too_and_escalate_is_always_there():
    with pytest.raises(UsageError, match="action name '1x' is not a valid Python identifier"):
        agent(agent_workspace(), actions=("1x",))
    # An action is a function-name part and a string, never a module: these are fine.
    for name in ("class", "json", "domain"):
        agent(agent_workspace(), actions=(name,))
    with pytest.raises(UsageError, match="given twice"):
        agent(agent_workspace(), actions=("reply", "reply"))
    plan = agent(agent_workspace(), actions=("escalate", "refund"))
    domain = next(c for c in plan.changes if c.path.name == "domain.py")
    assert "'actions': ('escalate', 'refund')" in domain.text


def test_plan_paths_are_relative_to_the_root():
    plan = agent(agent_workspace())
    change = plan.changes[0]
    assert change.path == PurePosixPath("capabilities/desk/agents/triage.yaml")
    assert plan.target(change) == ROOT / "capabilities/desk/agents/triage.yaml"
