"""Reading what a child process wrote to a pseudo-terminal (spinner and width tests)."""

from __future__ import annotations

import os
import select
import subprocess
import time


def read_terminal(master: int, process: subprocess.Popen, timeout: float = 60) -> bytes:
    """Everything written to the pty whose ``master`` end is given, until the child
    closes it or exits (or ``timeout`` passes); closes ``master``."""
    received = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            received += chunk
        elif process.poll() is not None:
            break
    os.close(master)
    return received
