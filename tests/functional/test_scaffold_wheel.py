"""The built wheel ships the templates: a fresh venv with only the wheel's mir scaffolds.

Offline: the wheel is built with the dev venv's hatchling (no build isolation), installed
with ``--no-deps``, and the dependencies come from the dev venv through a ``.pth`` path
line (plain path lines do not run the editable-install finder, so the wheel's own
``mir`` is imported, which the test checks).
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.functional.scaffold_helpers import read_tree

pytestmark = pytest.mark.slow


def run(*args: str | Path, cwd: Path | None = None) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_the_wheel_scaffolds_with_its_own_templates(tmp_path, run_mir):
    dist = tmp_path / "dist"
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        REPO,
        "-w",
        dist,
    )
    (wheel,) = dist.glob("mir-*.whl")

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        wheel,
    )
    site = Path(
        run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    )
    (site / "dev-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    # cwd outside the repository: ``python -c`` puts the cwd first on sys.path.
    probe = run(
        python,
        "-c",
        "import mir, mir.scaffold.adapters as a; print(mir.__file__); "
        "print(a.builtin_template_root())",
        cwd=tmp_path,
    ).splitlines()
    assert Path(probe[0]).is_relative_to(site), probe
    assert Path(probe[1]) == site / "mir" / "_templates"

    from_wheel, from_repo = tmp_path / "from-wheel" / "shop", tmp_path / "from-repo" / "shop"
    mir = venv / "bin" / "mir"
    run(mir, "init", from_wheel, cwd=tmp_path)
    run(mir, "new", "capability", "desk", cwd=from_wheel)
    run(mir, "new", "agent", "desk", "triage", cwd=from_wheel)
    assert run_mir("init", str(from_repo)).returncode == 0
    assert run_mir("new", "capability", "desk", cwd=from_repo).returncode == 0
    assert run_mir("new", "agent", "desk", "triage", cwd=from_repo).returncode == 0
    files = read_tree(from_wheel)
    assert "capabilities/desk/agents/triage.yaml" in files
    assert files == read_tree(from_repo)
