"""``Agent``: a loaded, validated agent, ready to decide (``load_agent`` builds one).

It owns what its decisions need for its lifetime: the flow, its one shadow worker (a
registry shadow version re-decides each production decision in the background), the
hot-swap subscription, the ledger, the providers and the review alerts still being
sent; ``close()`` ends them in that order, the trace store it owns last.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from mir.contracts import AgentContract
from mir.errors import UsageError
from mir.inference import ModelResponse, ScriptedProvider
from mir.models import Subscription
from mir.runtime.agent_states import requester
from mir.runtime.flow import DecisionFlow
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.progress import observed
from mir.runtime.records import DecisionRecord
from mir.runtime.review_alerts import announce_safely
from mir.runtime.shadow import ShadowWorker
from mir.runtime.submissions import Submissions, new_flow_id
from mir.traces import TraceEvent, caller_trace

FLOW_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
RETRY_ID = re.compile(r"-r[0-9]+$")  # what a worker's retry appends (mir.workers.attempt_id)


class Agent:
    """A loaded, validated agent: ``agent.decide(input, context=...)`` runs one flow."""

    def __init__(
        self,
        parts: AgentParts,
        deps: RuntimeDeps,
        *,
        owns_traces: bool = False,
        progress: Callable[[str], None] | None = None,
    ):
        self.parts = parts
        self.deps = deps
        # ``progress`` (the CLI's spinner) hears the production decisions' steps only: the
        # flow decides on observed parts, the shadow worker on the agent's own.
        seen = (parts, deps) if progress is None else observed(parts, deps, progress)
        self._flow = DecisionFlow(*seen)
        self._owns_traces = owns_traces
        self.models_watch: Subscription | None = None  # hot swap (load_agent(watch_models=))
        # A registry shadow version re-decides each production decision in the background.
        self.shadow = ShadowWorker.for_agent(parts, deps)

    @property
    def name(self) -> str:
        return self.parts.name

    @property
    def contract(self) -> AgentContract:
        return self.parts.contract

    @property
    def input_schema(self) -> dict[str, Any] | None:
        """The JSON schema of this agent's input (None: the contract declares none)."""
        return self.parts.input_schema

    def decide(
        self,
        input: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        role: str = "agent",
        priority: int | None = None,
        deadline_ms: int | None = None,
        requested_by: str | None = None,
        flow_id: str | None = None,
        known_new: bool = False,
        traceparent: str | None = None,
    ) -> DecisionRecord:
        """``priority`` / ``deadline_ms`` override the contract's ``serving`` defaults for
        this call: a model call that cannot meet the deadline is shed to the next route or
        the rules at once (reason ``shed``). ``requested_by`` (default ``$MIR_USER``, else
        the OS user) is recorded as the flow's requester, who can never approve it.
        ``flow_id`` (default: a new random one) names the flow, so a caller that is cut
        off can find it in the traces again (``mir run agent --batch`` does): one the
        traces already hold is refused (a lookup in the traces, ~0.1 s on a large store:
        ``known_new`` skips it for a caller that made the id new itself, as the batch
        does from a random batch id), and no other process may decide with it at the
        same time (the caller's lock sees to that, as the batch's does). ``traceparent``
        (W3C; default: the current OpenTelemetry span, if any) makes the flow's spans
        children of the caller's."""
        if flow_id is not None:
            self._check_new(flow_id, look=not known_new)
        requested_by = requested_by or requester()
        how = {
            "priority": priority,
            "deadline_ms": deadline_ms,
            "requested_by": requested_by,
            "flow_id": flow_id,
        }
        with caller_trace(traceparent):
            if self.shadow is None:
                record = self._flow.decide(input, context, role=role, **how)
            else:
                record = self.shadow.decide(self._flow, input, context, role, **how)
        announce_safely(self.deps.on_pending, record)  # a flow that starts waiting
        return record

    def submit(
        self,
        input: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        role: str = "agent",
        priority: int | None = None,
        deadline_ms: int | None = None,
        requested_by: str | None = None,
        flow_id: str | None = None,
    ) -> str:
        """Hand the decision to the fleet's workers (``mir worker``): returns its flow id
        once the request is durable in Postgres, before anything is decided. The same
        options as ``decide``; the deadline counts from now, so a flow still queued when
        it passes is decided by the rules (reason ``shed``). ``result(flow_id)`` waits
        for the outcome. Needs the fleet store (``[tool.mir.store] url``)."""
        queue = self._submissions()
        if flow_id is not None:
            self._check_new(flow_id, look=False)
            if RETRY_ID.search(flow_id):
                raise UsageError(
                    f"flow id {flow_id!r} ends like a retry's (-r<n>): a worker's retry of "
                    "another submission may take that id",
                    hint="choose an id without a -r<digits> ending",
                )
        serving = self.parts.contract.serving
        request = {
            "flow_id": flow_id or new_flow_id(),
            "agent": self.name,
            "input": dict(input),
            "context": None if context is None else dict(context),
            "role": role,
            "priority": priority,
            "deadline_ms": deadline_ms if deadline_ms is not None else serving.deadline_ms,
            "requested_by": requested_by or requester(),
            "submitted_us": time.time_ns() // 1000,
        }
        try:
            json.dumps(request)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"the input or context is not JSON: {exc}") from exc
        chosen = priority if priority is not None else serving.priority
        return queue.submit(self.name, request, priority=chosen)

    def result(self, flow_id: str, timeout: float | None = None) -> DecisionRecord:
        """The outcome of a submitted flow, waiting up to ``timeout`` seconds (None: for
        ever) for a worker to decide it (``ResultTimeout`` when none did in time). Its
        decision is as the traces keep it: redacted by the trace rules."""
        return self._submissions().result(flow_id, timeout)

    def when_decided(
        self,
        flow_id: str,
        callback: Callable[[DecisionRecord], Any],
        *,
        timeout: float | None = None,
        on_error: Callable[[BaseException], Any] | None = None,
    ) -> None:
        """Call ``callback(record)`` once a worker decided the submitted flow, on mir's
        one dispatcher thread (``completions.py``); past ``timeout``: ``on_error``."""
        self._submissions().when_decided(flow_id, callback, timeout=timeout, on_error=on_error)

    def _submissions(self) -> Submissions:
        if self.deps.submissions is None:
            raise UsageError(
                "submit needs the fleet store: workers take submissions from Postgres",
                hint="set [tool.mir.store] url (or $MIR_STORE_URL); locally, call decide()",
            )
        return self.deps.submissions

    def _check_new(self, flow_id: str, *, look: bool) -> None:
        if not FLOW_ID.fullmatch(flow_id):
            raise UsageError(
                f"flow id {flow_id!r} is not 8-64 letters, digits, '-' or '_'",
                hint="leave it out: a new flow gets a random id",
            )
        if look and self.deps.traces.flow(flow_id):
            raise UsageError(f"flow {flow_id} already exists: a flow is decided once")

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
        held = (self.models_watch, self.deps.ledger, self.deps.providers, self.deps.on_pending)
        owned = (self.deps.traces,) if self._owns_traces else ()  # last: the others write to it
        for part in (*held, *owned):  # on_pending: the review alerts still being sent
            closing = getattr(part, "close", None)
            if closing is not None:
                closing()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
