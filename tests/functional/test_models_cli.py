"""`mir models`: register / list / show / promote / rollback / retire / history end to end,
the promotion gate (the agents' eval suites against the new version), and bad input
(one line, exit 2, models.toml byte-for-byte unchanged)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.tiny_gguf import write_tiny_gguf

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
CONTRACT = Path("capabilities/refunds/agents/triage.yaml")


@pytest.fixture
def desk(tmp_path: Path, tiny_gguf: Path) -> Path:
    """The support_desk example and two GGUF files (its route still says ``default``)."""
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir"))
    (root / "models").mkdir()
    shutil.copy(tiny_gguf, root / "models" / "a.gguf")
    write_tiny_gguf(root / "models" / "b.gguf", seed=1)
    return root


def _setup(run_mir, root: Path) -> None:
    for version, file in (("1", "a"), ("2", "b")):
        done = run_mir(
            "models",
            "register",
            "qwen",
            version,
            "--artifact",
            f"models/{file}.gguf",
            "--by",
            "ana",
            cwd=root,
        )
        assert done.returncode == 0, done.stderr
    done = run_mir(
        "models",
        "promote",
        "qwen",
        "1",
        "--to",
        "production",
        "--by",
        "ana",
        cwd=root,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Only now does a route name qwen: version 1 went to production without a gate (fast);
    # later promotions to production run the triage suite.
    contract = root / CONTRACT
    contract.write_text(contract.read_text().replace("model: default", "model: qwen"))


def _history(run_mir, root: Path) -> list[dict]:
    done = run_mir("models", "history", "qwen", "--format", "json", cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_register_promote_rollback_and_history_end_to_end(run_mir, desk):
    _setup(run_mir, desk)
    text = (desk / "models.toml").read_text()
    assert 'sha256 = "' in text
    # A comment a reviewer added survives every later edit.
    (desk / "models.toml").write_text(
        "# reviewed by bo\n" + text.replace('name = "qwen"', 'name = "qwen"  # the small one', 1)
    )
    listed = json.loads(run_mir("models", "list", "--format", "json", cwd=desk).stdout)
    assert [(e["version"], e["stage"]) for e in listed] == [("1", "production"), ("2", "candidate")]

    done = run_mir("models", "promote", "qwen", "2", "--to", "canary", "--share", "0.2", cwd=desk)
    assert done.returncode == 0, done.stderr
    done = run_mir(
        "models",
        "promote",
        "qwen",
        "2",
        "--to",
        "production",
        "--why",
        "better",
        "--responses",
        "responses/eval-triage.jsonl",
        "--force",  # a replayed gate tested recorded answers, not qwen@2
        cwd=desk,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gate: passed" in done.stdout
    assert "qwen@2 is now production (forced on a replayed gate)" in done.stdout
    shown = run_mir("models", "show", "qwen", cwd=desk).stdout
    assert "qwen@2  [production]" in shown and "qwen@1  [candidate]" in shown
    assert "share" not in (desk / "models.toml").read_text()

    done = run_mir("models", "rollback", "qwen", "--why", "worse", cwd=desk)
    assert done.returncode == 0, done.stderr
    listed = json.loads(run_mir("models", "list", "--format", "json", cwd=desk).stdout)
    assert [(e["version"], e["stage"]) for e in listed] == [("1", "production"), ("2", "candidate")]
    text = (desk / "models.toml").read_text()
    assert "# reviewed by bo" in text and "# the small one" in text

    moves = [(h["version"], h["from_stage"], h["to_stage"]) for h in _history(run_mir, desk)]
    assert moves[-2:] == [("2", "production", "candidate"), ("1", "candidate", "production")]
    assert ("2", "candidate", "canary") in moves
    assert "worse" in run_mir("models", "history", "qwen", cwd=desk).stdout


def test_the_gate_refuses_a_version_that_fails_the_suite_and_force_records_it(run_mir, desk):
    _setup(run_mir, desk)
    # planted with the prompt edit's answers: the review rule's limit raised to 500 EUR,
    # so three expensive refunds are paid without a human (one case critical)
    contract = desk / CONTRACT
    rule = '{field: decision.amount, op: ">", value: 100}'
    assert rule in contract.read_text()
    contract.write_text(contract.read_text().replace(rule, rule.replace("100", "500")))
    before = (desk / "models.toml").read_bytes()
    planted = (
        "models",
        "promote",
        "qwen",
        "2",
        "--to",
        "production",
        "--responses",
        "responses/eval-prompt-edit.jsonl",
    )
    done = run_mir(*planted, cwd=desk)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gate: FAILED" in done.stdout and "not promoted" in done.stdout
    assert (desk / "models.toml").read_bytes() == before
    assert _history(run_mir, desk)[-1]["to_stage"] == "refused"

    done = run_mir(*planted, "--force", "--why", "hotfix", cwd=desk)
    assert done.returncode == 0, done.stdout + done.stderr
    last = _history(run_mir, desk)[-1]
    assert (last["version"], last["to_stage"], last["forced"]) == ("2", "production", True)
    assert last["gate"]["passed"] is False and last["gate"]["agents"] == ["refunds.triage"]


def test_no_agent_uses_the_model_promotes_without_a_gate(run_mir, desk):
    run_mir("models", "register", "other", "1", "--artifact", "models/a.gguf", cwd=desk)
    done = run_mir("models", "promote", "other", "1", "--to", "production", cwd=desk)
    assert done.returncode == 0, done.stderr
    assert "no gate to run" in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("models", "register", "qwen", "2", "--artifact", "models/b.gguf"),  # duplicate
        ("models", "register", "qwen", "3", "--artifact", "models/missing.gguf"),
        ("models", "promote", "qwen", "2", "--to", "canary", "--share", "1.5"),
        ("models", "promote", "qwen", "2", "--to", "canary", "--share", "0"),
        ("models", "promote", "qwen", "0", "--to", "shadow"),  # retired
        ("models", "promote", "qwen", "0", "--to", "production"),  # retired: no gate run
        ("models", "promote", "nope", "1", "--to", "shadow"),
        ("models", "rollback", "qwen"),  # nothing to roll back to
    ],
)
def test_bad_input_is_one_line_exit_2_and_the_file_unchanged(run_mir, desk, args):
    _setup(run_mir, desk)
    done = run_mir("models", "register", "qwen", "0", "--artifact", "models/a.gguf", cwd=desk)
    assert done.returncode == 0, done.stderr
    assert run_mir("models", "retire", "qwen", "0", cwd=desk).returncode == 0
    before = (desk / "models.toml").read_bytes()
    done = run_mir(*args, cwd=desk)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert (desk / "models.toml").read_bytes() == before


def test_a_malformed_registry_is_one_line_and_unchanged(run_mir, desk):
    _setup(run_mir, desk)
    path = desk / "models.toml"
    path.write_text(path.read_text() + "\n[[models]\n")
    before = path.read_bytes()
    for args in (("list",), ("promote", "qwen", "2", "--to", "shadow")):
        done = run_mir("models", *args, cwd=desk)
        assert done.returncode == 2 and "models.toml:" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert path.read_bytes() == before


def test_an_unknown_model_in_a_route_is_refused_at_load(run_mir, desk):
    _setup(run_mir, desk)
    contract = desk / CONTRACT
    contract.write_text(contract.read_text().replace("model: qwen", "model: llama3"))
    before = (desk / "models.toml").read_bytes()
    done = run_mir("run", "agent", "refunds.triage", "-i", "@inputs/damaged_mug.json", cwd=desk)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "unknown model 'llama3'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert (desk / "models.toml").read_bytes() == before


def test_a_locked_or_corrupt_history_leaves_models_toml_unchanged(run_mir, desk):
    _setup(run_mir, desk)
    (desk / ".mir" / "models.duckdb").write_bytes(b"not a database" * 500)
    for wal in (desk / ".mir").glob("models.duckdb.wal"):
        wal.unlink()
    before = (desk / "models.toml").read_bytes()
    done = run_mir("models", "promote", "qwen", "2", "--to", "shadow", cwd=desk)
    assert done.returncode == 2 and "model history" in done.stderr, done.stderr
    assert (desk / "models.toml").read_bytes() == before


def test_mir_schema_publishes_the_registry_format_and_it_accepts_a_written_file(run_mir, desk):
    import tomllib

    import jsonschema

    _setup(run_mir, desk)
    done = run_mir("schema", "models-registry.schema.json", cwd=desk)
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    jsonschema.validate(tomllib.loads((desk / "models.toml").read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"models": [{"name": "x", "version": "1", "oops": 1}]}, schema)


def test_register_queue_sizes_the_versions_queue_and_a_negative_one_is_refused(run_mir, desk):
    done = run_mir(
        "models", "register", "qwen", "1", "--artifact", "models/a.gguf", "--queue", "2", cwd=desk
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(run_mir("models", "list", "--format", "json", cwd=desk).stdout)
    assert listed[0]["queue"] == 2
    before = (desk / "models.toml").read_bytes()
    done = run_mir(
        "models", "register", "qwen", "2", "--artifact", "models/b.gguf", "--queue", "-1", cwd=desk
    )
    assert done.returncode == 2 and "queue" in done.stderr and "Traceback" not in done.stderr
    assert (desk / "models.toml").read_bytes() == before


def test_a_llama_artifact_that_is_not_a_gguf_file_is_refused(run_mir, desk):
    (desk / "secrets.env").write_text("KEY=1\n")
    done = run_mir("models", "register", "qwen", "1", "--artifact", "secrets.env", cwd=desk)
    assert done.returncode == 2 and ".gguf file" in done.stderr
    assert not (desk / "models.toml").exists()
