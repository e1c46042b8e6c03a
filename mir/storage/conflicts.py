"""One reading of "another process holds the database file", for every DuckDB store.

A DuckDB file admits one process at a time: a second one fails at once, even read-only,
with "IO Error: Could not set lock on file ...: Conflicting lock is held in ...". Each
store (traces, the eval and model histories) tells that apart from a damaged file the
same way, here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def is_lock_conflict(exc: BaseException) -> bool:
    """A database error that says another process holds the file (DuckDB: "Could not set
    lock on file ..."). The file name DuckDB quotes in its message is left out: a project
    under a folder named "locked" or "blocks" must not turn a torn file into "held open"."""
    return "lock" in re.sub(r'"[^"]*"', "", str(exc)).lower()


def retrying_while_locked(open_file: Callable[[], T], seconds: float) -> T:
    """``open_file()``, tried again every 50 ms for up to ``seconds`` while it fails with
    a lock conflict (another process about to let go of the file); any other error, or a
    conflict past the deadline, is raised as it came."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return open_file()
        except Exception as exc:
            if not is_lock_conflict(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
