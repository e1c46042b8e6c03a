"""The decision runtime: responsibility-bound agents whose every output is a validated,
traced proposal (public interface)."""

from typing import TYPE_CHECKING, Any

from mir.runtime.agent_listing import (
    agent_cells,
    agent_columns,
    answer_parts,
    broken_line,
    listed_agents,
    short_time,
    unchanged_line,
)
from mir.runtime.agents import AgentStatus, list_agents, resume_agent, suspend_agent
from mir.runtime.record_view import record_json, record_rows
from mir.runtime.records import RETRYABLE, DecisionRecord, ReasonCode

if TYPE_CHECKING:
    from mir.runtime.api import approve, load_agent, reject, review_flow, run_agent
    from mir.runtime.approvals import Rule, effective, recorded_approvals, rule_for, rule_from
    from mir.runtime.arguments import parse_json_object, read_json_object
    from mir.runtime.expiry import Expiry, expire_flows
    from mir.runtime.fleet_reviews import (
        PublishedFlow,
        expire_in_fleet,
        fleet_due,
        fleet_of,
        fleet_waiting,
        publish_waiting,
    )
    from mir.runtime.interrupted import close_interrupted
    from mir.runtime.loaded_agent import Agent
    from mir.runtime.ports import FlowAlreadyDecided
    from mir.runtime.preview import preview_prompt, prompt_json
    from mir.runtime.processes import Stop, first_interrupt_stops, start_method
    from mir.runtime.store_copy import StoreMigration, StoreStatus
    from mir.runtime.store_migration import migrate_store, store_status
    from mir.runtime.submissions import (
        TASK,
        ResultTimeout,
        Submissions,
        queue_name,
        submissions_of,
    )

# Deciding pulls in prompts, providers, the scheduler and the integrity check (~0.1 s of
# imports): loaded on first use, so listing or suspending agents (`mir agents`, `mir
# drift`) does not pay for it.
_FLEET = frozenset(
    {
        "PublishedFlow",
        "expire_in_fleet",
        "fleet_due",
        "fleet_of",
        "fleet_waiting",
        "publish_waiting",
    }
)
_STORE = frozenset({"StoreMigration", "StoreStatus", "migrate_store", "store_status"})
_QUEUE = frozenset({"TASK", "ResultTimeout", "Submissions", "queue_name", "submissions_of"})
_APPROVALS = frozenset({"Rule", "effective", "recorded_approvals", "rule_for", "rule_from"})
_API = frozenset({"Agent", "approve", "load_agent", "reject", "review_flow", "run_agent"})


def __getattr__(name: str) -> Any:
    if name in ("preview_prompt", "prompt_json"):
        from mir.runtime import preview

        return getattr(preview, name)
    if name in _APPROVALS:
        from mir.runtime import approvals

        return getattr(approvals, name)
    if name in ("Expiry", "expire_flows"):
        from mir.runtime import expiry

        return getattr(expiry, name)
    if name in _STORE:
        from mir.runtime import store_migration

        return getattr(store_migration, name)
    if name in _FLEET:
        from mir.runtime import fleet_reviews

        return getattr(fleet_reviews, name)
    if name in _QUEUE:
        from mir.runtime import submissions

        return getattr(submissions, name)
    if name == "FlowAlreadyDecided":
        from mir.runtime import ports

        return ports.FlowAlreadyDecided
    if name == "close_interrupted":
        from mir.runtime import interrupted

        return interrupted.close_interrupted
    if name in ("parse_json_object", "read_json_object"):
        from mir.runtime import arguments

        return getattr(arguments, name)
    if name in ("Stop", "first_interrupt_stops", "start_method"):
        from mir.runtime import processes

        return getattr(processes, name)
    if name in _API:
        from mir.runtime import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "RETRYABLE",
    "TASK",
    "Agent",
    "AgentStatus",
    "DecisionRecord",
    "Expiry",
    "FlowAlreadyDecided",
    "PublishedFlow",
    "ReasonCode",
    "ResultTimeout",
    "Rule",
    "Stop",
    "StoreMigration",
    "StoreStatus",
    "Submissions",
    "agent_cells",
    "agent_columns",
    "answer_parts",
    "approve",
    "broken_line",
    "close_interrupted",
    "effective",
    "expire_flows",
    "expire_in_fleet",
    "first_interrupt_stops",
    "fleet_due",
    "fleet_of",
    "fleet_waiting",
    "list_agents",
    "listed_agents",
    "load_agent",
    "migrate_store",
    "parse_json_object",
    "preview_prompt",
    "prompt_json",
    "publish_waiting",
    "queue_name",
    "read_json_object",
    "record_json",
    "record_rows",
    "recorded_approvals",
    "reject",
    "resume_agent",
    "review_flow",
    "rule_for",
    "rule_from",
    "run_agent",
    "short_time",
    "start_method",
    "store_status",
    "submissions_of",
    "suspend_agent",
    "unchanged_line",
]
