"""The project's agents as tools: listing them, calling one (the whole runtime pipeline,
once per idempotency key), and a flow's current outcome (``flow_status``).

A call with a key decides under the flow id the key names (``keyed_flow_id``), holding
``<state_dir>/mcp/<flow id>.lock`` (a flock: racing calls of this or any other server
process wait for each other) while it looks the flow up in the traces and, when it is
not there, decides it. So a retry finds the first call's events and returns its outcome:
nothing is decided or executed twice; the runtime's ledger would refuse a second
execution of the same flow anyway. ``<flow id>.json`` beside the lock keeps the digest
of the input the key was first used with: the same key with another input is refused.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mir.errors import MirUserError
from mir.mcp_server.domain import (
    FLOW_STATUS,
    FLOW_STATUS_HELP,
    FLOW_STATUS_SCHEMA,
    Outcome,
    ToolAnswer,
    ToolRefusal,
    ToolSpec,
    answer_of,
    input_digest,
    keyed_flow_id,
    outcome_of,
    shown,
    split_arguments,
    tool_schema,
)

MAX_FLOW_ID_CHARS = 200  # flow ids are 32-35 chars; a longer one names no flow
LOCK_WAIT_S = 900.0  # a racing retry waits this long for the first call's decision


class AgentTools:
    """The loaded agents of one project, each one tool, plus ``flow_status``."""

    def __init__(self, agents: Mapping[str, Any], traces: Any, state_dir: Path, root: Path):
        self.agents = dict(agents)
        self.traces = traces
        self.keys_dir = state_dir / "mcp"
        self.root = root
        self._specs: dict[str, ToolSpec] = {}
        self._key_argument: dict[str, bool] = {}
        for name, agent in self.agents.items():
            schema, added = tool_schema(input_schema(agent, root))
            self._key_argument[name] = added
            self._specs[name] = ToolSpec(name, description_of(agent), schema)
        # one decision at a time per agent: a loaded agent's flow is not shared by threads
        self._deciding = {name: threading.Lock() for name in self.agents}

    def tools(self) -> list[ToolSpec]:
        status = ToolSpec(FLOW_STATUS, FLOW_STATUS_HELP, FLOW_STATUS_SCHEMA)
        return [*self._specs.values(), status]

    def call(
        self, name: str, arguments: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
    ) -> ToolAnswer:
        """Never raises for what a caller sent: a refusal is a one-line tool error."""
        try:
            if name == FLOW_STATUS:
                return self.flow_status(str((arguments or {}).get("flow_id") or ""))
            return self._decide(name, arguments or {}, meta)
        except ToolRefusal as exc:
            return ToolAnswer.error(str(exc))
        except MirUserError as exc:
            return ToolAnswer.error(f"{exc.message} ({exc.hint})" if exc.hint else exc.message)

    def flow_status(self, flow_id: str) -> ToolAnswer:
        from mir.traces import UNFINISHED, find_flow

        if not flow_id.strip():
            raise ToolRefusal("flow_status: give the flow_id a call returned")
        if len(flow_id) > MAX_FLOW_ID_CHARS:
            raise ToolRefusal(
                f"no flow {shown(flow_id)}: a flow id is at most {MAX_FLOW_ID_CHARS} chars"
            )
        events = find_flow(self.traces, flow_id.strip())
        agent = self.agents.get(events[0].agent)
        field = agent.contract.decision.action_field if agent is not None else "action"
        outcome = outcome_of(events, field, cut=UNFINISHED)
        assert outcome is not None  # find_flow found events
        return answer_of(outcome)

    def close(self) -> None:
        for agent in self.agents.values():
            agent.close()
        self.traces.close()

    # ------------------------------------------------------------------ deciding
    def _decide(self, name: str, arguments: Mapping[str, Any], meta: Any) -> ToolAnswer:
        agent = self.agents.get(name)
        if agent is None:
            known = ", ".join(self._specs) or "none"
            raise ToolRefusal(f"unknown tool {shown(name)} (agents: {known}; and {FLOW_STATUS})")
        data, key = split_arguments(arguments, meta, key_argument=self._key_argument[name])
        checked = agent.parts.integrity.check_input(data)  # refused: no flow, no key used
        if not checked.ok:
            problems = [p.message for p in checked.problems]
            more = f" (and {len(problems) - 2} more)" if len(problems) > 2 else ""
            raise ToolRefusal(f"input invalid: {'; '.join(problems[:2])}{more}")
        if key is None:
            return answer_of(self._run(name, lambda: agent.decide(data)))
        return self._decide_once(name, agent, data, key)

    def _decide_once(self, name: str, agent: Any, data: dict[str, Any], key: str) -> ToolAnswer:
        from mir.storage import file_lock, write_atomic

        flow_id = keyed_flow_id(name, key)
        first = self.keys_dir / f"{flow_id}.json"
        digest = input_digest(data)
        with file_lock(self.keys_dir / f"{flow_id}.lock", timeout=LOCK_WAIT_S) as held:
            if not held:
                raise ToolRefusal(f"flow {flow_id} is still being decided by another call: retry")
            used = _read_json(first)
            if used is not None and used.get("input_sha256") != digest:
                raise ToolRefusal(
                    f"idempotency_key {key!r} was first used with another input "
                    f"(flow {flow_id}): use a new key for a new decision"
                )
            action_field = agent.contract.decision.action_field
            earlier = outcome_of(agent.trace(flow_id), action_field)
            if earlier is not None:
                earlier.replayed, earlier.key = True, key
                return answer_of(earlier)
            if used is None:
                shown = {"agent": name, "key": key, "input_sha256": digest}
                write_atomic(first, json.dumps(shown) + "\n")
            decide = lambda: agent.decide(data, flow_id=flow_id, known_new=True)  # noqa: E731
            outcome = self._run(name, decide)
        outcome.key = key
        return answer_of(outcome)

    def _run(self, name: str, decide: Callable[[], Any]) -> Outcome:
        from mir.runtime import record_json

        with self._deciding[name]:
            record = decide()
        # a record decide returns is the flow's final one unless it waits for review
        return Outcome(record_json(record), finished=record.status != "pending_review")


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def description_of(agent: Any) -> str:
    """The contract's mission, and the actions it may take."""
    contract = agent.contract
    actions = "; ".join(f"{n}: {a.description}" if a.description else n
                        for n, a in contract.actions.items())  # fmt: skip
    return (
        f"{contract.mission.strip()} Actions: {actions}. Returns the decision record "
        f"(status, action, reasons, flow id); a flow waiting for human review is "
        f"pending: poll it with {FLOW_STATUS}."
    )


def input_schema(agent: Any, root: Path) -> dict[str, Any] | None:
    """The JSON schema of the agent's input (None: the contract declares none, any
    object is taken), as the runtime derived it when it loaded the agent."""
    schema = agent.input_schema
    return dict(schema) if isinstance(schema, Mapping) else None
