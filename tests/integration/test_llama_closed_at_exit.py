"""A llama.cpp model still alive when the process exits is closed before interpreter
teardown: left to it, ``Llama.__del__`` ran after llama_cpp's module globals were gone
and printed a traceback per model (nine at the end of a ``pytest -n 2`` run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SCRIPT = """
import atexit, sys
from pathlib import Path

def check():  # registered first, so it runs after mir's own exit handler
    for loaded in (model, busy):
        print("open" if loaded.llama._stack._exit_callbacks else "closed", flush=True)

atexit.register(check)
from mir.inference.model_cache import load_model
model = load_model(Path(sys.argv[1]), 128, 1, None)
busy = load_model(Path(sys.argv[1]), 128, 1, None)
busy.lock.acquire()  # a call still running on a daemon thread: its model is left alone
"""


def test_a_model_alive_at_exit_is_closed_before_teardown(tiny_gguf: Path):
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tiny_gguf)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["closed", "open"]
    assert "Exception ignored" not in result.stderr and "Traceback" not in result.stderr
