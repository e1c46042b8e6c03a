"""The project's agents as tools of an MCP server (``mir mcp serve``): public interface.

The MCP SDK is imported only when a server starts (``serve_agents``), never here."""

from mir.mcp_server.domain import (
    FLOW_STATUS,
    KEY_ARGUMENT,
    KEY_META,
    ToolAnswer,
    ToolSpec,
    keyed_flow_id,
    outcome_of,
    parse_address,
)
from mir.mcp_server.serving import open_tools, serve_agents
from mir.mcp_server.tools import AgentTools

__all__ = [
    "FLOW_STATUS",
    "KEY_ARGUMENT",
    "KEY_META",
    "AgentTools",
    "ToolAnswer",
    "ToolSpec",
    "keyed_flow_id",
    "open_tools",
    "outcome_of",
    "parse_address",
    "serve_agents",
]
