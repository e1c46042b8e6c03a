"""``--watch``: lints at start, re-lints on save (re-parsing only what changed), rests
when nothing is written (its own reads and cache writes never start a run), and Ctrl-C
exits 0."""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from tests.conftest import MIR_EXE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lint" / "rules"


def _wait_for(lines: queue.Queue[str], needle: str, timeout: float = 30) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"{needle!r} never appeared; got {seen}")


def _start_watch(
    tree: Path, *args: str, columns: int = 200
) -> tuple[subprocess.Popen[str], queue.Queue[str]]:
    """``mir lint boundaries TREE --watch ARGS``, and a queue of its output lines."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": str(columns)}
    process = subprocess.Popen(
        [str(MIR_EXE), "lint", "boundaries", str(tree), "--watch", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout], daemon=True
    )
    reader.start()
    return process, lines


def test_watch_relints_on_save_and_ctrl_c_exits_zero(tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    process, lines = _start_watch(tree, "--no-cache")
    try:
        first = _wait_for(lines, "watching")
        assert any("Found 1 finding" in line for line in first)
        assert any("re-parsed 8, cached 0" in line for line in first)

        domain = tree / "capabilities" / "audit" / "domain.py"
        domain.write_text("from capabilities.billing import Invoice\n\n\nclass Entry: ...\n")
        second = _wait_for(lines, "watching")
        assert any("MIR103" in line and "audit" in line for line in second)
        assert any("re-parsed 1, cached 7" in line for line in second)
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
    assert code == 0


def _drain(lines: queue.Queue[str], seconds: float) -> list[str]:
    """Every line printed during the next ``seconds``."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            seen.append(lines.get(timeout=left))
        except queue.Empty:
            break
    return seen


def test_watch_rests_until_a_file_is_written(tmp_path: Path) -> None:
    tree = tmp_path / "shop"
    shutil.copytree(FIXTURES / "MIR105", tree)
    process, lines = _start_watch(tree)  # with the default cache: its writes must not count
    try:
        _wait_for(lines, "watching")
        for path in tree.rglob("*"):  # reads (opened / closed_no_write) are not edits
            if path.is_file():
                path.read_bytes()
        idle = _drain(lines, 3)
        assert not [line for line in idle if "watching" in line], idle

        domain = tree / "capabilities" / "audit" / "domain.py"
        domain.write_text(domain.read_text() + "\nimport json\n")
        (tree / "notes.txt").write_text("not read by lint\n")
        _wait_for(lines, "watching")
        after = _drain(lines, 3)
        assert not [line for line in after if "watching" in line], after
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
    assert code == 0


def test_watch_prints_a_root_and_an_error_with_brackets_as_they_are(tmp_path: Path) -> None:
    # both lines were markup strings: rich ate the "[dim]" of the folder's name
    tree = tmp_path / "shop[dim]"
    shutil.copytree(FIXTURES / "MIR105", tree)
    process, lines = _start_watch(tree, "--no-cache", columns=300)
    try:
        first = _wait_for(lines, "watching")
        assert any(f"watching {tree} (Ctrl-C" in line for line in first), first
        (tree / "pyproject.toml").write_text("[tool.mir]\nlint = 3\n")
        second = _wait_for(lines, "error:")
        assert any(f"error: {tree / 'pyproject.toml'}: tool.mir.lint" in x for x in second)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
