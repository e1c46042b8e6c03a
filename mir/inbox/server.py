"""``mir review serve``: the inbox app under uvicorn, until Ctrl-C."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from pathlib import Path
from typing import Any

from mir.errors import UsageError
from mir.inbox.reviewing import Reviewing


def serve(
    project_root: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    keys_dir: Path | None = None,
    metrics: bool = False,
) -> None:
    """Serve the project's review inbox on ``host:port`` (blocks); ``metrics``: also
    ``/metrics`` (Prometheus, no login), counting the reviews this server decides."""
    if not 0 < port < 65536:
        raise UsageError(f"--port {port} is not a TCP port", hint="give 1-65535")
    if keys_dir is not None and not keys_dir.is_dir():
        raise UsageError(
            f"--keys {keys_dir}: no such folder", hint="the folder of <name>.key files"
        )
    import uvicorn

    from mir.inbox.app import create_app

    app = create_app(project_root, keys_dir)
    if metrics:
        _mount_metrics(app, project_root)
    _forget_environment_keys()
    listening = _bind(host, port)  # bound here: a port in use is one clear error line
    if not _loopback(host):
        print(
            f"warning: serving plain HTTP on {host}: passwords and session cookies cross the "
            "network in clear; put the inbox behind a TLS proxy",
            file=sys.stderr,
        )
    shown = f"[{host}]" if ":" in host else host
    print(f"review inbox: http://{shown}:{port}/  (Ctrl-C stops it)")
    print(_signing(app.state.inbox.reviewing, project_root), flush=True)
    if metrics:
        print(f"metrics: http://{shown}:{port}/metrics", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[listening])


def _mount_metrics(app: Any, project_root: Path) -> None:
    """``/metrics`` before the inbox's routes (no login: it shows counts, never a flow's
    data), and this process counting what it writes (approvals, rejections, expiries)."""
    from starlette.routing import Route

    from mir.metrics import metrics_app, start_counting

    app.router.routes.insert(0, Route("/metrics", metrics_app(project_root)))
    start_counting()


def _bind(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UsageError(
            f"--host {host}: {exc.strerror}", hint="give an address or a name"
        ) from exc
    family, kind, proto, _, address = infos[0]
    listening = socket.socket(family, kind, proto)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind(address)
    except OSError as exc:
        listening.close()
        raise UsageError(
            f"cannot serve on {host}:{port} ({exc.strerror})", hint="is the port in use?"
        ) from exc
    listening.listen(128)
    listening.set_inheritable(True)
    return listening


def _signing(reviewing: Reviewing, root: Path) -> str:
    """Whose reviews this server signs: the declared reviewers it holds a key file for."""
    from mir.reviewers import load_reviewers

    if reviewing.keys_dir is None:
        return "no --keys: reviews from the page are unsigned"
    names = [name for name in sorted(load_reviewers(root)) if reviewing.signs_for(name)]
    folder = reviewing.keys_dir
    if not names:
        return f"no key of a declared reviewer in {folder}: reviews from the page are unsigned"
    return f"signs the reviews of {', '.join(names)} with their key in {folder}"


def _forget_environment_keys() -> None:
    """A reviewer key in the server's environment is one person's: the inbox signs for
    each logged-in reviewer with their own file only, so it must never pick it up."""
    from mir.reviewers import KEY_ENV, KEY_FILE_ENV

    for name in (KEY_ENV, KEY_FILE_ENV):
        if os.environ.pop(name, None) is not None:
            print(f"note: ${name} is ignored by the inbox (it signs with --keys DIR/NAME.key)",
                  file=sys.stderr)  # fmt: skip


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
