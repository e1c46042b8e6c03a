"""The locks built on ``file_lock`` still refuse in one line when another process holds
them past their wait: a review of the same flow, and an edit of ``models.toml``."""

from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mir.errors import ConfigError, UsageError
from mir.models import locking
from mir.runtime import resuming

_HOLDER = """
import sys, time
from pathlib import Path
from mir.storage import file_lock
with file_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def _held(path: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_a_review_waits_then_says_the_flow_is_being_reviewed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resuming, "LOCK_WAIT_S", 0.2)
    name = hashlib.sha256(b"flow-1").hexdigest()[:32]
    child = _held(tmp_path / "reviews" / f"{name}.lock")
    try:
        refused = pytest.raises(UsageError, match="flow flow-1 is being reviewed by another")
        with refused, resuming.flow_lock(tmp_path, "flow-1"):
            pass
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    with resuming.flow_lock(tmp_path, "flow-1"):  # the dead holder's lock is gone
        pass


def test_a_registry_edit_waits_then_refuses_and_reenters_in_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(locking, "LOCK_WAIT_S", 0.2)
    child = _held(tmp_path / locking.LOCK_FILE)
    try:
        refused = pytest.raises(ConfigError, match="another `mir models` edit has held")
        with refused, locking.editing_lock(tmp_path):
            pass
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    with locking.editing_lock(tmp_path), locking.editing_lock(tmp_path):
        pass


def test_a_registry_lock_that_cannot_be_created_is_one_config_error(tmp_path: Path) -> None:
    (tmp_path / ".mir").write_text("a file where the folder should be")
    refused = pytest.raises(ConfigError, match="cannot open the registry's edit lock")
    with refused, locking.editing_lock(tmp_path):
        pass
