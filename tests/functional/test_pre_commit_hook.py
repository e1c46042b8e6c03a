"""``.pre-commit-hooks.yaml`` through the real pre-commit: the manifest is valid, and the
hook it defines blocks a commit that breaks a boundary.

pre-commit would install ``language: python`` hooks from the repository with pip (a
network install), so the run uses the same hook definition as a ``repo: local`` hook
with ``language: system``, which runs the ``mir`` already installed here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pre_commit_clientlib = pytest.importorskip("pre_commit.clientlib")

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "lint"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _pre_commit(cwd: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_manifest_is_valid_for_pre_commit() -> None:
    hooks = pre_commit_clientlib.load_manifest(str(REPO / ".pre-commit-hooks.yaml"))
    assert [hook["id"] for hook in hooks] == ["mir-lint-boundaries"]
    assert hooks[0]["pass_filenames"] is False


def test_the_hook_fails_on_a_violation_and_passes_once_fixed(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    shutil.copytree(FIXTURES / "rules" / "MIR104", project)
    hook = pre_commit_clientlib.load_manifest(str(REPO / ".pre-commit-hooks.yaml"))[0]
    local = {
        key: hook[key]
        for key in ("id", "name", "entry", "pass_filenames", "files", "require_serial")
    }
    local["language"] = "system"
    config = {"repos": [{"repo": "local", "hooks": [local]}]}
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(project, "init", "-q")
    _git(project, "add", "-A")

    broken = _pre_commit(project, tmp_path)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "mir lint boundaries" in broken.stdout and "Failed" in broken.stdout
    assert "MIR104" in broken.stdout

    capability = project / "capabilities" / "refunds"
    (capability / "adapters.py").write_text("import duckdb\n")
    (capability / "application.py").write_text(
        "import json\nfrom capabilities.refunds.domain import Refund\n"
    )
    (capability / "domain.py").write_text(
        "import pydantic\n\n\nclass Refund(pydantic.BaseModel):\n    amount: int\n"
    )
    _git(project, "add", "-A")
    fixed = _pre_commit(project, tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout
