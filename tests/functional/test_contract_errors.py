"""A contract typo shows its cause: every problem on its own line, with its own line number,
and the closest known key; the contract's own fallback decisions are checked at load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"
INPUT = json.dumps({"order_id": "A1", "amount": 40, "message": "broken"})


def edit(root: Path, old: str, new: str) -> Path:
    contract = root / "capabilities/refunds/agents/triage.yaml"
    text = contract.read_text()
    assert old in text
    contract.write_text(text.replace(old, new, 1))
    return contract


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def run_rules(run_mir, root: Path):
    return run_mir(
        "run", "agent", "refunds.triage", "-i", INPUT, "--provider", "rules", "--json", cwd=root
    )


def test_a_misspelt_key_is_named_with_the_key_it_should_be(run_mir, app: Path):
    contract = edit(app, "actions:", "actoins:")
    result = run_rules(run_mir, app)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    typo = line_of(contract, "actoins:")
    assert lines[0] == (f"error: {contract}:{typo}: actoins: unknown key (did you mean `actions`?)")
    assert lines[1] == f"error: {contract}:1: actions: Field required"
    assert len(lines) == 2


def test_every_problem_gets_its_own_line(run_mir, app: Path):
    contract = edit(app, "retries: 2", "retries: many\nretires: 3")
    edit(app, "    max_tokens: 96", "    max_tokns: 96")
    lines = run_rules(run_mir, app).stderr.strip().splitlines()
    assert lines == [
        f"error: {contract}:{line_of(contract, 'retires:')}: retires: unknown key "
        "(did you mean `retries`?)",
        f"error: {contract}:{line_of(contract, 'max_tokns')}: routes.0.max_tokns: unknown key "
        "(did you mean `max_tokens`?)",
        f"error: {contract}:{line_of(contract, 'retries: many')}: retries: "
        "Input should be a valid integer, unable to parse string as an integer",
    ]


def test_a_fallback_param_that_is_not_a_decision_field_fails_at_load(run_mir, app: Path):
    contract = edit(app, 'reason: "fallback: no valid model decision"', 'reasn: "fallback"')
    result = run_rules(run_mir, app)
    assert result.returncode == 2, result.stdout
    lines = result.stderr.strip().splitlines()
    assert lines[0] == (
        f"error: {contract}:{line_of(contract, 'reasn:')}: fallback.default.params.reasn: "
        "not a field of the decision (did you mean `reason`?)"
    )
    assert "fallback.default.params: reason: Field required" in lines[1]
    assert not (app / "executed.jsonl").exists()


def test_a_fallback_value_over_its_actions_limit_fails_at_load(run_mir, app: Path):
    contract = edit(app, "params: {amount: $input.amount,", "params: {amount: 9000,")
    result = run_rules(run_mir, app)
    assert result.returncode == 2, result.stdout
    assert (
        f"{contract}:{line_of(contract, 'amount: 9000')}: fallback.rules.0.params.amount: "
        "9000 is above the maximum 500.0"
    ) in result.stderr


def test_references_to_the_input_are_checked_per_decision(run_mir, app: Path):
    # `$input.amount` has no value at load: the fixture's rule loads and decides
    record = json.loads(run_rules(run_mir, app).stdout)
    assert record["status"] == "fallback" or record["status"] == "pending_review"


def test_an_intent_doc_typo_is_named_too(run_mir, tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.mir]\n')
    cap = tmp_path / "capabilities" / "orders"
    cap.mkdir(parents=True)
    (tmp_path / "capabilities" / "__init__.py").write_text("")
    (cap / "__init__.py").write_text("")
    (cap / "CLAUDE.md").write_text("---\ncapability: orders\ndepend_on: []\n---\n# orders\n")
    result = run_mir("lint", "boundaries", "--no-cache", cwd=tmp_path)
    # lint reports a broken intent doc as a finding (exit 1), with the same message
    assert result.returncode == 1, result.stderr
    assert "CLAUDE.md:3:1: MIR202 depend_on: unknown key (did you mean `depends_on`?)" in (
        result.stdout
    )


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('[tool.mir]\ncapabilites = "capabilities"\n',
         "tool.mir.capabilites: unknown key (did you mean `capabilities`?)"),
        ("[tool.mir]\n[tool.mir.traces]\nfsnc = true\n",
         "tool.mir.traces.fsnc: unknown key (did you mean `fsync`?)"),
    ],
)  # fmt: skip
def test_a_settings_typo_names_the_key_it_should_be(run_mir, tmp_path: Path, table, expected):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n' + table)
    result = run_mir("traces", "list", cwd=tmp_path)
    assert result.returncode == 2
    assert expected in result.stderr and len(result.stderr.strip().splitlines()) == 1
