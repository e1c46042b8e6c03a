"""Personal data kept off remote models: recognized in a prompt, masked or blocked
before it leaves, restored in the answer (public interface)."""

from mir.privacy.domain import KINDS, Finding, Masking, PiiPolicy, PiiSettings
from mir.privacy.guard import PiiBlocked, PiiGuard, guard_pii, mask_request, route_policy
from mir.privacy.recognizers import find_pii

__all__ = [
    "KINDS",
    "Finding",
    "Masking",
    "PiiBlocked",
    "PiiGuard",
    "PiiPolicy",
    "PiiSettings",
    "find_pii",
    "guard_pii",
    "mask_request",
    "route_policy",
]
