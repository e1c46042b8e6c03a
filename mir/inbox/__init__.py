"""The review inbox: ``mir review serve``, a server-rendered web page where reviewers log
in and approve, reject or correct the flows that wait for a human (public interface).

Importing this package loads no web framework: starlette and uvicorn are imported when
an app is made or served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.inbox.app import create_app
    from mir.inbox.server import serve


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from mir.inbox.app import create_app

        return create_app
    if name == "serve":
        from mir.inbox.server import serve

        return serve
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["create_app", "serve"]
