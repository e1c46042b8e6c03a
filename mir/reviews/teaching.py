"""``mir review export``: reviewed flows into each agent's eval suite (``--eval``) and a
fine-tuning file (``--sft``). See ``export.py`` for what a case expects."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.contracts import load_contract
from mir.errors import UsageError
from mir.project import Project, find_project
from mir.reviews.export import SuiteExport, new_cases, read_suite, sft_lines, write_lines
from mir.reviews.reviewed import ReviewedFlow, reviewed_flows
from mir.reviews.suite_file import append_cases
from mir.traces import TraceStore, resolve_agent


@dataclass
class ExportReport:
    suites: list[SuiteExport] = field(default_factory=list)
    sft: Path | None = None
    sft_lines: int = 0
    notes: list[str] = field(default_factory=list)
    reviewed: int = 0


def export_reviews(
    project_root: str | Path | Project | None = None,
    *,
    to_eval: bool = False,
    suite: Path | None = None,
    sft: Path | None = None,
    agent: str | None = None,
) -> ExportReport:
    if not to_eval and sft is None:
        raise UsageError("nothing to export", hint="give --eval and/or --sft FILE")
    if suite is not None and not to_eval:
        raise UsageError("--suite names where --eval writes", hint="add --eval")
    proj = (
        project_root
        if isinstance(project_root, Project)
        else find_project(Path(project_root) if project_root is not None else None)
    )
    with TraceStore.for_project(proj) as store:
        name = resolve_agent(store, agent) if agent is not None else None
        if suite is not None and name is None:
            name = _suite_agent(store, suite, proj)
        with store.analysis() as (con, events, _):
            flows = reviewed_flows(con, events, name)
        # redacted again with the rules of now, as `mir traces export` does: a value
        # stored before its pattern existed must not land in a committed suite
        flows = [_redacted(flow, store.redact) for flow in flows]
    report = ExportReport(reviewed=len(flows))
    if to_eval:
        for agent_name in sorted({f.agent for f in flows}):
            mine = [f for f in flows if f.agent == agent_name]
            report.suites.append(_export_suite(proj, agent_name, mine, suite, report.notes))
    if sft is not None:
        lines, left_out = sft_lines(flows)
        write_lines(sft, lines)
        report.sft, report.sft_lines = sft, len(lines)
        report.notes += [f"--sft left out {why}" for why in left_out]
    return report


def _redacted(flow: ReviewedFlow, redact: Callable[[Any], Any]) -> ReviewedFlow:
    return replace(
        flow,
        input=redact(flow.input),
        context=redact(flow.context),
        proposal=redact(flow.proposal),
        decision=redact(flow.decision),
        correction=redact(flow.correction),
        prompt=redact(flow.prompt),
    )


def _export_suite(
    proj: Project, agent: str, flows: list[ReviewedFlow], suite: Path | None, notes: list[str]
) -> SuiteExport:
    capability, _, short = agent.rpartition(".")
    path = suite or proj.capabilities_dir / capability / "evals" / f"{short}.yaml"
    export = SuiteExport(agent=agent, suite=path)
    ref = flows[-1].contract  # the latest flow's contract: the one the case will run on
    contract_path = Path(ref) if Path(ref).is_absolute() else proj.root / ref
    contract = load_contract(contract_path)
    existing = read_suite(path)
    cases = new_cases(flows, contract, existing, export)
    if cases:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        append_cases(
            path, cases, agent=short or agent,
            comment=f"from review ({len(cases)} case(s), `mir review export --eval`, {stamp})",
        )  # fmt: skip
    notes += [f"--eval left out {why}" for why in export.left_out]
    return export


def _suite_agent(store: TraceStore, suite: Path, proj: Project) -> str:
    """The agent a given suite file is for (it must exist to say so)."""
    found = read_suite(suite)
    if found is None:
        raise UsageError(
            f"{suite}: no such suite: say which agent it is for",
            hint="add --agent capability.agent (the suite is then created)",
        )
    name = found.agent
    if "." not in name and suite.resolve().parent.name == "evals":
        name = f"{suite.resolve().parent.parent.name}.{name}"
    known = store.agent_names()
    return name if name in known else resolve_agent(store, found.agent)
