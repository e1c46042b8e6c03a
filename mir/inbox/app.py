"""The review inbox as a starlette app: ``create_app(project_root)`` (uvicorn serves it
in ``mir review serve``; the tests drive it with starlette's TestClient).

Every page is rendered on the server (jinja2, autoescaped: a model's ``<script>`` is
text) and works without JavaScript; the Content-Security-Policy allows none anyway.
Every POST must come from a logged-in session (login itself excepted) and carry that
session's CSRF token, and a browser's must come from this origin: otherwise 403 and
nothing is done. Sessions are signed cookies (itsdangerous, a key made at start-up)
naming a server-side session id, so logging out, or restarting the server, ends them.
"""

from __future__ import annotations

import secrets
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mir.inbox.flows import FLOW_ID, FlowPages
from mir.inbox.guards import (
    CSRF_FIELD,
    SECURITY_HEADERS,
    LoginBrake,
    new_token,
    same_origin,
    same_token,
)
from mir.inbox.queue import Queue, ReviewQueue, project_redactor
from mir.inbox.rendering import Pages
from mir.inbox.reviewing import Reviewing
from mir.project import load_project_at

LoginCheck = Callable[[Path, Path, str, str], bool]
MAX_BODY = 64 * 1024  # a review form is a few fields; anything bigger is refused
SESSION_HOURS = 8


class Inbox:
    """The app's state: the project, who is logged in, and how a page is drawn."""

    def __init__(
        self,
        project_root: Path,
        keys_dir: Path | None,
        queue: Queue,
        check_login: LoginCheck,
    ):
        project = load_project_at(project_root)
        self.root, self.state_dir = project.root, project.state_dir
        self.queue = queue
        self.reviewing = Reviewing(self.root, keys_dir)
        self.check_login = check_login
        self.sessions: set[str] = set()  # ids of the sessions logged in now
        self.brake = LoginBrake()
        self.pages = Pages(project_redactor(self.root))

    # -- sessions ---------------------------------------------------------------------

    def reviewer(self, request: Request) -> str | None:
        session = request.session
        if session.get("sid") in self.sessions and isinstance(session.get("reviewer"), str):
            return session["reviewer"]
        return None

    def csrf(self, request: Request) -> str:
        token = request.session.get("csrf")
        if not isinstance(token, str) or not token:
            token = request.session["csrf"] = new_token()
        return token

    async def checked_form(self, request: Request) -> dict[str, str] | Response:
        """The form of a POST that passed every guard, or the 403 that refuses it."""
        if not same_origin(request.headers):
            return self.refuse(request, "this form was not sent from the inbox's own page")
        form = await request.form(max_files=0, max_fields=200)
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        if not same_token(request.session.get("csrf"), fields.get(CSRF_FIELD)):
            return self.refuse(request, "the form's CSRF token is missing or wrong: reload")
        return fields

    def refuse(self, request: Request, why: str) -> Response:
        return self.pages.render(
            "refused.html.j2", request, status=403, why=why, **self.chrome(request)
        )

    def chrome(self, request: Request) -> dict[str, Any]:
        """What every page's frame shows: who is logged in, the token, the messages."""
        flashes = request.session.pop("flash", []) if "flash" in request.session else []
        return {
            "reviewer": self.reviewer(request),
            "csrf": self.csrf(request),
            "csrf_field": CSRF_FIELD,
            "flashes": flashes if isinstance(flashes, list) else [],
        }

    @staticmethod
    def flash(request: Request, kind: str, text: str) -> None:
        request.session["flash"] = [*request.session.get("flash", []), [kind, text]]

    # -- login ------------------------------------------------------------------------

    async def login_page(self, request: Request) -> Response:
        goto = next_page(request.query_params.get("next"))
        if self.reviewer(request) is not None:
            return RedirectResponse(goto, status_code=303)
        return self.pages.render("login.html.j2", request, goto=goto, **self.chrome(request))

    async def login(self, request: Request) -> Response:
        form = await self.checked_form(request)
        if isinstance(form, Response):
            return form
        name, password = form.get("name", "").strip(), form.get("password", "")
        goto = next_page(form.get("next"))
        if self.brake.blocked(name):
            return self.pages.render(
                "login.html.j2", request, status=429, goto=goto, **self.chrome(request),
                error="too many failed logins for this name: wait a minute",
            )  # fmt: skip
        ok = bool(name) and await run_in_threadpool(
            self.check_login, self.root, self.state_dir, name, password
        )
        if not ok:
            self.brake.failed(name)
            return self.pages.render(
                "login.html.j2", request, status=401, goto=goto, **self.chrome(request),
                error="wrong reviewer name or password", name=name,
            )  # fmt: skip
        self.brake.succeeded(name)
        request.session.clear()  # a new session: nothing of the anonymous one carries over
        sid = secrets.token_urlsafe(24)
        self.sessions.add(sid)
        request.session.update({"sid": sid, "reviewer": name, "csrf": new_token()})
        return RedirectResponse(goto, status_code=303)

    async def logout(self, request: Request) -> Response:
        form = await self.checked_form(request)
        if isinstance(form, Response):
            return form
        self.sessions.discard(request.session.get("sid", ""))
        request.session.clear()
        return RedirectResponse("/login", status_code=303)

    async def failed(self, request: Request, exc: Exception) -> Response:
        """A bug or a broken store: the reviewer is told what to check, the server log
        gets the traceback; the page never shows it (it may hold what the traces hold)."""
        traceback.print_exception(exc, file=sys.stderr)
        why = (
            f"the server failed ({type(exc).__name__}): the review may or may not have been "
            "recorded; check the flow with `mir traces show` before trying again"
        )
        return self.pages.render("refused.html.j2", request, status=500, why=why, failed=True,
                                 **self.chrome(request))  # fmt: skip


def next_page(raw: str | None) -> str:
    """Where a login goes on: a flow's page of this inbox (an alert's link), else the
    queue; never another site (``//evil.example``) nor any other path."""
    if raw and raw.startswith("/flows/") and FLOW_ID.fullmatch(raw.removeprefix("/flows/")):
        return raw
    return "/"


class SecurityHeaders:
    """Adds the same strict headers to every response (pages, redirects, errors)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(
    project_root: Path,
    keys_dir: Path | None = None,
    *,
    queue: Queue | None = None,
    check_login: LoginCheck | None = None,
    secret_key: str | None = None,
) -> Starlette:
    """The inbox of the project at ``project_root``. ``keys_dir`` holds the reviewers'
    private keys (``<name>.key``) the server signs their approvals with; ``queue`` and
    ``check_login`` default to the project's review queue and reviewer logins."""
    if check_login is None:
        from mir.reviewers import check_login as reviewer_login

        check_login = reviewer_login
    root = Path(project_root)
    inbox = Inbox(root, keys_dir, queue or ReviewQueue(root), check_login)
    flows = FlowPages(inbox)
    routes = [
        Route("/", flows.queue_page),
        Route("/login", inbox.login_page, methods=["GET"]),
        Route("/login", inbox.login, methods=["POST"]),
        Route("/logout", inbox.logout, methods=["POST"]),
        Route("/flows/{flow_id}", flows.flow_page, methods=["GET"]),
        Route("/flows/{flow_id}/{verdict}", flows.review, methods=["POST"]),
        Route("/inbox.css", inbox.pages.stylesheet),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
    ]
    middleware = [
        Middleware(SecurityHeaders),
        Middleware(
            SessionMiddleware,
            secret_key=secret_key or secrets.token_urlsafe(32),
            session_cookie="mir_inbox",
            max_age=SESSION_HOURS * 3600,
            same_site="strict",
        ),
    ]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        max_body_size=MAX_BODY,
        exception_handlers={Exception: inbox.failed},
    )
    app.state.inbox = inbox
    return app
