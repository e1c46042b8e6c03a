"""The wheel ships the judge: ``mir/_capabilities/judge`` is in it, and ``judge_home``
finds it there when mir runs from the unpacked wheel (the repository's folder otherwise)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mir.evals.judge_identity import judge_home, judge_prompt_hash
from tests.conftest import REPO

pytestmark = pytest.mark.slow


def test_the_wheel_ships_the_judge_and_finds_it(tmp_path: Path):
    dist = tmp_path / "dist"
    build = ["pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(REPO)]
    subprocess.run(
        [sys.executable, "-m", *build, "-w", str(dist)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = dist.glob("mir-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for part in (
        "agents/grade.yaml",
        "agents/grade.j2",
        "agents/compare.yaml",
        "agents/compare.j2",
    ):
        assert f"mir/_capabilities/judge/{part}" in names
    assert "mir/_capabilities/judge/domain.py" in names
    assert not any(name.startswith("capabilities/") for name in names)  # never top-level

    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import mir, mir.evals.judge_identity as j; "
            "print(mir.__file__); print(j.judge_home()); print(j.judge_prompt_hash())",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(unpacked)},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.splitlines()
    assert Path(probe[0]).is_relative_to(unpacked), probe
    assert Path(probe[1]) == unpacked / "mir" / "_capabilities" / "judge"
    # the same judge whether shipped or checked out: calibrations carry over
    assert probe[2] == judge_prompt_hash()
    assert judge_home() == REPO / "capabilities" / "judge"
