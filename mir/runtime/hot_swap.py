"""Hot swap: a long-running agent follows models.toml without a restart.

On a change the new registry's versions are loaded first (on the watcher's thread, off
every caller's path), then ``RouteResolver.registry`` is replaced (one reference
assignment). A flow resolves each route once, before its attempts, so a decision that
started on the old version finishes on it; the old model stays in ``MODEL_CACHE`` until
the memory budget (``[tool.mir.model] memory_budget_mb``) unloads it as least recently used.
"""

from __future__ import annotations

from mir.models import Registry, RegistryWatcher, Subscription
from mir.runtime.ports import AgentParts, RuntimeDeps


def follow_registry(parts: AgentParts, deps: RuntimeDeps) -> Subscription | None:
    """Subscribe the agent to its project's models.toml; None when it has no registry."""
    resolver = deps.models
    if resolver is None:
        return None

    def swap(registry: Registry) -> None:
        for route in parts.contract.routes:
            for concrete in resolver.reachable(route, registry):
                warm(deps, concrete)
        resolver.registry = registry

    return RegistryWatcher.for_root(resolver.root).subscribe(swap)


def warm(deps: RuntimeDeps, route: object) -> None:
    """Load the model a route will use (llama); remote providers need nothing."""
    provider = deps.providers(route)  # type: ignore[arg-type]
    inner = getattr(provider, "inner", provider)  # behind the response cache
    loaded = getattr(inner, "loaded", None)
    if callable(loaded):
        loaded()
