"""Shared pytest fixtures for tests that need a real model or a real model server.

Register with ``pytest_plugins = ["tests.support.fixtures"]`` in ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.tiny_gguf import write_tiny_gguf

SERVER_ALIAS = "tiny"
SERVER_READY_TIMEOUT_S = 60.0


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ~470 KB random-weight llama GGUF with a ChatML template (one per test worker)."""
    return write_tiny_gguf(tmp_path_factory.mktemp("models") / "tiny.gguf")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited early:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise RuntimeError(f"llama.cpp server not ready after {SERVER_READY_TIMEOUT_S:g}s")


@pytest.fixture(scope="session")
def llama_server(tiny_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server on the tiny model, on 127.0.0.1.

    Yields the ``api_base`` (``http://127.0.0.1:PORT/v1``); the model is ``openai/tiny``.
    """
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(tiny_gguf),
        "--model_alias",
        SERVER_ALIAS,
        "--n_threads",
        "2",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ}
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(f"{base}/models", process, log)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
