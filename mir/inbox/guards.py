"""The inbox's request guards, free of any web framework: CSRF tokens, the same-origin
check, the response headers every page carries, and a brake on password guessing.

Pure (stdlib only); ``app.py`` applies them to every request.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

CSRF_FIELD = "csrf"
# No script, no frame, no foreign resource: the pages are HTML, one stylesheet of their
# own, and forms posting to themselves. Injected markup has nothing it could run or load.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # not "no-referrer": under it a browser sends "Origin: null" even to its own site
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(expected: object, given: object) -> bool:
    """The form's token is the session's (compared in constant time); a missing or
    non-string token on either side never matches."""
    if not isinstance(expected, str) or not isinstance(given, str) or not expected:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


def same_origin(headers: Mapping[str, str]) -> bool:
    """A browser's POST says where its page came from (``Origin``, else ``Referer``):
    refuse one from another site. A client that sends neither (curl, a test client)
    still needs the session's CSRF token, which another site cannot read."""
    host = headers.get("host", "")
    for name in ("origin", "referer"):
        value = headers.get(name)
        if value is None:
            continue
        if value == "null":
            return False
        return urlsplit(value).netloc == host
    return True


class LoginBrake:
    """At most ``attempts`` failed logins per reviewer name in ``window`` seconds; the
    next ones are refused without checking the password until the window moves on."""

    def __init__(
        self,
        attempts: int = 5,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.attempts, self.window, self._clock = attempts, window, clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def blocked(self, name: str) -> bool:
        with self._lock:
            return len(self._recent(name)) >= self.attempts

    def failed(self, name: str) -> None:
        with self._lock:
            self._recent(name).append(self._clock())
            if len(self._failures) > 10_000:  # a flood of invented names: forget the oldest
                self._failures.pop(next(iter(self._failures)))

    def succeeded(self, name: str) -> None:
        with self._lock:
            self._failures.pop(name, None)

    def _recent(self, name: str) -> deque[float]:
        times = self._failures.setdefault(name, deque())
        while times and times[0] <= self._clock() - self.window:
            times.popleft()
        return times
