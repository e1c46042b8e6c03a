"""What every rule module shares: the Finding constructor for an import edge."""

from __future__ import annotations

from mir.boundaries.findings import Finding
from mir.boundaries.model import Edge


def import_finding(
    code: str, rule: str, edge: Edge, message: str, capability: str | None
) -> Finding:
    """A finding located at the import statement of ``edge``."""
    return Finding(
        code=code,
        path=edge.importer.path,
        line=edge.ref.line,
        column=edge.ref.column,
        message=message,
        rule=rule,
        capability=capability,
        importer=edge.importer.name,
        imported=edge.target,
    )
