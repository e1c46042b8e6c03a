"""The guard in front of a route's model: personal data is masked out of the prompt
before it leaves (``mask``), or the call is refused (``block``); the placeholders the
answer carries are put back before the integrity check reads it.
"""

from __future__ import annotations

from typing import Any

from mir.contracts import Route
from mir.inference import ModelProvider, ModelRequest, ModelResponse, ProviderError
from mir.privacy.domain import Masking, PiiPolicy, PiiSettings
from mir.privacy.recognizers import find_pii


class PiiBlocked(ProviderError):
    """The prompt holds personal data and the route's ``pii`` is ``block``: it was never
    sent (the runtime records ``pii_blocked``; the next route or the rules decide)."""


def route_policy(route: Route) -> PiiPolicy:
    """A route's ``pii``; unset: ``mask`` for a remote (litellm) route, else ``allow``."""
    if route.pii is not None:
        return route.pii
    return "mask" if route.provider == "litellm" else "allow"


def guard_pii(provider: ModelProvider, route: Route, settings: PiiSettings) -> ModelProvider:
    """``provider`` behind the route's PII policy (unchanged for ``allow``)."""
    policy = route_policy(route)
    return provider if policy == "allow" else PiiGuard(provider, policy, settings)


class PiiGuard:
    """A provider whose prompts leave with their personal data masked (or not at all).

    It sits outside the response cache, so the cache keys and stores masked text only.
    Every other attribute (``refusal``, ``loaded``, ...) is the inner provider's.
    """

    def __init__(self, inner: ModelProvider, policy: PiiPolicy, settings: PiiSettings) -> None:
        self.inner = inner
        self.policy = policy
        self.settings = settings
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, request: ModelRequest) -> ModelResponse:
        masked, masking = mask_request(request, self.settings)
        counts = masking.counts()
        if not counts:
            return self.inner.complete(request)
        if self.policy == "block":
            found = ", ".join(f"{n} {kind}" for kind, n in counts.items())
            raise PiiBlocked(f"the prompt holds personal data ({found}); this route's pii is block")
        response = self.inner.complete(masked)
        text, restored = masking.restore(response.text)
        return response.model_copy(
            update={"text": text, "pii": {"masked": counts, "restored": restored}}
        )


def mask_request(request: ModelRequest, settings: PiiSettings) -> tuple[ModelRequest, Masking]:
    """``request`` with the personal data of every message replaced by placeholders."""
    masking = Masking(taken="\n".join(m.content for m in request.messages))
    messages = tuple(
        m.model_copy(
            update={"content": masking.mask(m.content, find_pii(m.content, settings.phone_region))}
        )
        for m in request.messages
    )
    return request.model_copy(update={"messages": messages}), masking
