"""``mir doctor`` on a copy of examples/support_desk: healthy exits 0; a tampered
registry model, a broken contract and chromium missing exit 1, all three named (table
and --json); a planted key's value never appears; outside a project it still runs."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
CONTRACT = "capabilities/refunds/agents/triage.yaml"
SECRET = "sk-doctor-planted-7f3a9c1e5b2d4a6f8e0c"
NO_CHROMIUM = {"PATH": "/nonexistent-doctor-bin"}  # mir runs by its absolute path


@pytest.fixture
def desk(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", ".ruff_cache"))
    return root


def register_tiny_model(root: Path) -> Path:
    """A registry entry pinning a small file's sha256, as `mir models register` records."""
    model = root / "models" / "tiny.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF" + bytes(range(256)) * 8)
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    (root / "models.toml").write_text(
        "[[models]]\n"
        'name = "tiny"\nversion = "1"\nstage = "candidate"\nprovider = "llama"\n'
        f'artifact = "models/tiny.gguf"\nsha256 = "{digest}"\n'
    )
    return model


def add_openai_route(root: Path) -> None:
    contract = root / CONTRACT
    text = contract.read_text()
    route = "routes:\n  - name: remote\n    provider: litellm\n    model: openai/gpt-4o-mini\n"
    contract.write_text(text.replace("routes:\n", route, 1))


def checks(result) -> dict[str, dict]:
    return {check["name"]: check for check in json.loads(result.stdout)["checks"]}


def test_a_healthy_project_exits_0_and_json_has_one_entry_per_check(run_mir, desk: Path):
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        pytest.skip("chromium not installed (`apt-get install -y chromium`)")
    register_tiny_model(desk)
    table = run_mir("doctor", cwd=desk)
    assert table.returncode == 0, table.stdout + table.stderr
    assert "0 problem(s)" in table.stdout
    result = run_mir("doctor", "--json", cwd=desk)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    names = [check["name"] for check in report["checks"]]
    assert len(names) == len(set(names))  # one entry per check
    for name in ("python", "chromium", "project", "models.toml", "model tiny@1", "store"):
        assert report_status(report, name) == "ok", report
    assert report["ok"] is True
    # the table has one row per JSON entry (plus its header and the summary)
    rows = [line for line in table.stdout.splitlines() if line.strip()]
    assert len(rows) == len(names) + 2


def report_status(report: dict, name: str) -> str | None:
    return next((c["status"] for c in report["checks"] if c["name"] == name), None)


def test_tampered_model_broken_contract_and_no_chromium_exit_1_naming_each(run_mir, desk):
    model = register_tiny_model(desk)
    model.write_bytes(model.read_bytes()[:-1] + b"X")  # same size, other bytes
    contract = desk / CONTRACT
    contract.write_text(contract.read_text().replace("mission:", "misison:", 1))
    table = run_mir("doctor", cwd=desk, env=NO_CHROMIUM)
    assert table.returncode == 1, table.stdout + table.stderr
    out = " ".join(table.stdout.split())
    assert "models/tiny.gguf" in out and "expected" in out
    assert "triage.yaml" in out and "misison" in out and "line " in out
    assert "apt-get install -y chromium" in out
    result = run_mir("doctor", "--json", cwd=desk, env=NO_CHROMIUM)
    assert result.returncode == 1
    found = checks(result)
    assert found["model tiny@1"]["status"] == "problem"
    assert "tiny.gguf" in found["model tiny@1"]["found"]
    broken = [c for n, c in found.items() if n.startswith("contract ")]
    assert broken and broken[0]["status"] == "problem" and "misison" in broken[0]["found"]
    assert found["chromium"]["status"] == "problem"
    assert found["chromium"]["fix"] == "apt-get install -y chromium"


def test_a_planted_key_is_said_present_and_its_value_never_printed(run_mir, desk: Path):
    add_openai_route(desk)
    env = {"OPENAI_API_KEY": SECRET}
    table = run_mir("doctor", cwd=desk, env=env)
    result = run_mir("doctor", "--json", cwd=desk, env=env)
    for run in (table, result):
        assert SECRET not in run.stdout + run.stderr
        assert SECRET[:12] not in run.stdout + run.stderr
    assert checks(result)["key OPENAI_API_KEY"]["status"] == "ok"
    assert "present" in checks(result)["key OPENAI_API_KEY"]["found"]
    missing = run_mir("doctor", "--json", cwd=desk, env={"OPENAI_API_KEY": ""})
    assert missing.returncode == 1
    assert checks(missing)["key OPENAI_API_KEY"]["status"] == "problem"


def test_outside_a_project_the_machine_checks_run_and_say_no_project(run_mir, tmp_path):
    result = run_mir("doctor", "--json", cwd=tmp_path, env=NO_CHROMIUM)
    found = checks(result)
    assert found["project"]["status"] == "warn"
    assert "python" in found and "chromium" in found
    assert "store" not in found
    assert result.returncode == 1  # chromium missing is the one problem


def test_usage_errors_exit_2(run_mir, tmp_path: Path):
    assert run_mir("doctor", "--format", "yaml", cwd=tmp_path).returncode == 2
    assert run_mir("doctor", "--project", str(tmp_path / "none"), cwd=tmp_path).returncode == 2


def test_a_lock_another_process_holds_is_a_warning_naming_it(run_mir, desk: Path):
    from mir.storage import file_lock

    lock = desk / ".mir" / "traces" / "traces.lock"
    with file_lock(lock) as held:
        assert held
        result = run_mir("doctor", "--json", cwd=desk)
    locks = checks(result)["locks"]
    assert locks["status"] == "warn"
    assert ".mir/traces/traces.lock" in locks["found"]
    assert checks(run_mir("doctor", "--json", cwd=desk))["locks"]["status"] == "ok"


def test_an_unreachable_fleet_store_is_a_problem_and_contracts_are_still_read(run_mir, desk):
    contract = desk / CONTRACT
    contract.write_text(contract.read_text().replace("mission:", "misison:", 1))
    env = {"MIR_STORE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    result = run_mir("doctor", "--json", cwd=desk, env=env)
    assert result.returncode == 1
    found = checks(result)
    assert found["store"]["status"] == "problem"
    assert "unreachable" in found["store"]["found"]
    assert "misison" in found["contract refunds.triage"]["found"]
    assert "error connecting" not in result.stderr  # the pool's retries are not printed
