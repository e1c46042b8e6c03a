"""The runtime's library API and composition root (the CLI calls exactly these).

``load_agent`` wires production adapters by default (DuckDB-backed trace store, SQLite
execution ledger, agents.json, ``mir.inference.provider_for``); every one of them can be passed in,
which is how the tests build a whole runtime with fakes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from mir.contracts import AgentContract
from mir.errors import UsageError
from mir.inference import (
    ModelResponse,
    ResponseCache,
    ScriptedProvider,
)
from mir.models import RouteResolver, Subscription, check_routes, read_registry
from mir.project import Project, find_project
from mir.runtime.agent_states import AgentStateFile, current_user
from mir.runtime.arguments import read_json_object
from mir.runtime.execution import NoLedger
from mir.runtime.flow import DecisionFlow
from mir.runtime.hot_swap import follow_registry
from mir.runtime.ledger import SqliteExecutionLedger
from mir.runtime.loading import load_parts, resolve_contract
from mir.runtime.ports import AgentParts, RuntimeDeps, TraceSink
from mir.runtime.progress import observed
from mir.runtime.providers import (
    _override_model,
    _override_routes,
    _production_source,
    _Providers,
)
from mir.runtime.records import DecisionRecord
from mir.runtime.review import read_flow, resume_flow
from mir.runtime.review_alerts import announce_safely, pending_announcer
from mir.runtime.shadow import ShadowWorker
from mir.traces import TraceEvent, TraceSettings, TraceStore

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


def _ledger(project: Project, traces: TraceSink) -> SqliteExecutionLedger:
    """The project's one ledger file; an older ``executions/`` folder is migrated into it."""
    fsync = project.section("traces", TraceSettings).fsync
    return SqliteExecutionLedger(
        project.state_dir / "executions.db",
        fsync=fsync,
        # results and errors are redacted like trace events (a fake sink has no redactor)
        redact=getattr(traces, "redact", None),
        legacy=project.state_dir / "executions",
    )


class Agent:
    """A loaded, validated agent: ``agent.decide(input, context=...)`` runs one flow."""

    def __init__(self, parts: AgentParts, deps: RuntimeDeps, *, owns_traces: bool = False):
        self.parts = parts
        self.deps = deps
        self._flow = DecisionFlow(parts, deps)
        self._owns_traces = owns_traces
        self.models_watch: Subscription | None = None  # hot swap (load_agent(watch_models=))
        # A registry shadow version re-decides each production decision in the background.
        self.shadow = ShadowWorker.for_agent(parts, deps)

    def observed(self, progress: Callable[[str], None]) -> Agent:
        """This agent, its steps reported to ``progress`` (the CLI's spinner). It shares
        this agent's shadow worker, which ``close()`` waits for: a shadow decision started
        by the observed agent ends in the trace, and its model calls are not narrated."""
        view = Agent(*observed(self.parts, self.deps, progress))
        if view.shadow is not None:
            view.shadow.close()  # never started: nothing to wait for
        view.shadow = self.shadow
        return view

    @property
    def name(self) -> str:
        return self.parts.name

    @property
    def contract(self) -> AgentContract:
        return self.parts.contract

    def decide(
        self,
        input: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        role: str = "agent",
        priority: int | None = None,
        deadline_ms: int | None = None,
    ) -> DecisionRecord:
        """``priority`` / ``deadline_ms`` override the contract's ``serving`` defaults for
        this call: a model call that cannot meet the deadline is shed to the next route or
        the rules at once (reason ``shed``)."""
        if self.shadow is None:
            record = self._flow.decide(
                input, context, role=role, priority=priority, deadline_ms=deadline_ms
            )
        else:
            record = self.shadow.decide(
                self._flow, input, context, role, priority=priority, deadline_ms=deadline_ms
            )
        announce_safely(self.deps.on_pending, record)  # a flow that starts waiting
        return record

    def replaying(
        self, responses: Sequence[ModelResponse | str], *, label: str = "scripted"
    ) -> Agent:
        """This agent with every model route answering from ``responses``, in order (an
        eval replays one scripted line per case run, whichever process runs it)."""
        scripted = ScriptedProvider(list(responses), label=label)
        source = "replay" if self.deps.source == "production" else self.deps.source
        return Agent(
            self.parts, replace(self.deps, providers=lambda route: scripted, source=source)
        )

    def trace(self, flow_id: str) -> list[TraceEvent]:
        """The flow's events in order (what evals check trajectories against)."""
        return self.deps.traces.flow(flow_id)

    def close(self) -> None:
        if self.shadow is not None:  # first: its flows write to the traces closed below
            self.shadow.close()
        for part in (self.models_watch, self.deps.ledger, self.deps.providers):
            closing = getattr(part, "close", None)
            if closing is not None:
                closing()
        if self._owns_traces:
            self.deps.traces.close()  # type: ignore[attr-defined]

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
        ledger=NoLedger() if evaluating else _ledger(proj, sink),
        states=_NeverSuspended() if evaluating else AgentStateFile(proj.state_dir / "agents.json"),
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
        on_pending=None if evaluating else pending_announcer(proj, parts),
    )
    agent = Agent(parts, deps, owns_traces=owns)
    if watch_models and not evaluating:
        agent.models_watch = follow_registry(parts, deps)
    return agent


def _registry(project: Project, parts: AgentParts) -> RouteResolver | None:
    """The project's ``models.toml`` as a resolver, when there is one; every route's
    registry model is checked here, so an unknown name is a config error at load."""
    registry = read_registry(project.root)
    check_routes(list(parts.contract.routes), registry, parts.contract_ref)
    return None if registry is None else RouteResolver(project.root, registry)


def _resume(
    flow_id: str,
    verdict: str,
    *,
    project: str | Path | None,
    by: str | None,
    reason: str | None,
    context: Mapping[str, Any] | None,
    traces: TraceSink | None,
) -> DecisionRecord:
    proj = _project(project)
    store = traces if traces is not None else TraceStore.for_project(proj)
    ledger = _ledger(proj, store)
    try:
        # Tamper evidence is what lets a later process act on a stored decision: the
        # events are re-hashed against the chain and the manifest before anything runs.
        events = store.flow(flow_id, verify=True)
        if not events and hasattr(store, "flow_ids"):
            matches = store.flow_ids(flow_id, limit=6)
            if len(matches) > 1:
                # the candidates, as `mir traces show` lists them: which one was meant?
                shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
                raise UsageError(
                    f"flow id prefix {flow_id!r} is ambiguous ({shown})",
                    hint="give more characters of the flow id",
                )
            if matches:
                flow_id, events = matches[0], store.flow(matches[0], verify=True)
        source = next((e.data.get("source") for e in events if e.step == "snapshot"), None)
        if source in ("eval", "shadow"):
            by = "`mir eval`" if source == "eval" else "a shadow model version"
            raise UsageError(
                f"flow {flow_id} was decided by {by}: its decision never executes",
                hint="run the agent for real with `mir run agent`",
            )
        stored = read_flow(flow_id, events)
        stored_path = Path(stored.contract_path)
        if not stored_path.is_absolute():
            stored_path = proj.root / stored_path
        parts = load_parts(resolve_contract(str(stored_path), proj), proj.root)
        deps = RuntimeDeps(
            traces=store,
            ledger=ledger,
            states=AgentStateFile(proj.state_dir / "agents.json"),
            providers=_Providers(proj, None, None),
            clock=_now,
            # a replayed flow stays a replay when approved: its final says so too
            source="replay" if source == "replay" else "production",
        )
        return resume_flow(
            parts,
            deps,
            stored,
            verdict,  # type: ignore[arg-type]
            by=by or current_user(),
            reason=reason,
            current_context=context,
            reload=lambda: store.flow(stored.flow_id, verify=True),
        )
    finally:
        ledger.close()
        if traces is None:
            store.close()  # type: ignore[attr-defined]


def approve(
    flow_id: str,
    *,
    project: str | Path | None = None,
    by: str | None = None,
    context: Mapping[str, Any] | None = None,
    traces: TraceSink | None = None,
) -> DecisionRecord:
    """Approve a flow pending review (or replay one interrupted mid-execution).

    The world is re-checked first: with the contract's context loader, or against
    ``context`` (the state now) when given; otherwise the re-check is recorded as skipped.
    """
    return _resume(
        flow_id, "approve", project=project, by=by, reason=None, context=context, traces=traces
    )


def reject(
    flow_id: str,
    *,
    project: str | Path | None = None,
    by: str | None = None,
    reason: str | None = None,
    traces: TraceSink | None = None,
) -> DecisionRecord:
    """Reject a flow pending review: nothing executes; who, when and why are traced."""
    return _resume(
        flow_id, "reject", project=project, by=by, reason=reason, context=None, traces=traces
    )


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
) -> DecisionRecord:
    """``mir run agent``: JSON arguments (inline, ``@FILE`` or ``-``) in, one record out.

    ``progress`` (optional) hears each step as it starts: loading the model, inferring
    (attempt n/m), executing; the CLI shows it as a spinner.
    """
    data = read_json_object(input, "--input")
    state = read_json_object(context, "--context") if context is not None else None
    with load_agent(ref, project=project, provider=provider, responses=responses) as agent:
        deciding = agent.observed(progress) if progress is not None else agent
        return deciding.decide(data, state, role=role, priority=priority, deadline_ms=deadline_ms)


def review_flow(
    flow_id: str,
    verdict: str,
    *,
    by: str | None = None,
    reason: str | None = None,
    context: str | None = None,
    project: str | Path | None = None,
) -> DecisionRecord:
    """``mir approve`` / ``mir reject`` with command-line arguments."""
    if verdict == "reject":
        return reject(flow_id, project=project, by=by, reason=reason)
    state = read_json_object(context, "--context") if context is not None else None
    return approve(flow_id, project=project, by=by, context=state)
