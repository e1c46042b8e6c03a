"""Fixtures shared by the functional tests (a test file's own fixture of the same name wins)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

RUNTIME_PROJECT = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """A copy of the runtime fixture project (agent ``refunds.triage``) with its world:
    order A1 of 80 EUR, which the contract's context loader reads."""
    root = tmp_path / "app"
    shutil.copytree(RUNTIME_PROJECT, root)
    (root / "world.json").write_text(json.dumps({"A1": {"order_total": 80}}))
    return root
