"""The user-written formats: loaders report file:line: field, and the models' rules hold."""

from __future__ import annotations

import textwrap

import pytest

from mir.contracts import (
    AgentContract,
    DecisionSpec,
    IntentDoc,
    json_schemas,
    load_contract,
    load_eval_suite,
    load_intent_doc,
)
from mir.errors import ConfigError

CONTRACT = """\
agent: triage
mission: Decide what happens to a support case.
decision:
  model: domain:TriageDecision
actions:
  reply:
    executor: adapters:triage_reply
  escalate:
    executor: adapters:triage_escalate
prompt: triage.j2
routes:
  - name: local
    provider: llama
    model: default
fallback:
  default:
    action: escalate
"""


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_valid_contract_loads_with_defaults(tmp_path):
    contract = load_contract(write(tmp_path, "triage.yaml", CONTRACT))
    assert contract.agent == "triage"
    assert contract.actions["reply"].roles == ["*"]
    assert contract.review.confidence_threshold == 0.7
    assert contract.retries == 2
    assert contract.fallback.default is not None


def test_malformed_yaml_names_file_and_line(tmp_path):
    path = write(tmp_path, "bad.yaml", "agent: triage\nmission: [unclosed\nprompt: x\n")
    with pytest.raises(ConfigError, match="invalid YAML") as info:
        load_contract(path)
    assert info.value.where is not None
    file, line = info.value.where.rsplit(":", 1)
    assert file == str(path)
    assert int(line) in (2, 3, 4)


def test_an_unknown_field_is_an_error_at_its_line(tmp_path):
    path = write(
        tmp_path, "t.yaml", CONTRACT.replace("prompt: triage.j2", "prompt: t.j2\nretry: 3")
    )
    with pytest.raises(ConfigError) as info:
        load_contract(path)
    assert info.value.where == f"{path}:11"
    assert info.value.message == "retry: unknown key (did you mean `retries`?)"


def test_a_typo_in_a_required_field_reports_both_problems(tmp_path):
    path = write(tmp_path, "t.yaml", CONTRACT.replace("prompt: triage.j2", "promt: triage.j2"))
    with pytest.raises(ConfigError) as info:
        load_contract(path)
    # the typo first (the cause), then what it leads to, each at its own line
    assert info.value.where == f"{path}:10"
    assert info.value.message == "promt: unknown key (did you mean `prompt`?) (+1 more)"
    assert str(info.value).splitlines() == [
        f"{path}:10: promt: unknown key (did you mean `prompt`?)",
        f"{path}:1: prompt: Field required",
    ]


def test_a_wrong_type_names_the_nested_field_and_its_line(tmp_path):
    text = CONTRACT.replace("  - name: local\n", "  - name: local\n    temperature: hot\n")
    path = write(tmp_path, "t.yaml", text)
    with pytest.raises(ConfigError) as info:
        load_contract(path)
    assert info.value.where == f"{path}:13"
    assert info.value.message.startswith("routes.0.temperature:")


def test_a_missing_required_field_is_reported(tmp_path):
    path = write(tmp_path, "t.yaml", CONTRACT.replace("prompt: triage.j2\n", ""))
    with pytest.raises(ConfigError, match="prompt: Field required"):
        load_contract(path)


def test_a_fallback_naming_an_unknown_action_is_refused(tmp_path):
    path = write(tmp_path, "t.yaml", CONTRACT.replace("action: escalate", "action: refund"))
    with pytest.raises(ConfigError, match="fallback rule uses unknown action 'refund'"):
        load_contract(path)


def test_a_yaml_list_at_the_top_is_not_a_contract(tmp_path):
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_contract(write(tmp_path, "t.yaml", "- a\n- b\n"))


def test_a_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_contract(tmp_path / "nope.yaml")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "exactly one of"),
        ({"model": "domain:X", "json_schema": {}}, "exactly one of"),
        ({"model": "TriageDecision"}, "module:Class"),
    ],
)
def test_decision_spec_needs_one_source(spec, message):
    with pytest.raises(ValueError, match=message):
        DecisionSpec.model_validate(spec)


def test_ensemble_routes_must_exist():
    data = {
        "agent": "a",
        "mission": "m",
        "decision": {"model": "domain:D"},
        "prompt": "a.j2",
        "actions": {"x": {"executor": "adapters:x"}},
        "routes": [{"name": "one", "provider": "scripted"}],
        "ensemble": {"routes": ["one", "two"]},
    }
    with pytest.raises(ValueError, match="ensemble names unknown routes: \\['two'\\]"):
        AgentContract.model_validate(data)


def test_intent_doc_front_matter_loads(tmp_path):
    path = write(
        tmp_path,
        "CLAUDE.md",
        "---\ncapability: refunds\ndepends_on: [customers]\npublic: [Refund]\n"
        "forbidden: {domain: [litellm]}\nlayers: {rules: domain}\n---\n# refunds\n",
    )
    doc = load_intent_doc(path)
    assert doc == IntentDoc(
        capability="refunds",
        depends_on=["customers"],
        public=["Refund"],
        forbidden={"domain": ["litellm"]},
        layers={"rules": "domain"},
    )


def test_intent_doc_without_front_matter(tmp_path):
    with pytest.raises(ConfigError, match="no front matter") as info:
        load_intent_doc(write(tmp_path, "CLAUDE.md", "# just prose\n"))
    assert info.value.where.endswith("CLAUDE.md:1")


def test_intent_doc_with_unclosed_front_matter(tmp_path):
    with pytest.raises(ConfigError, match="never closed") as info:
        load_intent_doc(write(tmp_path, "CLAUDE.md", "---\ncapability: x\n# prose\n"))
    assert info.value.where.endswith("CLAUDE.md:1")


def test_intent_doc_errors_point_at_the_file_line(tmp_path):
    path = write(tmp_path, "CLAUDE.md", "---\ncapability: refunds\nforbidden: {infra: [x]}\n---\n")
    with pytest.raises(ConfigError) as info:
        load_intent_doc(path)
    assert info.value.where == f"{path}:3"
    assert info.value.message.startswith("forbidden.infra")


def test_intent_doc_rejects_a_keyword_as_capability(tmp_path):
    path = write(tmp_path, "CLAUDE.md", "---\ncapability: class\n---\n")
    with pytest.raises(ConfigError, match="not a valid Python identifier") as info:
        load_intent_doc(path)
    assert info.value.where == f"{path}:2"


def test_malformed_front_matter_yaml_is_reported_at_the_file_line(tmp_path):
    path = write(tmp_path, "CLAUDE.md", "---\ncapability: x\npublic: [a\n---\n")
    with pytest.raises(ConfigError, match="invalid YAML") as info:
        load_intent_doc(path)
    assert info.value.where.startswith(f"{path}:")


def test_eval_suite_loads_and_rejects_unknown_keys(tmp_path):
    suite = load_eval_suite(
        write(tmp_path, "e.yaml", "agent: triage\ncases:\n  - id: a\n    input: {x: 1}\n")
    )
    assert suite.cases[0].role == "agent"
    path = write(tmp_path, "f.yaml", "agent: triage\ncases:\n  - id: a\n    inputs: {}\n")
    with pytest.raises(ConfigError) as info:
        load_eval_suite(path)
    # the unknown key at its own line first, then the missing one at its item's line
    assert info.value.where == f"{path}:4"
    assert str(info.value).splitlines() == [
        f"{path}:4: cases.0.inputs: unknown key (did you mean `input`?)",
        f"{path}:3: cases.0.input: Field required",
    ]


def test_json_schemas_cover_every_format():
    schemas = json_schemas()
    assert sorted(schemas) == [
        "agent-contract.schema.json",
        "eval-suite.schema.json",
        "intent-doc.schema.json",
        "tool-mir.schema.json",
    ]
    assert schemas["agent-contract.schema.json"]["additionalProperties"] is False
