"""The decision runtime: responsibility-bound agents whose every output is a validated,
traced proposal (public interface)."""

from mir.runtime.agents import AgentStatus, list_agents, resume_agent, suspend_agent
from mir.runtime.api import Agent, approve, load_agent, reject, review_flow, run_agent
from mir.runtime.records import RETRYABLE, DecisionRecord, ReasonCode

__all__ = [
    "RETRYABLE",
    "Agent",
    "AgentStatus",
    "DecisionRecord",
    "ReasonCode",
    "approve",
    "list_agents",
    "load_agent",
    "reject",
    "resume_agent",
    "review_flow",
    "run_agent",
    "suspend_agent",
]
