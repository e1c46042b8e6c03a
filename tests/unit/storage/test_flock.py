"""The one flock wait loop: wait, try once, time out; shared and exclusive; dead holders."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mir.storage import file_lock, lock_descriptor
from mir.storage import flock as flock_module

_HOLDER = """
import sys, time
from pathlib import Path
from mir.storage import file_lock
with file_lock(Path(sys.argv[1]), exclusive=sys.argv[2] == "ex") as held:
    print("held" if held else "free", flush=True)
    time.sleep(60)
"""


def _hold(path: Path, kind: str = "ex") -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), kind], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def _stop(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


def test_the_lock_file_and_its_folder_are_created_with_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "reviews" / "flow.lock"
    old = os.umask(0o022)
    try:
        with file_lock(path, mode=0o644) as held:
            assert held
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_held_lock_times_out_and_try_once_does_not_wait(tmp_path: Path) -> None:
    path = tmp_path / "models.lock"
    child = _hold(path)
    try:
        started = time.monotonic()
        with file_lock(path, timeout=0) as held:
            assert not held
        assert time.monotonic() - started < 0.5
        started = time.monotonic()
        with file_lock(path, timeout=0.3) as held:
            assert not held
        assert time.monotonic() - started >= 0.3
    finally:
        _stop(child)


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    path = tmp_path / "agents.json.lock"
    _stop(_hold(path))
    with file_lock(path, timeout=0) as held:
        assert held


def test_readers_share_and_a_writer_waits_for_them(tmp_path: Path) -> None:
    path = tmp_path / "store.lock"
    reader = _hold(path, "sh")
    try:
        with file_lock(path, exclusive=False, timeout=0) as shared:
            assert shared
        with file_lock(path, exclusive=True, timeout=0.05) as exclusive:
            assert not exclusive
    finally:
        _stop(reader)
    with file_lock(path, exclusive=True, timeout=0) as exclusive:
        assert exclusive


def test_a_reader_opens_an_existing_lock_file_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.lock"
    path.touch()
    opened: list[int] = []
    real_open = os.open

    def recording(name: str, flags: int, *args: int) -> int:
        opened.append(flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR))
        return real_open(name, flags, *args)

    monkeypatch.setattr(flock_module.os, "open", recording)
    with file_lock(path, exclusive=False, timeout=0) as held:
        assert held
    with file_lock(path, exclusive=True, timeout=0) as held:
        assert held
    assert opened == [os.O_RDONLY, os.O_RDWR]


def test_waiting_forever_gets_the_lock_once_the_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "flow.lock"
    order: list[str] = []
    inside = threading.Event()

    def first() -> None:
        with file_lock(path) as held:
            assert held
            order.append("first in")
            inside.set()
            time.sleep(0.2)
            order.append("first out")

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(10)
    with file_lock(path, timeout=None) as held:  # threads exclude each other too
        order.append("second in")
        assert held
    thread.join()
    assert order == ["first in", "first out", "second in"]


def test_a_descriptor_the_caller_opened_can_be_probed(tmp_path: Path) -> None:
    path = tmp_path / "segment.jsonl"
    child = _hold(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert lock_descriptor(fd, timeout=0) is False
    finally:
        os.close(fd)
        _stop(child)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert lock_descriptor(fd, timeout=0) is True
    finally:
        os.close(fd)
