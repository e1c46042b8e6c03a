"""``litellm`` provider: any remote or OpenAI-compatible server (vLLM, Ollama, llama.cpp's
server, hosted APIs) through litellm.

litellm is imported lazily, inside the first call: the import takes ~8 s and must never
slow down ``mir --help`` or a run that stays local. Its cost map is the copy bundled
with the package (``LITELLM_LOCAL_MODEL_COST_MAP``), never fetched at run time.

Retries are off (``num_retries=0``): the runtime owns the retry budget, and a hidden
retry inside litellm would spend tokens the contract's budget never sees.

Offline replay: given ``mock_responses``, each call hands the next text to litellm's
``mock_response``, so the whole litellm path (response parsing, usage, cost) runs with
no server and no network. ``provider_for`` builds this from a litellm route plus a
responses file.

Back-pressure: every (api_base, model) has one ``Scheduler`` per process
(``REMOTE_SCHEDULERS``, like llama's ``MODEL_CACHE``): ``[tool.mir.model]
remote_concurrency`` calls run at once (the server's own parallelism), a bounded queue
waits by priority, and a call that cannot meet its deadline is shed (``ShedError``). A
call's timeout is min(``timeout_s``, time left to ``deadline_at``), measured after its wait
in the queue; a timeout that came from the deadline is a ``ShedError`` too, and the caller
stops waiting at the deadline whatever the HTTP client does (the call runs in a thread that
keeps its slot until it ends: see ``_call_by_deadline``). Replays
(``mock_responses``) have no server to protect and skip the queue.

The remote guard (``remote_servers``, beside the schedulers): with
``MIR_BLOCK_REMOTE_MODELS=1`` (set by mir's test suite) only loopback servers may be
called; hosted APIs and other hosts fail fast with a ``ConfigError`` instead of a slow
network timeout.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Iterable
from typing import Any

from mir.errors import ConfigError, MirError
from mir.inference.domain import (
    ModelRequest,
    ModelResponse,
    ProviderError,
    ShedError,
    chat_logprobs,
)
from mir.inference.remote_servers import REMOTE_SCHEDULERS, RemoteSchedulers, check_remote_allowed
from mir.inference.scheduler import DEFAULT_QUEUE, Scheduler

INSTALL_REMOTE = "pip install 'mir[remote]'"
# OpenAI-compatible servers need *a* key even when they ignore it.
PLACEHOLDER_KEY = "not-needed"
DEFAULT_REMOTE_CONCURRENCY = 4


def _litellm() -> Any:
    if importlib.util.find_spec("litellm") is None:
        raise ConfigError(
            "the litellm provider needs litellm, which is not installed",
            hint=f"run `{INSTALL_REMOTE}`",
        )
    # Before the import: litellm reads it at import time to decide whether to fetch.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def response_format_for(
    litellm: Any, model: str, api_base: str | None, schema: dict[str, Any]
) -> dict[str, Any]:
    """How to ask this endpoint for schema-shaped JSON.

    A custom ``api_base`` is an OpenAI-compatible server: llama.cpp's accepts
    ``json_object`` + ``schema`` (and answers HTTP 500 to ``json_schema``); servers that
    ignore the extra key still give JSON mode. Hosted models get ``json_schema`` when
    litellm's bundled model map says they support it, plain JSON mode otherwise.
    """
    if api_base is None:
        try:
            if litellm.supports_response_schema(model=model):
                return {
                    "type": "json_schema",
                    "json_schema": {"name": "decision", "schema": schema},
                }
        except Exception:  # unknown model: the map cannot say
            pass
        return {"type": "json_object"}
    return {"type": "json_object", "schema": schema}


class LiteLLMProvider:
    """Call a model through litellm: ``model`` is a litellm id such as ``openai/NAME``."""

    name = "litellm"

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        mock_responses: Iterable[str] | None = None,
        concurrency: int = DEFAULT_REMOTE_CONCURRENCY,
        queue: int | None = None,
        schedulers: RemoteSchedulers | None = None,
    ) -> None:
        if not model:
            raise ConfigError("the litellm provider needs a model id, e.g. 'openai/gpt-4o-mini'")
        self.model = model
        self.api_base = api_base
        self.api_key_env = api_key_env
        self._mocks = None if mock_responses is None else list(mock_responses)
        self.concurrency = concurrency
        self.queue = DEFAULT_QUEUE if queue is None else queue
        self._schedulers = REMOTE_SCHEDULERS if schedulers is None else schedulers

    @property
    def mocked(self) -> bool:
        """True when calls replay recorded texts through litellm's ``mock_response``."""
        return self._mocks is not None

    def _api_key(self, api_key_env: str | None, api_base: str | None) -> str | None:
        if api_key_env:
            key = os.environ.get(api_key_env)
            if not key:
                raise ConfigError(
                    f"environment variable {api_key_env} is not set",
                    hint="export the API key in it, or remove api_key_env from the route",
                )
            return key
        return PLACEHOLDER_KEY if api_base else None

    def cache_identity(self, request: ModelRequest) -> dict[str, Any] | None:
        """What besides the request decides the answer (the response cache's key): the
        model id and the server. Never the key. None for a replay: a responses file is
        replayed in order, so its answers must not be cached or served from the cache."""
        if self.mocked:
            return None
        return {
            "provider": self.name,
            "model": request.model or self.model,
            "api_base": request.api_base or self.api_base,
        }

    def refusal(self, request: ModelRequest) -> str | None:
        """Why this request would be shed right now (see ``Scheduler.refusal``); None for a
        replay or a server not called yet in this process."""
        if self.mocked:
            return None
        scheduler = self._schedulers.peek(
            request.api_base or self.api_base, request.model or self.model
        )
        return (
            None if scheduler is None else scheduler.refusal(request.priority, request.deadline_at)
        )

    def complete(self, request: ModelRequest) -> ModelResponse:
        if self.mocked:
            return self._call(request)
        model = request.model or self.model
        api_base = request.api_base or self.api_base
        check_remote_allowed(model, api_base)
        _litellm()  # the first import (~8 s) is no service time of the server's
        scheduler = self._schedulers.get(
            api_base, model, capacity=self.concurrency, queue=self.queue
        )
        if request.deadline_at is None:
            with scheduler.slot(request.priority, None):
                return self._call(request)
        return self._call_by_deadline(request, scheduler)

    def _call_by_deadline(self, request: ModelRequest, scheduler: Scheduler) -> ModelResponse:
        """Return by the deadline whatever the HTTP client does: its timeout applies per
        phase (connect, then read: up to twice the time left), so the call runs in a thread
        the caller stops waiting for at the deadline. The slot is held until the call
        really ends, so the queue sees the server as busy as it is."""
        assert request.deadline_at is not None
        slot = scheduler.slot(request.priority, request.deadline_at)
        slot.__enter__()  # raises ShedError: no thread for a shed call
        done = threading.Event()
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["response"] = self._call(request)
            except BaseException as exc:  # handed to the caller, who re-raises it
                outcome["error"] = exc
            finally:
                slot.__exit__(None, None, None)
                done.set()

        threading.Thread(target=call, name="mir-litellm-call", daemon=True).start()
        if not done.wait(max(0.0, request.deadline_at - time.monotonic())):
            raise ShedError("shed: the server had not answered at the deadline")
        if "error" in outcome:
            raise outcome["error"]
        return outcome["response"]

    def _call(self, request: ModelRequest) -> ModelResponse:
        model = request.model or self.model
        api_base = request.api_base or self.api_base
        # The deadline bounds the call too: what is left of it after the queue's wait.
        timeout_s = request.timeout_s
        left_s = None if request.deadline_at is None else request.deadline_at - time.monotonic()
        if left_s is not None and left_s <= 0:
            raise ShedError("shed: the deadline passed before the call was sent")
        by_deadline = left_s is not None and left_s < timeout_s
        if by_deadline:
            timeout_s = left_s
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "timeout": timeout_s,
            "num_retries": 0,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.logprobs:
            # Servers that cannot give them ignore or drop these (drop_params below);
            # the runtime then falls back to the reported confidence and says so.
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        if self._mocks is not None:
            if not self._mocks:
                raise ProviderError("litellm: mock responses exhausted")
            kwargs["mock_response"] = self._mocks.pop(0)
        else:
            kwargs["api_base"] = api_base
            kwargs["api_key"] = self._api_key(request.api_key_env or self.api_key_env, api_base)
        litellm = _litellm()
        if request.json_schema is not None:
            kwargs["response_format"] = response_format_for(
                litellm, model, api_base, request.json_schema
            )
            # A hosted model without JSON mode gets the prompt alone rather than an error.
            kwargs["drop_params"] = True
        if request.logprobs:
            kwargs["drop_params"] = True
        started = time.perf_counter()
        try:
            response = litellm.completion(**kwargs)
        except MirError:
            raise
        except Exception as exc:  # every failure of the remote call is the provider's
            if by_deadline and _timed_out(exc, request.deadline_at):
                raise ShedError(
                    f"shed: the server had not answered at the deadline ({timeout_s * 1000:.0f} ms)"
                ) from None
            message = str(exc)
            key = kwargs.get("api_key")
            if key and key != PLACEHOLDER_KEY:  # the message is traced: never the key
                message = message.replace(key, "***")
            raise ProviderError(f"litellm: {type(exc).__name__}: {message}") from None
        latency_ms = (time.perf_counter() - started) * 1000
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return ModelResponse(
            text=choice.message.content or "",
            provider=self.name,
            model=model,
            finish_reason=choice.finish_reason,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            cost_usd=_cost(litellm, response),
            latency_ms=latency_ms,
            logprobs=_logprobs(choice) if request.logprobs else None,
        )


def _timed_out(exc: Exception, deadline_at: float | None) -> bool:
    """A timeout (litellm's or the HTTP client's), or any failure once the deadline passed."""
    if "timeout" in type(exc).__name__.lower():
        return True
    return deadline_at is not None and time.monotonic() >= deadline_at


def _logprobs(choice: Any) -> Any:
    """The choice's OpenAI-format logprobs, or None (a server that gave none, a mock)."""
    try:
        return chat_logprobs(getattr(choice, "logprobs", None))
    except (TypeError, ValueError):  # a server's malformed logprobs must not fail a call
        return None


def _cost(litellm: Any, response: Any) -> float:
    """Cost from litellm's bundled price map; 0.0 for models it does not know (local
    servers, custom names) -- a missing price must never fail a decision."""
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:
        return 0.0
