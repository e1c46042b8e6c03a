"""``scripted`` provider: replays raw model outputs from a JSONL file, in order.

Each line is either a JSON string (the raw text the "model" says, which may be
malformed JSON on purpose) or an object ``{"text": "...", "prompt_tokens": n,
"completion_tokens": m, "finish_reason": "stop"}``. For offline tests, demos and evals.
An object may also carry ``"logprobs": [{"token": "re", "logprob": -0.4, "top": {"re":
-0.4, "esc": -1.9}}, ...]`` (tokens spelling the text), so an agent with
``confidence_source: logprobs`` replays its token-probability confidence offline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from mir.errors import ConfigError
from mir.inference.domain import ModelRequest, ModelResponse, ProviderError


class ScriptedProvider:
    name = "scripted"

    def __init__(self, responses: Iterable[ModelResponse | str], label: str = "scripted"):
        self._queue = [
            r
            if isinstance(r, ModelResponse)
            else ModelResponse(text=r, provider=self.name, model=label)
            for r in responses
        ]
        self._label = label
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProvider:
        return cls(read_responses(path), label=path.name)

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.perf_counter()
        self.requests.append(request)
        if not self._queue:
            raise ProviderError("scripted responses exhausted")
        response = self._queue.pop(0)
        latency = (time.perf_counter() - started) * 1000
        return response.model_copy(update={"latency_ms": latency})


def read_responses(path: Path) -> list[ModelResponse]:
    """Parse a responses file (one JSON string or ``{"text": ...}`` object a line)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (FileNotFoundError, IsADirectoryError) as exc:
        raise ConfigError("responses file not found", where=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError("responses file is not valid UTF-8", where=str(path)) from exc
    responses: list[ModelResponse] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"not a JSON value: {exc.msg}",
                where=f"{path}:{number}",
                hint="each line is a JSON string or an object with a 'text' key",
            ) from exc
        if isinstance(item, str):
            responses.append(ModelResponse(text=item, provider="scripted", model=path.name))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            try:
                responses.append(ModelResponse(provider="scripted", model=path.name, **item))
            except (TypeError, ValidationError) as exc:
                raise ConfigError(
                    f"invalid response object: {exc}", where=f"{path}:{number}"
                ) from exc
        else:
            raise ConfigError("expected a JSON string or {'text': ...}", where=f"{path}:{number}")
    return responses
