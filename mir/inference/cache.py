"""The response cache: a model's answer to an identical request, replayed instead of asked.

Why: an eval suite re-run after an unrelated change (a new assertion, a report format)
asks the model the same questions again; on the embedded model that is seconds a case.
An answer is reused only when everything that decides it is the same: the provider's
identity (``cache_identity``: llama's file sha256 (a registry entry's digest, checked
against the file before any answer is looked up), context and chat format; litellm's
model id and server, never its key) and the request (rendered messages,
temperature, max_tokens, seed, JSON schema, logprobs asked). The key is the sha256 of
that, as canonical JSON.

A provider without ``cache_identity`` (scripted replays), or whose identity is None
(litellm replaying a responses file), is never cached: a replay is its own cache.

Storage is one SQLite file in WAL mode (``.mir/cache/responses.sqlite3``): several worker
processes (``mir eval -j 2``) read and write it at once. The cache must never fail a
decision: a corrupt, locked or unwritable file turns it off for this process with one
warning line, and the provider is asked as if there were no cache.

The stored value is the whole ``ModelResponse`` (text, tokens, latency, cost, logprobs,
finish_reason), so a replayed answer goes through the same checks, budget and confidence
as the first; it comes back with ``cached=True`` and the runtime marks its trace event.
Provider errors are never cached.

Nothing under ``.mir/`` may hold a secret, and a model can write one (a key it read in
its prompt, echoed back). With ``redact`` (the trace store's redactor, passed in by the
runtime: the same rules as every trace line), an answer whose text or tokens redaction
would change is NOT stored: its replay is a real call, answered and redacted again.
Storing the redacted text instead would replay an answer the model never gave (a
``[REDACTED]`` that fails validation where the original passed) and make a cached eval
disagree with an uncached one; a secret-bearing answer is rare enough to ask again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mir.inference.application import ModelProvider
from mir.inference.domain import ModelRequest, ModelResponse, ProviderError
from mir.storage import Migration, UnknownMigrationError, migrate

CACHE_FILE = "responses.sqlite3"
# Bumped when the key material or the stored form changes: old entries stop matching.
KEY_VERSION = 2
BUSY_TIMEOUT_MS = 5000
# A cache written before the migration runner holds the table already: a no-op there.
MIGRATIONS = (
    Migration(
        "0001_create_responses",
        "CREATE TABLE IF NOT EXISTS responses ("
        "key TEXT PRIMARY KEY, response TEXT NOT NULL, created REAL NOT NULL)",
    ),
)


def _warn_stderr(message: str) -> None:
    print(f"mir: warning: {message}", file=sys.stderr)


def request_key(identity: dict[str, Any], request: ModelRequest) -> str:
    """sha256 over what decides the answer; the timeout and the key's env var do not."""
    material = {
        "v": KEY_VERSION,
        "identity": identity,
        "messages": [[m.role, m.content] for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "json_schema": request.json_schema,
        "logprobs": request.top_logprobs if request.logprobs else None,
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """``key -> ModelResponse`` in one SQLite file, shared by threads and processes."""

    def __init__(
        self,
        folder: Path,
        *,
        warn: Callable[[str], None] = _warn_stderr,
        redact: Callable[[Any], Any] | None = None,
    ) -> None:
        self.path = Path(folder) / CACHE_FILE
        self._warn = warn
        self._redact = redact
        self.withheld = 0  # answers not stored because they held a secret
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken = False
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return not self._broken

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
            try:
                db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                db.execute("PRAGMA journal_mode=WAL")
                # A lost entry costs one model call again: no fsync on every answer.
                db.execute("PRAGMA synchronous=NORMAL")
                migrate(db, "cache", MIGRATIONS, where=str(self.path))
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _give_up(self, exc: BaseException) -> None:
        """The first failure turns the cache off for this process, with one warning."""
        if not self._broken:
            self._broken = True
            self._warn(
                f"response cache disabled ({type(exc).__name__}: {exc}); answers are not "
                f"cached in this run. Delete {self.path} if it is corrupt."
            )
        self.close()

    def get(self, key: str) -> ModelResponse | None:
        if self._broken:
            return None
        with self._lock:
            try:
                row = (
                    self._connection()
                    .execute("SELECT response FROM responses WHERE key = ?", (key,))
                    .fetchone()
                )
            except (sqlite3.Error, OSError, UnknownMigrationError) as exc:
                self._give_up(exc)
                return None
        if row is None:
            self.misses += 1
            return None
        try:
            response = ModelResponse.model_validate_json(row[0])
        except ValidationError:  # an entry from another version: ask the model again
            self.misses += 1
            return None
        self.hits += 1
        return response

    def put(self, key: str, response: ModelResponse) -> None:
        if self._broken:
            return
        if self._redact is not None and _holds_a_secret(response, self._redact):
            self.withheld += 1
            return
        stored = response.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            try:
                db = self._connection()
                db.execute(
                    "INSERT OR REPLACE INTO responses (key, response, created) VALUES (?, ?, ?)",
                    (key, stored, time.time()),
                )
                db.commit()
            except (sqlite3.Error, OSError, UnknownMigrationError) as exc:
                self._give_up(exc)

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()


def _holds_a_secret(response: ModelResponse, redact: Callable[[Any], Any]) -> bool:
    """Whether redaction would change any text the stored answer keeps."""
    texts = [response.text, response.model, response.finish_reason or ""]
    for token in response.logprobs or ():
        texts += [token.token, *token.top]
    return bool(redact(texts) != texts)


class CachedProvider:
    """A provider whose answers are looked up in a ``ResponseCache`` first.

    It deliberately does not expose the inner provider's ``loaded`` (llama's warm-up
    hook): a spinner must not load a model that the cache may make unnecessary.
    """

    def __init__(self, inner: ModelProvider, cache: ResponseCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name

    def complete(self, request: ModelRequest) -> ModelResponse:
        key = self._key(request)
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit.model_copy(update={"cached": True})
        response = self.inner.complete(request)
        if key is not None:
            self.cache.put(key, response)
        return response

    def _key(self, request: ModelRequest) -> str | None:
        identify = getattr(self.inner, "cache_identity", None)
        if identify is None or not self.cache.enabled:
            return None
        try:
            identity = identify(request)
        except (OSError, ProviderError):
            # The model file vanished, or is not the registered one: no answer is
            # replayed for it, and the provider reports why when asked.
            return None
        return None if identity is None else request_key(identity, request)


def with_cache(provider: ModelProvider, cache: ResponseCache | None) -> ModelProvider:
    """``provider`` behind ``cache``; unchanged when there is no cache or it cannot be
    cached (no ``cache_identity``: scripted replays)."""
    if cache is None or getattr(provider, "cache_identity", None) is None:
        return provider
    return CachedProvider(provider, cache)
