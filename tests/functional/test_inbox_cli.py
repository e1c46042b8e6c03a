"""`mir review serve` through the real executable: its usage errors, and a `mir` that
does not serve loads no web framework."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from tests.support.inbox import inbox_project, served

WEB = ("starlette", "uvicorn", "itsdangerous", "multipart", "httpx")


def test_the_cli_loads_no_web_framework_until_it_serves() -> None:
    code = (
        "import sys\n"
        "from mir.cli.app import build_app\n"
        "build_app()\n"
        "import mir.inbox\n"
        f"print(sorted(m for m in {WEB!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_usage_errors_are_one_line_and_exit_2(run_mir, tmp_path: Path) -> None:
    root = inbox_project(tmp_path / "app")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        in_use = f"error: cannot serve on 127.0.0.1:{port} (Address already in use)"
        nowhere = tmp_path / "nowhere"
        cases = {
            ("--port", "70000"): "error: --port 70000 is not a TCP port (give 1-65535)",
            ("--keys", str(nowhere)): f"error: --keys {nowhere}: no such folder "
            "(the folder of <name>.key files)",
            ("--port", str(port)): f"{in_use} (is the port in use?)",
        }
        for args, message in cases.items():
            result = run_mir("review", "serve", *args, cwd=root, timeout=60)
            assert result.returncode == 2, (args, result.stdout, result.stderr)
            assert result.stderr.strip() == message, result.stderr
    outside = run_mir("review", "serve", cwd=tmp_path, timeout=60)
    assert outside.returncode == 2 and "no mir project found" in outside.stderr


def test_serve_says_where_and_whose_reviews_it_signs(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    root = inbox_project(tmp_path / "app", keys=keys)
    (keys / "bo.key").unlink()
    (keys / "mallory.key").write_text("not a declared reviewer's key")
    with served(root, keys=keys) as url:
        log = root.parent / f"inbox-{url.rsplit(':', 1)[1]}.log"
        lines = log.read_text().splitlines()
    assert lines[:2] == [
        f"review inbox: {url}/  (Ctrl-C stops it)",
        f"signs the reviews of ana with their key in {keys}",
    ]
    with served(root) as url:
        log = root.parent / f"inbox-{url.rsplit(':', 1)[1]}.log"
        assert log.read_text().splitlines()[1] == "no --keys: reviews from the page are unsigned"
