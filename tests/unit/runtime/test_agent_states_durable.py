"""``agents.json`` (a suspension the breaker wrote) survives a power cut: fsynced, then
renamed, then its folder fsynced; concurrent writers never lose each other's change."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from mir.runtime.agent_states import AgentStateFile
from mir.storage import atomic as atomic_module


def test_a_suspension_is_fsynced_before_and_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))))
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        events.append(("replace", os.path.basename(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(atomic_module.os, "fsync", fsync)
    monkeypatch.setattr(atomic_module.os, "replace", replace)
    states = AgentStateFile(tmp_path / "state" / "agents.json")
    states.set("refunds", "suspended", reason="drift", by="mir")
    monkeypatch.undo()
    kinds = [kind for kind, _ in events]
    assert kinds == ["fsync", "replace", "fsync"]
    assert events[0][1].startswith(".agents.json.")  # the temp file, before it counts
    assert events[1][1] == "agents.json"
    assert events[2][1] == "state"  # the folder: the rename itself is durable
    assert states.is_suspended("refunds")
    assert sorted(p.name for p in (tmp_path / "state").iterdir()) == [
        "agents.json",
        "agents.json.lock",
    ]


def test_a_failed_write_keeps_the_old_states_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    states = AgentStateFile(tmp_path / "agents.json")
    states.set("refunds", "suspended", reason="drift", by="mir")
    before = (tmp_path / "agents.json").read_bytes()

    def full(_fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_module.os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        states.set("refunds", "active", reason=None, by="ana")
    monkeypatch.undo()
    assert (tmp_path / "agents.json").read_bytes() == before
    assert states.is_suspended("refunds")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agents.json", "agents.json.lock"]


def test_concurrent_writers_lose_no_change(tmp_path: Path) -> None:
    path = tmp_path / "agents.json"

    def suspend(agent: str) -> None:
        AgentStateFile(path).set(agent, "suspended", reason=None, by="mir")

    threads = [threading.Thread(target=suspend, args=(f"agent{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(json.loads(path.read_text())) == [f"agent{i}" for i in range(8)]
