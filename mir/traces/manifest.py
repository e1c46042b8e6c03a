"""The manifest: what the store should hold, kept apart from the segments and the database.

A hash chain inside a segment shows that a line was edited, but not that the segment's
last lines, the whole segment or the whole database were removed: what is gone leaves
no broken link. So every segment is also recorded outside itself::

    <traces>/manifest/log.jsonl           one JSON line per fact, append-only:
        {"op": "open", "segment": X}            a writer created segment X
        {"op": "compacted", "segment": X, ...}  X went into traces.duckdb: its line
                                                count, head hash, and what its head
                                                record said while it was written
    <traces>/manifest/heads/<X>.head      X's line count and last hash, overwritten
                                          in place after every append
    <traces>/manifest/verified.json       how far the last successful verify got

Why this shape: the log takes one ``O_APPEND`` write per *segment* (not per event) and
the head record one ``pwrite`` per ``append`` into a file only its writer touches, so
the hot path shares no lock with anyone. Removing a segment leaves its ``open`` record;
removing its last lines leaves a head record that counts more; removing the database
leaves ``compacted`` records with nowhere to point.

What it cannot do: someone who rewrites a segment, its head record and the log
consistently (all are plain files) is caught only by an anchor kept elsewhere -- the
digest ``mir traces verify`` prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.storage import write_atomic

_HEAD = re.compile(rb"^((\d{20}) ([0-9a-f]{64})) ([0-9a-f]{8})\n$")
STATE_VERSION = 1


def head_record(lines: int, digest: str) -> bytes:
    """Fixed width, rewritten in place; the CRC tells a read that raced the rewrite
    (half old, half new bytes) from a whole record."""
    text = f"{lines:020d} {digest}".encode()
    return text + f" {zlib.crc32(text):08x}\n".encode()


@dataclass
class Log:
    """The manifest log as read: records with their byte offsets, and its bytes' hash."""

    opened: set[str] = field(default_factory=set)
    adopted: set[str] = field(default_factory=set)  # written before manifests existed
    compacted: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)
    size: int = 0
    data: bytes = b""

    def prefix_hash(self, size: int) -> str:
        return hashlib.sha256(self.data[:size]).hexdigest()


class Manifest:
    """The files under ``<traces>/manifest`` (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.heads_dir = folder / "heads"
        self.log_path = folder / "log.jsonl"
        self.state_path = folder / "verified.json"

    def exists(self) -> bool:
        return self.log_path.exists()

    # -- writers -------------------------------------------------------------------

    def open_head(self, segment: str, first_hash: str) -> int:
        """Create the segment's head record (0 lines); returns a descriptor to update it."""
        self.heads_dir.mkdir(parents=True, exist_ok=True)
        path = self.heads_dir / f"{segment}.head"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.pwrite(fd, head_record(0, first_hash), 0)
        return fd

    def record(self, *records: dict[str, Any], fsync: bool = False) -> None:
        """Append records with one ``O_APPEND`` write: concurrent writers never interleave
        (a write of a few hundred bytes to a local file is not split)."""
        if not records:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        payload = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, payload.encode())
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def adopt_if_new(self, segments: list[str]) -> None:
        """A store written before manifests existed: its segments are recorded as found
        (``adopted``: no head record vouches for their length). Only when there is no
        log at all, so deleting the log later never launders the database (see
        ``compaction.adopt``); two processes racing here only repeat a record."""
        if self.log_path.exists():
            return
        self.record(*({"op": "open", "segment": s, "adopted": True} for s in segments))
        if not segments:  # still start the log: the store is manifest-era from now on
            self.folder.mkdir(parents=True, exist_ok=True)
            self.log_path.touch()

    def drop_head(self, segment: str) -> None:
        (self.heads_dir / f"{segment}.head").unlink(missing_ok=True)

    # -- readers -------------------------------------------------------------------

    def head(self, segment: str) -> tuple[int, str] | None:
        """(lines, last hash) from the head record, or None when there is none.

        A read racing the writer's in-place rewrite could see a mix of two records;
        the fixed format tells, and a re-read gets a whole one.
        """
        path = self.heads_dir / f"{segment}.head"
        for _ in range(50):
            try:
                raw = path.read_bytes()
            except (FileNotFoundError, IsADirectoryError):
                return None
            match = _HEAD.match(raw)
            if match and int(match.group(4), 16) == zlib.crc32(match.group(1)):
                return int(match.group(2)), match.group(3).decode()
        return (-1, "")  # present but unreadable: reported as damage

    def heads(self) -> dict[str, tuple[int, str]]:
        if not self.heads_dir.is_dir():
            return {}
        found = {}
        for path in self.heads_dir.iterdir():
            if path.name.endswith(".head"):
                head = self.head(path.name[: -len(".head")])
                if head is not None:
                    found[path.name[: -len(".head")]] = head
        return found

    def read_log(self) -> Log:
        log = Log()
        try:
            log.data = self.log_path.read_bytes()
        except FileNotFoundError:
            return log
        offset = 0
        for number, raw in enumerate(log.data.splitlines(keepends=True)):
            if not raw.endswith(b"\n"):
                break  # a record being appended right now
            try:
                entry = json.loads(raw)
                op, segment = entry["op"], entry["segment"]
            except (ValueError, KeyError, TypeError):
                log.unreadable.append(number)
                offset += len(raw)
                continue
            if op == "open":
                log.opened.add(segment)
                if entry.get("adopted"):
                    log.adopted.add(segment)
            elif op == "compacted":
                earlier = log.compacted.get(segment)
                same = ("lines", "head")
                if earlier and any(earlier[1].get(k) != entry.get(k) for k in same):
                    log.conflicts.append(segment)
                if not earlier:
                    log.compacted[segment] = (offset, entry)
            offset += len(raw)
        log.size = offset
        return log

    # -- how far the last verify got ---------------------------------------------

    def state(self) -> dict[str, Any] | None:
        try:
            state = json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) and state.get("v") == STATE_VERSION else None

    def save_state(self, state: dict[str, Any]) -> bool:
        """Write atomically; False when the store is read-only (nothing is recorded)."""
        try:
            write_atomic(
                self.state_path, json.dumps({"v": STATE_VERSION, **state}, separators=(",", ":"))
            )
        except OSError:
            return False
        return True
