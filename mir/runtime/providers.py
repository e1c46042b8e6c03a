"""How ``load_agent`` turns its options into the agent's providers and routes: one
provider per route (``--provider`` / ``--model`` overrides, recorded responses, the
response cache), and the source its flows carry (``replay`` for recorded answers)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from mir.contracts import Route
from mir.errors import UsageError
from mir.inference import (
    MODEL_CACHE,
    ModelProvider,
    ModelSettings,
    ResponseCache,
    ScriptedProvider,
    provider_for,
    with_cache,
)
from mir.privacy import PiiSettings, guard_pii
from mir.project import Project
from mir.runtime.ports import AgentParts
from mir.traces import FlowSource


@dataclass
class _Providers:
    """One provider per route for the agent's lifetime (a scripted file is consumed in
    order across decisions; a llama model is loaded once)."""

    project: Project
    override: str | None
    responses: Path | None
    # ``load_agent(response_cache=...)``: real model answers are cached there and replayed.
    answers: ResponseCache | None = None
    # The agent takes confidence from token probabilities: llama loads with logits_all.
    logprobs: bool = False

    def __post_init__(self) -> None:
        self._cache: dict[int, ModelProvider] = {}
        self._shared: ModelProvider | None = None
        self._settings = self.project.section("model", ModelSettings)
        self._privacy = self.project.section("privacy", PiiSettings)
        if self._settings.memory_budget_mb is not None:
            # The cache is per process: the last project loaded sets its budget.
            MODEL_CACHE.budget_mb = self._settings.memory_budget_mb

    def close(self) -> None:
        if self.answers is not None:
            self.answers.close()

    def __call__(self, route: Route) -> ModelProvider:
        if self.override == "scripted":
            if self._shared is None:
                assert self.responses is not None
                self._shared = ScriptedProvider.from_file(self.responses)
            return self._shared
        if id(route) not in self._cache:
            provider = provider_for(
                route,
                responses=self.responses,
                settings=self._settings,
                root=self.project.root,
                logprobs=self.logprobs,
            )
            self._cache[id(route)] = guard_pii(
                with_cache(provider, self.answers), route, self._privacy
            )
        return self._cache[id(route)]


def _override_routes(parts: AgentParts, provider: str | None) -> AgentParts:
    contract = parts.contract
    if provider is None or provider == "scripted":
        return parts
    if provider == "rules":
        routes = [Route(name="rules", provider="rules")]
    else:
        routes = [r for r in contract.routes if r.provider == provider]
        if not routes:
            raise UsageError(
                f"--provider {provider}: the contract of {parts.name} has no {provider} route",
                hint=f"routes: {', '.join(r.provider for r in contract.routes)}",
            )
    names = {r.name for r in routes}
    ensemble = contract.ensemble
    if ensemble is not None and not set(ensemble.routes) <= names:
        ensemble = None
    new = contract.model_copy(update={"routes": routes, "ensemble": ensemble})
    return replace(parts, contract=new)


def _override_model(parts: AgentParts, model: str | None) -> AgentParts:
    if model is None:
        return parts
    routes = [
        r if r.provider == "rules" else r.model_copy(update={"model": model})
        for r in parts.contract.routes
    ]
    return replace(parts, contract=parts.contract.model_copy(update={"routes": routes}))


def _production_source(parts: AgentParts, responses: str | Path | None) -> FlowSource:
    """``replay`` when the agent's model answers come from recorded responses (a
    ``responses`` file given here, or a route that replays its own): such a run may still
    execute, but it is no evidence about any model (drift, release comparisons)."""
    replays = responses is not None or any(
        route.provider == "scripted" or route.responses is not None
        for route in parts.contract.routes
        if route.provider != "rules"
    )
    return "replay" if replays else "production"
