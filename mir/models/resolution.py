"""Turning a contract route that names a registry model into the concrete route of the
version one flow uses (production, the canary for its share of flows, or a pinned one).

The runtime asks ``RouteResolver.resolve(route, flow_id)`` before each model call; a
route whose model is not a registry name comes back unchanged. Concrete routes are
cached per (route, version), so the runtime's per-route provider cache (one loaded model
per route) keeps working and a new version gets its own provider.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from mir.contracts import Route
from mir.errors import ConfigError
from mir.models.domain import ModelEntry, ModelRef, Registry, Selection, Stage
from mir.models.registry_file import FILE_NAME, artifact_path, read_registry

# llama model values that are files or the embedded model, never registry names.
_LITERAL = ("default",)


@dataclass(frozen=True)
class Resolved:
    route: Route  # what the provider is built from and the request is sent with
    selection: Selection | None = None  # None: the route does not name a registry model

    def trace(self) -> dict[str, str] | None:
        """What the ``infer`` event records about the version used."""
        if self.selection is None:
            return None
        entry = self.selection.entry
        return {
            "name": entry.name,
            "version": entry.version,
            "stage": str(entry.stage),
            "arm": self.selection.arm,
        }


def names_registry_model(route: Route, registry: Registry | None) -> bool:
    if route.provider not in ("llama", "litellm") or not route.model:
        return False
    ref = ModelRef.parse(route.model)
    return registry is not None and ref.name in registry.names


def check_routes(routes: list[Route], registry: Registry | None, where: str) -> None:
    """At load: a route's model that looks like a registry name must be in the registry.

    ``NAME@VERSION`` always means the registry; a llama model that is neither 'default'
    nor a ``.gguf`` path can only be a registry name. litellm ids without '@' that are
    not registry names go to litellm unchanged (``openai/gpt-4o-mini``).
    """
    for route in routes:
        model = route.model
        if route.provider not in ("llama", "litellm") or not model:
            continue
        ref = ModelRef.parse(model)
        if registry is not None and registry.has(ref):
            continue
        registry_like = "@" in model or (
            route.provider == "llama" and model not in _LITERAL and not model.endswith(".gguf")
        )
        if not registry_like:
            continue
        label = route.name or route.provider
        if registry is None:
            raise ConfigError(
                f"route {label!r} names model {model!r}, but the project has no {FILE_NAME}",
                where=where,
                hint="register it (`mir models register`) or give a .gguf path or 'default'",
            )
        known = ", ".join(registry.names) or "none"
        if ref.name in registry.names:
            versions = ", ".join(e.version for e in registry.versions(ref.name))
            problem = f"{ref.name} has no version {ref.version!r} (versions: {versions})"
        else:
            problem = f"unknown model {ref.name!r} (registry names: {known})"
        raise ConfigError(
            f"route {label!r}: {problem}", where=where, hint=f"see `mir models list` ({FILE_NAME})"
        )


class RouteResolver:
    """The registry as the runtime sees it; ``registry`` may be replaced at any time
    (a hot swap) and each ``resolve`` reads it once."""

    def __init__(self, root: Path, registry: Registry | None = None):
        self.root = root
        self.registry = registry if registry is not None else read_registry(root)
        self._routes: dict[tuple[int, str, str], Route] = {}
        self._lock = threading.Lock()

    def reload(self) -> Registry | None:
        self.registry = read_registry(self.root)
        return self.registry

    def resolve(self, route: Route, flow_id: str) -> Resolved:
        """Raises ``RegistryError`` when the name has no version this flow can use (the
        runtime records it as a provider failure and moves on)."""
        registry = self.registry
        if not names_registry_model(route, registry):
            return Resolved(route)
        assert registry is not None and route.model is not None
        selection = registry.select(ModelRef.parse(route.model), flow_id)
        key = (id(route), selection.entry.name, selection.entry.version)
        with self._lock:
            concrete = self._routes.get(key)
            if concrete is None:
                concrete = self._routes[key] = self._concrete(route, selection.entry)
        return Resolved(concrete, selection)

    def reachable(self, route: Route, registry: Registry) -> list[Route]:
        """Every concrete route ``registry`` can hand out for ``route`` (production and
        canary versions): what a hot swap loads before it swaps the registry in."""
        if not names_registry_model(route, registry) or route.model is None:
            return []
        ref = ModelRef.parse(route.model)
        entries = [
            e
            for e in registry.versions(ref.name)
            if (ref.version is not None and e.version == ref.version)
            or (ref.version is None and str(e.stage) in ("production", "canary"))
        ]
        found = []
        for entry in entries:
            key = (id(route), entry.name, entry.version)
            with self._lock:
                concrete = self._routes.get(key)
                if concrete is None:
                    concrete = self._routes[key] = self._concrete(route, entry)
            found.append(concrete)
        return found

    def shadow(self, route: Route) -> Resolved | None:
        """The registry's ``shadow`` version of a route naming ``NAME`` (a pinned
        ``NAME@VERSION`` has none), as its concrete route with arm "shadow"; None when
        the route's model has no shadow version now."""
        registry = self.registry
        if not names_registry_model(route, registry):
            return None
        assert registry is not None and route.model is not None
        ref = ModelRef.parse(route.model)
        entry = None if ref.version else registry.in_stage(ref.name, Stage.SHADOW)
        if entry is None:
            return None
        key = (id(route), entry.name, entry.version)
        with self._lock:
            concrete = self._routes.get(key)
            if concrete is None:
                concrete = self._routes[key] = self._concrete(route, entry)
        return Resolved(concrete, Selection(entry=entry, arm="shadow"))

    def _concrete(self, route: Route, entry: ModelEntry) -> Route:
        update: dict[str, object] = {
            "provider": entry.provider,
            "api_base": entry.api_base or route.api_base,
            "api_key_env": entry.api_key_env or route.api_key_env,
            "sha256": entry.sha256,
            "n_ctx": entry.context or route.n_ctx,
            "queue": entry.queue if entry.queue is not None else route.queue,
        }
        if entry.provider == "llama":
            update["model"] = str(artifact_path(entry, self.root))
        else:
            update["model"] = entry.artifact
        return route.model_copy(update=update)
