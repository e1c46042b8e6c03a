"""Reporting what a decision is doing while it runs (for a spinner; optional).

Decisions on the local model take seconds, and trace events are buffered until a
checkpoint, so the CLI cannot follow them. ``observed`` wraps an agent's model
providers and executors so that a callback hears each step as it starts: loading the
model, inferring (attempt n of m), executing. The wrapped parts behave exactly like the
originals; a callback that raises is ignored, so a display can never fail a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mir.contracts import Route
from mir.inference import ModelProvider, ModelRequest, ModelResponse
from mir.runtime.ports import AgentParts, Executor, RuntimeDeps

Progress = Callable[[str], None]


def observed(
    parts: AgentParts, deps: RuntimeDeps, progress: Progress
) -> tuple[AgentParts, RuntimeDeps]:
    """``parts`` and ``deps`` whose providers and executors report to ``progress``."""
    say = _Safe(progress)
    attempts = parts.contract.retries + 1
    providers: dict[int, _ObservedProvider] = {}

    def provider_for(route: Route) -> ModelProvider:
        if id(route) not in providers:
            providers[id(route)] = _ObservedProvider(deps.providers(route), route, say, attempts)
        return providers[id(route)]

    executors = {
        action: _observed_executor(action, executor, say)
        for action, executor in parts.executors.items()
    }
    return replace(parts, executors=executors), replace(deps, providers=provider_for)


@dataclass
class _Safe:
    progress: Progress

    def __call__(self, text: str) -> None:
        try:
            self.progress(text)
        except Exception:  # a display problem must never fail or alter a decision
            return


@dataclass
class _ObservedProvider:
    inner: ModelProvider
    route: Route
    say: _Safe
    attempts: int
    calls: int = field(default=0)

    @property
    def name(self) -> str:
        return self.inner.name

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        model = self.route.model or ""
        model = model.rsplit("/", 1)[-1] if model.endswith(".gguf") else model  # a path
        label = "/".join(p for p in (self.inner.name, model) if p)
        warm_up = getattr(self.inner, "loaded", None)  # llama: loads the model once
        if self.calls == 1 and callable(warm_up):
            self.say(f"loading model {label}")
            warm_up()
        self.say(f"inferring with {label} (attempt {self.calls}/{self.attempts})")
        return self.inner.complete(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _observed_executor(action: str, executor: Executor, say: _Safe) -> Executor:
    def run(params: Mapping[str, Any], **kwargs: Any) -> Mapping[str, Any] | None:
        say(f"executing {action}")
        return executor(params, **kwargs)

    return run
