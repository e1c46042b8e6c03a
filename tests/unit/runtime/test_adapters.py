"""The runtime's adapters: template rendering, user-code loading, agent states
(the execution ledger: ``test_ledger.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mir.errors import ConfigError
from mir.runtime.agent_states import AgentStateFile
from mir.runtime.loading import load_parts
from mir.runtime.prompting import PromptVariables
from mir.runtime.templates import JinjaPromptRenderer

FIXTURE = Path(__file__).parents[2] / "fixtures" / "runtime" / "project"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    return root


def variables(**changes) -> PromptVariables:
    base = dict(mission="m", input={"a": 1}, context={}, actions={}, schema={}, errors=[])
    return PromptVariables(**{**base, **changes})


def test_prompt_hash_changes_with_content_and_version_with_the_template(tmp_path: Path):
    template = tmp_path / "t.j2"
    template.write_text("{{ mission }} {{ input | tojson }} {{ errors | length }}")
    renderer = JinjaPromptRenderer(template, "2")
    one, two = renderer.render(variables()), renderer.render(variables(input={"a": 2}))
    assert one.messages[0].content == 'm {"a": 1} 0'
    assert one.hash != two.hash and one.version == two.version
    assert one.version.startswith("2+")
    template.write_text("changed {{ mission }}")
    assert JinjaPromptRenderer(template, "2").version != one.version


def test_an_undefined_variable_fails_loudly(tmp_path: Path):
    template = tmp_path / "t.j2"
    template.write_text("{{ missoin }}")
    with pytest.raises(ConfigError, match="missoin"):
        JinjaPromptRenderer(template, "1").render(variables())


def test_the_template_sandbox_blocks_python_internals(tmp_path: Path):
    template = tmp_path / "t.j2"
    template.write_text("{{ mission.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(ConfigError):
        JinjaPromptRenderer(template, "1").render(variables())


def test_template_syntax_error_names_file_and_line(tmp_path: Path):
    template = tmp_path / "t.j2"
    template.write_text("ok\n{% for x in %}")
    with pytest.raises(ConfigError, match=r"t\.j2:2"):
        JinjaPromptRenderer(template, "1")


def test_loading_the_fixture_agent_resolves_its_code(project: Path):
    parts = load_parts(project / "capabilities/refunds/agents/triage.yaml", project)
    assert parts.name == "refunds.triage"
    assert set(parts.executors) == {"refund", "deny", "escalate"}
    assert parts.context_loader is not None
    assert parts.decision_schema["title"] == "TriageDecision"
    assert parts.executors["refund"].__module__ == "capabilities.refunds.adapters"


def test_two_projects_in_one_process_do_not_share_user_code(project: Path, tmp_path: Path):
    other = tmp_path / "other"
    shutil.copytree(FIXTURE, other)
    first = load_parts(project / "capabilities/refunds/agents/triage.yaml", project)
    second = load_parts(other / "capabilities/refunds/agents/triage.yaml", other)
    assert Path(second.executors["refund"].__code__.co_filename).is_relative_to(other)
    assert Path(first.executors["refund"].__code__.co_filename).is_relative_to(project)


def test_an_import_error_in_user_code_names_the_file(project: Path):
    (project / "capabilities/refunds/adapters.py").write_text("import not_a_module_anywhere\n")
    with pytest.raises(ConfigError) as info:
        load_parts(project / "capabilities/refunds/agents/triage.yaml", project)
    assert "adapters.py" in str(info.value) and "not_a_module_anywhere" in str(info.value)


def test_a_missing_executor_names_the_field(project: Path):
    contract = project / "capabilities/refunds/agents/triage.yaml"
    contract.write_text(contract.read_text().replace("adapters:deny_refund", "adapters:nope"))
    with pytest.raises(ConfigError, match=r"actions\.deny\.executor: adapters has no 'nope'"):
        load_parts(contract, project)


def test_a_decision_model_that_is_not_pydantic_is_refused(project: Path):
    contract = project / "capabilities/refunds/agents/triage.yaml"
    contract.write_text(contract.read_text().replace("domain:TriageDecision", "adapters:escalate"))
    with pytest.raises(ConfigError, match="not a pydantic model"):
        load_parts(contract, project)


def test_agent_states_survive_a_new_reader(tmp_path: Path):
    states = AgentStateFile(tmp_path / "agents.json")
    assert not states.is_suspended("refunds.triage")
    states.set("refunds.triage", "suspended", reason="drift", by="ana")
    states.set("refunds.other", "active", reason=None, by="ana")
    again = AgentStateFile(tmp_path / "agents.json")
    assert again.is_suspended("refunds.triage") and not again.is_suspended("refunds.other")
    assert again.read()["refunds.triage"]["reason"] == "drift"


def test_a_corrupt_state_file_is_a_config_error(tmp_path: Path):
    (tmp_path / "agents.json").write_text("{nope")
    with pytest.raises(ConfigError, match="corrupt"):
        AgentStateFile(tmp_path / "agents.json").is_suspended("x")
