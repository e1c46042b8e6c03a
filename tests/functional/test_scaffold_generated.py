"""A freshly scaffolded project is clean: ruff, its own tests and mir's boundary rules.

Several capabilities and agents, with names chosen to stress the generated import
order (digits, a name sorting before/after ``InMemory...``), in one project.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


def test_a_scaffolded_project_passes_ruff_and_its_own_tests(run_mir, tmp_path):
    root = tmp_path / "shop"
    steps = [
        ("init", str(root)),
        ("new", "capability", "support-desk"),
        ("new", "agent", "support_desk", "triage", "-a", "reply", "-a", "refund_order"),
        ("new", "agent", "support_desk", "followup"),
        ("new", "capability", "accounts2"),
        ("new", "agent", "accounts2", "zebra_router", "--action", "approve10"),
    ]
    for step in steps:
        result = run_mir(*step, cwd=root if step[0] != "init" else tmp_path)
        assert result.returncode == 0, (step, result.stderr)

    check = run([str(BIN / "ruff"), "check", "--no-cache", "."], root)
    assert check.returncode == 0, check.stdout + check.stderr
    formatted = run([str(BIN / "ruff"), "format", "--check", "--no-cache", "."], root)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    tests = run([str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"], root)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    lint = run_mir("lint", "boundaries", str(root))
    assert lint.returncode == 0, lint.stdout + lint.stderr

    # 3 per capability, 4 + one per executor per agent: 6 + 7 + 6 + 6. A test module
    # that is silently not collected (a package missing its __init__) shows up here.
    assert "25 passed" in tests.stdout, tests.stdout
