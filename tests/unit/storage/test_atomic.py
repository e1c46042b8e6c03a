"""The atomic writer: old file or new file, never half, whatever goes wrong."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.storage import atomic as atomic_module
from mir.storage import atomic_file, write_atomic


class Boom(Exception):
    pass


def _leftovers(folder: Path, name: str) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name != name)


@settings(max_examples=60, deadline=None)
@given(
    old=st.binary(max_size=4096),
    new=st.binary(max_size=4096),
    cut=st.integers(min_value=0, max_value=4096),
    binary=st.booleans(),
)
def test_a_block_that_raises_mid_write_leaves_the_old_file_whole(
    old: bytes, new: bytes, cut: int, binary: bool
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "state.json"
        target.write_bytes(old)
        with pytest.raises(Boom), atomic_file(target, binary=binary) as out:
            part = new[:cut]
            out.write(part if binary else part.decode("latin-1"))
            raise Boom
        assert target.read_bytes() == old
        assert _leftovers(Path(scratch), "state.json") == []


@settings(max_examples=60, deadline=None)
@given(old=st.binary(max_size=2048), new=st.text(max_size=2048))
def test_a_clean_write_replaces_the_file_with_exactly_the_new_content(old: bytes, new: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "state.json"
        target.write_bytes(old)
        write_atomic(target, new)
        assert target.read_bytes() == new.encode("utf-8")  # no newline translation
        assert _leftovers(Path(scratch), "state.json") == []


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failing_fsync_or_rename_keeps_the_old_file_and_removes_the_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "models.toml"
    target.write_text("old\n")

    def fail(*_args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_module.os, failing, fail)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, "new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n"
    assert _leftovers(tmp_path, "models.toml") == []


def test_the_file_and_then_its_folder_are_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def counting(fd: int) -> None:
        kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        synced.append(kind)
        real_fsync(fd)

    monkeypatch.setattr(atomic_module.os, "fsync", counting)
    write_atomic(tmp_path / "agents.json", "{}")
    assert synced == ["file", "folder"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "suite.yaml"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_an_explicit_mode_wins_over_the_old_one_and_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "logins.json"
    target.write_text("old")
    target.chmod(0o644)
    write_atomic(target, "secret", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    fresh = tmp_path / "fresh"
    old = os.umask(0o077)
    try:
        write_atomic(fresh, b"x", mode=0o644)
    finally:
        os.umask(old)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o644


def test_a_new_file_gets_what_the_umask_gives_a_plain_open(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.json", "{}")
        (tmp_path / "plain.json").write_text("{}")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "new.json").stat().st_mode)
    assert mode == stat.S_IMODE((tmp_path / "plain.json").stat().st_mode) == 0o640


def test_a_symlink_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    write_atomic(link, "new")
    assert not link.is_symlink()
    assert link.read_text() == "new"
    assert elsewhere.read_text() == "keep"


def test_the_handle_names_the_temp_file_so_the_block_can_validate_it(tmp_path: Path) -> None:
    target = tmp_path / "suite.yaml"
    with atomic_file(target) as out:
        out.write("cases: []\n")
        out.flush()
        temp = Path(out.name)
        assert temp.parent == tmp_path
        assert temp.name.startswith(".suite.yaml.")
        assert temp.read_text() == "cases: []\n"
        assert not target.exists()
    assert target.read_text() == "cases: []\n"
    assert not temp.exists()


def test_a_missing_folder_is_an_error_not_a_created_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "absent" / "x.json", "{}")
    assert not (tmp_path / "absent").exists()


_WRITER = """
import sys, time
from pathlib import Path
from mir.storage import atomic_file
with atomic_file(Path(sys.argv[1]), binary=True) as out:
    out.write(b"N" * 100_000)
    out.flush()
    print("half", flush=True)
    time.sleep(60)
    out.write(b"N" * 100_000)
"""


def test_a_writer_killed_with_sigkill_mid_write_leaves_the_old_file_whole(
    tmp_path: Path,
) -> None:
    target = tmp_path / "agents.json"
    old = b'{"old": true}\n' * 1000
    target.write_bytes(old)
    child = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "half"
        temps = [p for p in tmp_path.iterdir() if p.name.startswith(".agents.json.")]
        assert len(temps) == 1 and temps[0].stat().st_size == 100_000
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert target.read_bytes() == old


def test_a_name_near_the_length_limit_still_gets_a_temp_file(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 250)
    write_atomic(target, "x")
    assert target.read_text() == "x"
    assert _leftovers(tmp_path, target.name) == []


def test_a_folder_in_the_way_is_an_error_and_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "agents.json"
    target.mkdir()
    (target / "inside").write_text("kept")
    with pytest.raises(OSError):
        write_atomic(target, "{}")
    assert (target / "inside").read_text() == "kept"
    assert _leftovers(tmp_path, "agents.json") == []


def test_text_that_cannot_be_encoded_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "suite.yaml"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError), atomic_file(target, encoding="ascii") as out:
        out.write("caf\u00e9")
    assert target.read_text() == "old"
    assert _leftovers(tmp_path, "suite.yaml") == []


def test_a_setuid_bit_is_not_carried_onto_new_bytes(tmp_path: Path) -> None:
    target = tmp_path / "tool"
    target.write_text("old")
    target.chmod(0o4755)
    write_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


def test_concurrent_writers_each_leave_a_whole_file(tmp_path: Path) -> None:
    import threading

    target = tmp_path / "state.json"
    bodies = [bytes([65 + i]) * 200_000 for i in range(8)]
    threads = [threading.Thread(target=write_atomic, args=(target, body)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.read_bytes() in bodies
    assert _leftovers(tmp_path, "state.json") == []
