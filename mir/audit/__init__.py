"""``mir traces verify``: the trace store's integrity and every stored review judged
against the declared reviewers (public interface)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.audit.review_audit import ReviewAudit, audit_reviews
    from mir.audit.trace_audit import Verification, verify_project


# The audit reads the whole trace store and checks signatures: loaded on first use.
def __getattr__(name: str) -> Any:
    if name in ("ReviewAudit", "audit_reviews"):
        from mir.audit import review_audit

        return getattr(review_audit, name)
    if name in ("Verification", "verify_project"):
        from mir.audit import trace_audit

        return getattr(trace_audit, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ReviewAudit", "Verification", "audit_reviews", "verify_project"]
