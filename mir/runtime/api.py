"""The runtime's library API and composition root (the CLI calls exactly these).

``load_agent`` wires production adapters by default (DuckDB-backed trace store, SQLite
execution ledger, agents.json, ``mir.inference.provider_for``) into an ``Agent``
(``loaded_agent``); every one of them can be passed in, which is how the tests build a
whole runtime with fakes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from mir.errors import UsageError
from mir.inference import ResponseCache
from mir.models import RouteResolver, check_routes, read_registry
from mir.project import Project, find_project
from mir.reviewers import SigningKey, load_signing_key
from mir.runtime.arguments import read_json_object
from mir.runtime.execution import NoLedger
from mir.runtime.fleet_reviews import fleet_announcer
from mir.runtime.hot_swap import follow_registry
from mir.runtime.loaded_agent import Agent
from mir.runtime.loading import load_parts, resolve_contract
from mir.runtime.ports import AgentParts, RuntimeDeps, TraceSink
from mir.runtime.providers import (
    _override_model,
    _override_routes,
    _production_source,
    _Providers,
)
from mir.runtime.records import DecisionRecord
from mir.runtime.resuming import corrections, resume
from mir.runtime.review_alerts import pending_announcer
from mir.runtime.stores import project_ledger, project_states
from mir.runtime.submissions import submissions_of
from mir.traces import TraceStore, parse_traceparent

PROVIDERS = ("llama", "litellm", "scripted", "rules")
Mode = Literal["production", "eval"]


class _NeverSuspended:
    """An eval tests the agent's model even while operations keep it suspended."""

    def is_suspended(self, agent: str) -> bool:
        return False


def _now() -> datetime:
    return datetime.now(UTC)


def _project(project: str | Path | None, near: Path | None = None) -> Project:
    return find_project(Path(project) if project is not None else near)


def load_agent(
    ref: str | Path,
    *,
    project: str | Path | None = None,
    provider: str | None = None,
    responses: str | Path | None = None,
    traces: TraceSink | None = None,
    mode: Mode = "production",
    model: str | None = None,
    response_cache: Path | None = None,
    watch_models: bool = True,
    progress: Callable[[str], None] | None = None,
) -> Agent:
    """Load ``capability.agent`` (or a contract path) from a project, ready to decide.

    ``provider`` overrides the contract's routes: ``scripted`` (with ``responses``, a
    JSONL file of raw outputs), ``rules`` (the fallback only), ``llama`` / ``litellm``
    (only the routes of that provider); ``model`` replaces every model route's model.

    ``mode="eval"`` (``mir eval``) runs the whole pipeline but never an executor: the
    execution ledger is not opened, suspension is ignored, and the snapshot event
    carries ``source: eval`` so the flow never counts as a production decision.

    ``response_cache`` (a folder, e.g. ``.mir/cache``): real model answers are stored
    there and an identical request later is answered from it, without loading or calling
    the model; its ``infer`` event then says ``cached: true``. Replays are never cached.

    ``watch_models`` (production, with a models.toml): follow the registry's changes
    (hot swap, ``mir.runtime.hot_swap``) until ``close()``.

    ``progress`` (optional, the CLI's spinner) hears each step of a decision as it
    starts: loading the model, inferring (attempt n/m), executing. A shadow decision's
    steps are not reported.
    """
    if mode not in ("production", "eval"):
        raise UsageError(f"unknown mode {mode!r}", hint="production or eval")
    if provider is not None and provider not in PROVIDERS:
        raise UsageError(f"unknown provider {provider!r}", hint=f"one of {', '.join(PROVIDERS)}")
    if provider == "scripted" and responses is None:
        raise UsageError("--provider scripted needs --responses FILE (JSONL of raw outputs)")
    ref_path = Path(ref)
    near = ref_path.parent if ref_path.suffix in (".yaml", ".yml") else None
    if near is not None and not ref_path.is_file():  # not "folder not found: <its folder>"
        resolve_contract(str(ref), None)
    proj = _project(project, near)
    contract_path = resolve_contract(str(ref), proj)
    parts = _override_routes(load_parts(contract_path, proj.root), provider)
    parts = _override_model(parts, model)
    resolver = _registry(proj, parts) if provider not in ("scripted", "rules") else None
    owns = traces is None
    sink = traces if traces is not None else TraceStore.for_project(proj)
    evaluating = mode == "eval"
    deps = RuntimeDeps(
        traces=sink,
        ledger=NoLedger() if evaluating else project_ledger(proj, sink),
        states=_NeverSuspended() if evaluating else project_states(proj),
        providers=_Providers(
            proj,
            provider,
            Path(responses) if responses else None,
            # Answers holding a secret (by the trace rules) are not cached.
            answers=(
                ResponseCache(Path(response_cache), redact=getattr(sink, "redact", None))
                if response_cache is not None
                else None
            ),
            logprobs=parts.contract.decision.confidence_source == "logprobs",
        ),
        clock=_now,
        source="eval" if evaluating else _production_source(parts, responses),
        dry_run=evaluating,
        models=resolver,
        submissions=None if evaluating else submissions_of(proj),
        on_pending=(
            None
            if evaluating
            else fleet_announcer(
                proj, sink, pending_announcer(proj, parts, getattr(sink, "redact", None))
            )
        ),
    )
    agent = Agent(parts, deps, owns_traces=owns, progress=progress)
    if watch_models and not evaluating:
        agent.models_watch = follow_registry(parts, deps)
    return agent


def _registry(project: Project, parts: AgentParts) -> RouteResolver | None:
    """The project's ``models.toml`` as a resolver, when there is one; every route's
    registry model is checked here, so an unknown name is a config error at load."""
    registry = read_registry(project.root)
    check_routes(list(parts.contract.routes), registry, parts.contract_ref)
    return None if registry is None else RouteResolver(project.root, registry)


def approve(
    flow_id: str,
    *,
    project: str | Path | None = None,
    by: str | None = None,
    context: Mapping[str, Any] | None = None,
    traces: TraceSink | None = None,
    signing_key: SigningKey | None = None,
    correction: dict[str, Any] | None = None,
    reason: str | None = None,
) -> DecisionRecord:
    """Approve a flow pending review (or replay one interrupted mid-execution).

    The world is re-checked first: with the contract's context loader, or against
    ``context`` (the state now) when given; otherwise the re-check is recorded as skipped.
    ``signing_key`` signs the review statement; ``correction`` (fields to set) replaces
    the proposal's, and the corrected decision is checked again and executed instead.
    With ``approvals: {count: N}`` an approval that is not the Nth returns a record still
    ``pending_review``.
    """
    return resume(
        flow_id, "approve", project=_project(project), by=by, reason=reason, context=context,
        traces=traces, signing_key=signing_key, correction=correction,
    )  # fmt: skip


def reject(
    flow_id: str,
    *,
    project: str | Path | None = None,
    by: str | None = None,
    reason: str | None = None,
    traces: TraceSink | None = None,
    signing_key: SigningKey | None = None,
) -> DecisionRecord:
    """Reject a flow pending review: nothing executes; who, when and why are traced."""
    return resume(
        flow_id, "reject", project=_project(project), by=by, reason=reason, context=None,
        traces=traces, signing_key=signing_key, correction=None,
    )  # fmt: skip


def run_agent(
    ref: str,
    *,
    input: str,
    context: str | None = None,
    provider: str | None = None,
    responses: str | None = None,
    role: str = "agent",
    project: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    priority: int | None = None,
    deadline_ms: int | None = None,
    requested_by: str | None = None,
    traceparent: str | None = None,
) -> DecisionRecord:
    """``mir run agent``: JSON arguments (inline, ``@FILE`` or ``-``) in, one record out.

    ``progress`` (optional) hears each step as it starts: loading the model, inferring
    (attempt n/m), executing; the CLI shows it as a spinner.
    """
    data = read_json_object(input, "--input")
    state = read_json_object(context, "--context") if context is not None else None
    if traceparent is not None and parse_traceparent(traceparent) is None:
        raise UsageError(
            f"--traceparent: {traceparent!r} is not a W3C traceparent",
            hint="00-<32 hex trace id>-<16 hex span id>-<2 hex flags>, lowercase",
        )
    with load_agent(
        ref, project=project, provider=provider, responses=responses, progress=progress
    ) as agent:
        return agent.decide(
            data,
            state,
            role=role,
            priority=priority,
            deadline_ms=deadline_ms,
            requested_by=requested_by,
            traceparent=traceparent,
        )


def review_flow(
    flow_id: str,
    verdict: str,
    *,
    by: str | None = None,
    reason: str | None = None,
    context: str | None = None,
    project: str | Path | None = None,
    key: str | None = None,
    sets: Sequence[str] = (),
    patch: str | None = None,
) -> DecisionRecord:
    """``mir approve`` / ``mir reject`` with command-line arguments (``key``: a private key
    file, else ``$MIR_REVIEWER_KEY_FILE`` / ``$MIR_REVIEWER_KEY``; ``sets`` / ``patch``: a
    correction, ``FIELD=VALUE`` with JSON values when they parse)."""
    signing_key = load_signing_key(key)
    if verdict == "reject":
        if sets or patch is not None:
            raise UsageError("a rejection has no correction", hint="approve with --set instead")
        return reject(flow_id, project=project, by=by, reason=reason, signing_key=signing_key)
    state = read_json_object(context, "--context") if context is not None else None
    correction = corrections(sets, patch)
    return approve(
        flow_id, project=project, by=by, context=state, signing_key=signing_key,
        correction=correction, reason=reason,
    )  # fmt: skip
