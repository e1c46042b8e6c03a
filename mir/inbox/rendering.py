"""Drawing the inbox's pages: jinja2 with autoescaping on for every template (whatever
its file name), so text a model or an input wrote is always shown as text; values are
redacted as the traces redact them before they reach a template."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from mir.inbox import views
from mir.traces import Redactor

TEMPLATES = Path(__file__).parent / "templates"


class Pages:
    def __init__(self, redactor: Redactor):
        self.redactor = redactor
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=True,  # every template, not only *.html
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters.update(
            shown=views.shown,
            pretty=views.pretty,
            confidence=views.confidence,
            duration=views.duration,
        )
        self._css = (TEMPLATES / "inbox.css").read_bytes()

    def redact(self, value: Any) -> Any:
        return self.redactor.value(value)

    def render(
        self, template: str, request: Request, /, *, status: int = 200, **context: Any
    ) -> Response:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status)

    async def stylesheet(self, request: Request) -> Response:
        return Response(self._css, media_type="text/css")
