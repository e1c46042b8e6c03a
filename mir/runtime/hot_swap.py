"""Hot swap: a long-running agent follows models.toml without a restart.

On a change the new registry's versions are loaded first (on the watcher's thread, off
every caller's path), then ``RouteResolver.registry`` is replaced (one reference
assignment). A flow resolves each route once, before its attempts, so a decision that
started on the old version finishes on it; the new version's calls wait until the calls
queued on the old one at the swap are done (``Scheduler.follow``). The old model stays
in ``MODEL_CACHE`` until the memory budget (``[tool.mir.model] memory_budget_mb``)
unloads it as least recently used.
"""

from __future__ import annotations

from typing import Any

from mir.contracts import Route
from mir.models import Registry, RegistryWatcher, RouteResolver, Subscription
from mir.runtime.ports import AgentParts, RuntimeDeps


def follow_registry(parts: AgentParts, deps: RuntimeDeps) -> Subscription | None:
    """Subscribe the agent to its project's models.toml; None when it has no registry."""
    resolver = deps.models
    if not isinstance(resolver, RouteResolver):  # no registry (or a shadow's routes)
        return None

    def swap(registry: Registry) -> None:
        old = resolver.registry
        for route in parts.contract.routes:
            before = _models(deps, resolver.reachable(route, old), load=False)
            after = _models(deps, resolver.reachable(route, registry), load=True)
            # A new version serves nothing until the calls already queued on the one it
            # replaces are done: one queue drains, then the other starts (``follow``).
            for model in after:
                if not any(model is b for b in before):
                    for previous in before:
                        if not any(previous is a for a in after):
                            model.scheduler.follow(previous.scheduler)
        resolver.registry = registry

    return RegistryWatcher.for_root(resolver.root).subscribe(swap)


def _models(deps: RuntimeDeps, routes: list[Route], *, load: bool) -> list[Any]:
    """The loaded llama models of these routes (loading them first when ``load``);
    remote routes have none."""
    found = []
    for route in routes:
        provider = deps.providers(route)
        inner = getattr(provider, "inner", provider)  # behind the response cache
        get = getattr(inner, "loaded" if load else "current", None)
        model = get() if callable(get) else None
        if model is not None:
            found.append(model)
    return found
