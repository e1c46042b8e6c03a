"""The queue page, a flow's page, and the approve / reject / correct forms they post.

A review acts on the exact flow the reviewer opened (an id prefix is never resolved
here) and only while the queue still lists it; the runtime then decides as it does for
``mir approve``: the ledger's claim makes one outcome per flow, the integrity check runs
again (on the correction, when there is one), and the signature rules apply.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from mir.errors import MirUserError
from mir.inbox import views
from mir.inbox.queue import Pending, Queue
from mir.inbox.rendering import Pages
from mir.inbox.reviewing import Reviewing

VERDICTS = ("approve", "reject", "correct")
MAX_REASON = 2000
FLOW_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")


class Inbox(Protocol):
    """What these pages use of the app (``mir.inbox.app.Inbox``), which builds them: a
    port, so this module never imports the app that imports it."""

    queue: Queue
    pages: Pages
    reviewing: Reviewing

    def reviewer(self, request: Request) -> str | None: ...
    def chrome(self, request: Request) -> dict[str, Any]: ...
    def refuse(self, request: Request, why: str) -> Response: ...
    async def checked_form(self, request: Request) -> dict[str, str] | Response: ...
    def flash(self, request: Request, kind: str, text: str) -> None: ...


class FlowPages:
    def __init__(self, inbox: Inbox):
        self.inbox = inbox

    def view(self, item: Pending) -> dict[str, Any]:
        """A pending flow as the templates show it, every value redacted."""
        redact = self.inbox.pages.redact
        decision = redact(item.decision if isinstance(item.decision, dict) else {})
        return {
            "flow_id": item.flow_id,
            "agent": redact(item.agent),
            "action": redact(item.action),
            # the confidence has its own column
            "fields": redact({k: v for k, v in (item.fields or {}).items() if k != "confidence"}),
            "reasons": redact([str(r) for r in item.reasons]),
            "confidence": item.confidence,
            "age": views.duration(item.age_s),
            "left": views.time_left(item.age_s, item.ttl_s),
            "created_at": views.instant(item.created_at),
            "expires_at": "-" if item.expires_at is None else views.instant(item.expires_at),
            "waits_for": redact(item.waits_for),
            "requested_by": redact(item.requested_by),
            "input": redact(item.input),
            "context": redact(item.context),
            "decision": decision,
            "correctable": views.correctable(decision),
        }

    async def queue_page(self, request: Request) -> Response:
        inbox = self.inbox
        if inbox.reviewer(request) is None:
            return RedirectResponse("/login", status_code=303)
        size = views.page_size(request.query_params.get("size"))
        number = views.page_number(request.query_params.get("page"))
        offset = (number - 1) * size
        items, total = await run_in_threadpool(inbox.queue.page, offset=offset, limit=size)
        window = views.PageWindow(number=number, size=size, total=total)
        return inbox.pages.render(
            "queue.html.j2", request, **inbox.chrome(request),
            flows=[self.view(item) for item in items], window=window,
            last_shown=window.last_shown(len(items)),
        )  # fmt: skip

    async def flow_page(self, request: Request) -> Response:
        inbox = self.inbox
        reviewer = inbox.reviewer(request)
        if reviewer is None:  # an alert's link: back here once logged in
            flow_id = request.path_params["flow_id"]
            target = f"/login?next=/flows/{flow_id}" if FLOW_ID.fullmatch(flow_id) else "/login"
            return RedirectResponse(target, status_code=303)
        item = await self._find(request.path_params["flow_id"])
        if item is None:
            return self.gone(request, request.path_params["flow_id"])
        return self.render_flow(request, item, reviewer)

    def render_flow(
        self, request: Request, item: Pending, reviewer: str, *, status: int = 200, **extra: Any
    ) -> Response:
        inbox = self.inbox
        return inbox.pages.render(
            "flow.html.j2", request, status=status, **inbox.chrome(request),
            flow=self.view(item), signs=inbox.reviewing.signs_for(reviewer),
            error=extra.pop("error", None), form=extra.pop("form", {}), **extra,
        )  # fmt: skip

    def gone(self, request: Request, flow_id: str) -> Response:
        shown = flow_id if FLOW_ID.fullmatch(flow_id) else "?"
        return self.inbox.pages.render(
            "gone.html.j2", request, status=404, flow_id=shown, **self.inbox.chrome(request)
        )

    async def review(self, request: Request) -> Response:
        inbox = self.inbox
        reviewer = inbox.reviewer(request)
        if reviewer is None:
            return inbox.refuse(request, "log in first: reviews are made by a logged-in reviewer")
        form = await inbox.checked_form(request)
        if isinstance(form, Response):
            return form
        verdict, flow_id = request.path_params["verdict"], request.path_params["flow_id"]
        if verdict not in VERDICTS:
            return self.gone(request, flow_id)
        item = await self._find(flow_id)
        if item is None:  # decided, expired, or never there: nothing to act on
            return self.gone(request, flow_id)
        reason = form.get("reason", "").strip()[:MAX_REASON] or None
        if reason is None and verdict != "approve":
            return self.render_flow(
                request, item, reviewer, status=400, form=form,
                error=f"say why you {verdict} it: the reason is part of the trace",
            )  # fmt: skip
        correction = None
        if verdict == "correct":
            try:
                correction = views.read_correction(self.view(item)["decision"], form)
            except views.CorrectionError as exc:
                return self.render_flow(request, item, reviewer, status=400, form=form, error=exc)
        try:
            record = await run_in_threadpool(self._decide, flow_id, verdict, reviewer, reason,
                                             correction)  # fmt: skip
        except MirUserError as exc:
            # exit 1 for the CLI (another reviewer won the flow): 409; a refusal: 400
            status = 409 if exc.exit_code == 1 else 400
            return inbox.pages.render(
                "refused.html.j2", request, status=status, why=str(exc), flow_id=flow_id,
                **inbox.chrome(request),
            )  # fmt: skip
        return self._done(request, flow_id, verdict, record)

    def _decide(
        self, flow_id: str, verdict: str, reviewer: str, reason: str | None, correction: Any
    ) -> Any:
        reviewing = self.inbox.reviewing
        if verdict == "reject":
            return reviewing.reject(flow_id, reviewer, reason=reason)
        return reviewing.approve(flow_id, reviewer, reason=reason, correction=correction)

    def _done(self, request: Request, flow_id: str, verdict: str, record: Any) -> Response:
        inbox, status = self.inbox, str(record.status)
        if status == "pending_review":  # one approval of several: the flow still waits
            inbox.flash(request, "info", f"{flow_id}: your approval is recorded; it still waits")
            return RedirectResponse(f"/flows/{flow_id}", status_code=303)
        done = {"approve": "approved", "reject": "rejected", "correct": "corrected"}[verdict]
        reasons = [str(r) for r in record.reasons]
        tail = f" ({', '.join(reasons)})" if status not in ("executed", "rejected") else ""
        kind = "ok" if status in ("executed", "rejected") else "warn"
        inbox.flash(request, kind, f"{flow_id} {done}: {status}{inbox.pages.redact(tail)}")
        return RedirectResponse("/", status_code=303)

    async def _find(self, flow_id: str) -> Pending | None:
        if not FLOW_ID.fullmatch(flow_id):
            return None
        item = await run_in_threadpool(self.inbox.queue.find, flow_id)
        return item if item is not None and item.flow_id == flow_id else None
