"""``mir traces verify``: the trace store's integrity and every review's signature, in
one use case, said in lines (``Verification.lines``).

Signatures are checked even when the chain is broken: an edited review is then named
by its flow, whatever else was edited."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mir.audit.review_audit import ReviewAudit, audit_reviews
from mir.traces import IntegrityReport


@dataclass(frozen=True)
class Verification:
    ok: bool
    lines: list[str]  # for the user, in order: the chain's verdict, then the reviews'


def verify_project(
    project: Path | None, *, full: bool, warn: Callable[[str], None]
) -> Verification:
    """Check the traces against their manifest and re-hash the chain (only the lines
    added since the last verify unless ``full``), then every review's signature."""
    from mir.project import find_project
    from mir.traces import project_store, verify_traces

    with project_store(project, warn) as store:
        report = verify_traces(store, full=full)
        audit = audit_reviews(find_project(project), store, full=full)
    lines = integrity_lines(report, store.segments_dir) + review_lines(audit)
    return Verification(report.ok and audit.ok, lines)


def integrity_lines(report: IntegrityReport, folder: Path) -> list[str]:
    lines = [f"note: {notice}" for notice in report.notices]
    scope = (
        "every line re-hashed"
        if report.full
        else f"{report.checked} new line(s) re-hashed (--full: all)"
    )
    if report.ok:
        return [
            *lines,
            f"ok: {report.lines} line(s) in {report.segments} segment(s) verified, "
            f"{scope}; chain digest {report.digest}",
        ]
    for item in report.breaks:
        event = f" (event {item.event_id})" if item.event_id else ""
        # the path, not the bare name: a reader must find the file (relative to the cwd)
        lines.append(f"{_shown_path(folder / item.segment)}:{item.line}: {item.problem}{event}")
    lines.append(f"TAMPERED: {len(report.breaks)} break(s) in {report.lines} line(s)")
    return lines


def review_lines(audit: ReviewAudit) -> list[str]:
    lines = [f"note: {notice}" for notice in audit.notes]
    for item in audit.findings:
        where = f" (event {item.seq})" if item.seq >= 0 else ""
        lines.append(
            f"flow {item.flow_id}{where}: {item.kind}: review by {item.reviewer}: {item.detail}"
        )
    verdict = "ok" if audit.ok else f"{len(audit.findings)} bad review(s)"
    lines.append(f"reviews: {audit.reviews} checked, {audit.signed} signed: {verdict}")
    return lines


def _shown_path(path: Path) -> str:
    here = Path.cwd().resolve()
    full = path.resolve()
    return str(full.relative_to(here)) if full.is_relative_to(here) else str(full)
