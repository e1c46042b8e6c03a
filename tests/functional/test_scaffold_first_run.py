"""A fresh `mir new agent` a newcomer can trust: token-probability confidence, a schema
whose title the model cannot echo into the reason, action names that are only names, and
a `reply` that carries its message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mir.contracts import load_contract

BIN = Path(sys.executable).parent


@pytest.fixture
def shop(run_mir, tmp_path):
    root = tmp_path / "shop"
    assert run_mir("init", str(root)).returncode == 0
    assert run_mir("new", "capability", "support_desk", cwd=root).returncode == 0
    return root


def agent_files(shop: Path) -> Path:
    return shop / "capabilities" / "support_desk"


def test_the_local_route_takes_confidence_from_token_probabilities(run_mir, shop):
    assert run_mir("new", "agent", "support_desk", "triage", cwd=shop).returncode == 0
    contract = load_contract(agent_files(shop) / "agents" / "triage.yaml")
    assert contract.decision.confidence_source == "logprobs"
    shown = run_mir(
        "run",
        "agent",
        "support_desk.triage",
        "--show-prompt",
        "--input",
        json.dumps({"id": "c1", "summary": "?"}),
        cwd=shop,
    )
    assert shown.returncode == 0, shown.stderr
    # The schema's title is what SmolLM2 echoed as its reason: the prompt shows examples
    # of answers instead of the raw schema, reason first.
    assert "TriageDecision" not in shown.stdout
    assert '{"reason": "' in shown.stdout
    assert '"summary": "?"' in shown.stdout


@pytest.mark.parametrize("action", ["json", "email", "class", "domain"])
def test_an_action_named_like_a_module_or_keyword_is_only_a_name(run_mir, shop, action):
    result = run_mir("new", "agent", "support_desk", "triage", "--action", action, cwd=shop)
    assert result.returncode == 0, result.stderr
    contract = load_contract(agent_files(shop) / "agents" / "triage.yaml")
    assert list(contract.actions) == [action, "escalate"]
    tests = subprocess.run(
        [str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=shop,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert run_mir("lint", "boundaries", str(shop)).returncode == 0


def test_reply_carries_a_body_to_its_executor(run_mir, shop):
    assert (
        run_mir("new", "agent", "support_desk", "triage", "-a", "reply", cwd=shop).returncode == 0
    )
    code = (
        "from capabilities.support_desk.domain import TriageDecision as D\n"
        "from capabilities.support_desk.adapters import triage_reply as r\n"
        "import json\n"
        "d = D(reason='a clear question', action='reply', confidence=0.9, body='Hi')\n"
        "p = d.model_dump(exclude={'action', 'confidence'})\n"
        "print(json.dumps([list(D.model_json_schema()['properties']),"
        " r(p, idempotency_key='k')]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=shop, capture_output=True, text=True, check=True
    )
    fields, receipt = json.loads(out.stdout)
    assert fields == ["reason", "action", "confidence", "body"]
    assert receipt["body"] == "Hi" and receipt["idempotency_key"] == "k"


def test_the_yaml_files_name_a_schema_the_project_has(run_mir, shop):
    assert run_mir("new", "agent", "support_desk", "triage", cwd=shop).returncode == 0
    for path, name in (
        ("agents/triage.yaml", "agent-contract.schema.json"),
        ("evals/triage.yaml", "eval-suite.schema.json"),
    ):
        target = agent_files(shop) / path
        first = target.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), first
        schema = (target.parent / first.split("$schema=", 1)[1]).resolve()
        assert schema == (shop / "schemas" / name).resolve()
        assert schema.read_text() == run_mir("schema", name, cwd=shop).stdout
    # a second agent keeps them (and a project's own edits of them)
    (shop / "schemas" / "eval-suite.schema.json").write_text("{}\n")
    assert run_mir("new", "agent", "support_desk", "followup", cwd=shop).returncode == 0
    assert (shop / "schemas" / "eval-suite.schema.json").read_text() == "{}\n"


# The JSON around the strings: keys, quotes, the action name, a confidence like 0.86.
JSON_AROUND = 40


@pytest.mark.parametrize("actions", [(), ("-a", "reply", "-a", "escalate")])
def test_the_local_route_budget_covers_every_bounded_string(run_mir, shop, actions):
    # llama.cpp's grammar closes a string at its maxLength; a token budget below the
    # strings' bounds cuts the JSON first (a 160-character reason and a 400-character
    # body do not fit the default 256 tokens)
    made = run_mir("new", "agent", "support_desk", "triage", *actions, cwd=shop)
    assert made.returncode == 0, made.stderr
    code = (
        "from capabilities.support_desk.domain import TriageDecision as D\n"
        "import json\n"
        "print(json.dumps(D.model_json_schema()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=shop, capture_output=True, text=True, check=True
    )
    properties = json.loads(out.stdout)["properties"].values()
    bounded = sum(p.get("maxLength", 0) for p in properties if p.get("type") == "string")
    assert bounded >= 160
    [route] = load_contract(agent_files(shop) / "agents" / "triage.yaml").routes
    assert route.max_tokens >= bounded + JSON_AROUND, (route.max_tokens, bounded)
