"""Test harness shared by every test.

Two guarantees hold for the whole session:

* no real network: any socket connection outside the loopback range fails, in this
  process, and ``MIR_BLOCK_REMOTE_MODELS=1`` makes mir's remote model adapter refuse
  non-loopback endpoints in every ``mir`` subprocess the tests start;
* functional tests run the real installed ``mir`` executable in a subprocess.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

pytest_plugins = ["tests.support.fixtures", "tests.support.postgres"]

os.environ["MIR_BLOCK_REMOTE_MODELS"] = "1"
# mir's per-user state (the secret keying `mir traces verify`'s review cache) lives in a
# folder of this test session, never in the real ~/.local/state.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="mir-test-state-")
atexit.register(shutil.rmtree, os.environ["XDG_STATE_HOME"], ignore_errors=True)
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
# pytest -n 2 already fills both cores: a second spinning llama.cpp thread per worker
# only fights the other worker (measured ~5x slower), so tests run llama on one thread.
os.environ["MIR_LLAMA_THREADS"] = "1"
for _key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY"):
    os.environ.pop(_key, None)
# a developer's own collector never receives test spans: only a test's [tool.mir.otel]
for _key in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
    os.environ.pop(_key, None)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple):  # AF_UNIX paths
        return True
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_local(address):
        raise ConnectionRefusedError(f"network access is blocked in tests: {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_local(address):
        raise ConnectionRefusedError(f"network access is blocked in tests: {address!r}")
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]

MIR_EXE = Path(sys.executable).parent / "mir"
REPO = Path(__file__).resolve().parent.parent

RunMir = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_mir() -> RunMir:
    """Run the installed ``mir`` executable: ``run_mir("init", cwd=tmp_path)``."""

    def _run(
        *args: str,
        cwd: Path | None = None,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", **(env or {})}
        return subprocess.run(
            [str(MIR_EXE), *args],
            cwd=cwd,
            input=input,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    return _run
