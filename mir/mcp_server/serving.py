"""``mir mcp serve``: the project's agents loaded once, served by the official MCP SDK's
low-level server over stdio (the default) or streamable HTTP (``--http HOST:PORT``,
path ``/mcp``, served by uvicorn).

The SDK is imported here only, inside the functions that need it. Each tool call runs
on a worker thread (a decision blocks: model, ledger, executors); stdio's stdout is
the SDK's wire while it serves (stray output of user code goes to stderr).
"""

from __future__ import annotations

import errno
import socket
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mir.errors import ConfigError, MirUserError, UsageError
from mir.mcp_server.domain import ToolAnswer, parse_address
from mir.mcp_server.tools import AgentTools

INSTRUCTIONS = (
    "Each tool is one mir agent: the model proposes, mir checks the proposal against the "
    "agent's contract before anything executes, and every decision is traced. A result "
    "is the decision record; status pending_review waits for a human: poll flow_status. "
    "Pass idempotency_key to make a retry return the first call's outcome."
)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def serve_agents(
    project: str | Path | None = None,
    *,
    http: str | None = None,
    provider: str | None = None,
    responses: str | None = None,
    say: Callable[[str], None] = _stderr,
) -> None:
    """Serve every agent of the project as an MCP tool until the client (stdio) or a
    signal (HTTP) ends it. ``provider`` / ``responses`` override the routes as in
    ``mir run agent``. A bad address, a port in use, no project or no agent that loads:
    a usage or config error before anything is served."""
    address = parse_address(http) if http is not None else None
    listening = _listening_socket(*address) if address is not None else None
    try:
        tools = open_tools(project, provider=provider, responses=responses, say=say)
    except BaseException:
        if listening is not None:
            listening.close()
        raise
    try:
        import anyio

        server = _server(tools)
        if listening is None:
            say(f"serving {len(tools.agents)} agent(s) as MCP tools on stdio")
            anyio.run(_serve_stdio, server)
        else:
            host, port = address  # type: ignore[misc]
            shown = f"[{host}]" if ":" in host else host
            say(f"serving {len(tools.agents)} agent(s) as MCP tools at http://{shown}:{port}/mcp")
            anyio.run(_serve_http, server, listening, host)
    finally:
        tools.close()


def open_tools(
    project: str | Path | None,
    *,
    provider: str | None = None,
    responses: str | None = None,
    say: Callable[[str], None] = _stderr,
) -> AgentTools:
    """Every agent of the project loaded (one shared trace store); a broken one is
    skipped with a line on ``say``; none left is a config error."""
    from mir.project import find_project
    from mir.runtime import list_agents, load_agent
    from mir.traces import TraceStore

    proj = find_project(Path(project) if project is not None else None)
    statuses = list_agents(proj.root)
    traces = TraceStore.for_project(proj)
    agents: dict[str, Any] = {}
    try:
        for status in statuses:
            if status.state == "broken":
                say(f"skipped {status.name}: {status.error or status.reason}")
                continue
            try:
                agents[status.name] = load_agent(
                    status.name, project=proj.root, provider=provider, responses=responses,
                    traces=traces,
                )  # fmt: skip
            except ConfigError as exc:  # this agent's contract or code: the others serve
                say(f"skipped {status.name}: {exc.message}")
        if not agents:
            raise ConfigError(
                f"no agent to serve in {proj.root}",
                hint="add one with `mir new agent CAPABILITY NAME`; `mir agents list` shows them",
            )
        return AgentTools(agents, traces, proj.state_dir, proj.root)
    except BaseException:
        for agent in agents.values():
            agent.close()
        traces.close()
        raise


def _listening_socket(host: str, port: int) -> socket.socket:
    """Bound and listening before anything loads: a port in use is one error line."""
    where = f"--http {host[:80]}:{port}"
    try:
        family, kind, proto, _, sockaddr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[
            0
        ]
    except socket.gaierror as exc:
        raise UsageError(f"{where}: unknown host ({exc.strerror})") from None
    except (UnicodeError, ValueError) as exc:  # a label too long, a NUL in the name
        raise UsageError(
            f"{where}: not a host name ({exc})", hint="e.g. --http 127.0.0.1:8765"
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(sockaddr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(
                f"{where}: port {port} is in use", hint="choose another port, or stop what holds it"
            ) from None
        raise UsageError(f"{where}: cannot listen there ({exc.strerror})") from None
    return sock


def _server(tools: AgentTools) -> Any:
    import anyio
    import mcp_types as types
    from mcp.server import Server

    from mir import __version__

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        listed = [
            types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema)
            for spec in tools.tools()
        ]
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            answer = await anyio.to_thread.run_sync(
                tools.call, params.name, params.arguments, dict(params.meta or {})
            )
        except MirUserError as exc:
            answer = ToolAnswer.error(exc.message)
        except Exception as exc:  # a bug must not end the server: the caller gets one line
            traceback.print_exc(file=sys.stderr)
            answer = ToolAnswer.error(f"internal error: {type(exc).__name__}: {exc}")
        text = types.TextContent(type="text", text="\n".join(answer.lines))
        return types.CallToolResult(
            content=[text], structured_content=answer.structured, is_error=answer.is_error
        )

    return Server(
        "mir",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def _serve_http(server: Any, listening: socket.socket, host: str) -> None:
    import uvicorn

    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[listening])
