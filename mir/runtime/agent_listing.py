"""``mir agents``: the listing, and in words when a state changed, what suspend/resume
did, which agents are broken (computed from ``AgentStatus``, no terminal)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from mir.runtime.agents import AgentStatus, list_agents


def listed_agents(project: str | Path | None) -> tuple[list[AgentStatus], str | None]:
    """Every agent of the project; with none, the folder searched (for "none found")."""
    listing = list_agents(project)
    if listing:
        return listing, None
    from mir.project import find_project

    return listing, find_project(Path(project) if project else None).settings.capabilities


def short_time(at: str | None) -> str | None:
    """``2026-11-30 19:42`` for a terminal (the full ISO time is in a pipe and ``--json``)."""
    try:
        return datetime.fromisoformat(at).astimezone(UTC).strftime("%Y-%m-%d %H:%M") if at else at
    except ValueError:
        return at


def unchanged_line(status: AgentStatus) -> str:
    """For a suspend or resume that found the agent in that state already (exit 0 both):
    ``NAME: already STATE (...; nothing changed)``."""
    if status.state == "suspended":
        since = f"suspended by {status.by or '?'} at {short_time(status.at) or '?'} UTC"
    elif status.at:
        since = f"resumed by {status.by or '?'} at {short_time(status.at)} UTC"
    else:
        since = "it was not suspended"
    return f"{status.name}: already {status.state} ({since}; nothing changed)"


def answer_parts(status: AgentStatus) -> list[str | tuple[str, str]]:
    """What ``mir agents suspend`` or ``resume`` answers, as parts of one line (text, or
    ``(text, style)``): ``NAME: suspended (by alice)`` for a change; for none, suspend and
    resume answer alike (``unchanged_line``)."""
    if not status.changed:
        return [unchanged_line(status)]
    if status.state == "suspended":
        return [f"{status.name}: ", ("suspended", "red"), f" (by {status.by})"]
    return [f"{status.name}: ", ("active", "green"), f" (resumed by {status.by})"]


def broken_line(listing: Sequence[AgentStatus]) -> str | None:
    """A listing with broken contracts says so (it exits 1): they decide nothing until
    fixed, and a script checking the listing must not read it as healthy."""
    broken = [status.name for status in listing if status.state == "broken"]
    if not broken:
        return None
    count = f"{len(broken)} broken agent{'s' if len(broken) > 1 else ''}"
    return f"{count}: {', '.join(broken)} (its contract does not load: the row says why)"


AGENT_COLUMNS = ("agent", "state", "contract", "reason", "by")


def agent_columns(terminal: bool) -> tuple[str, ...]:
    """``mir agents list``'s columns: the time is shown in UTC on a terminal, ISO in a pipe."""
    return (*AGENT_COLUMNS, "at UTC" if terminal else "at")


STATE_STYLE = {"active": "green", "suspended": "red", "broken": "bold red"}


def agent_cells(status: AgentStatus, *, terminal: bool) -> list[object]:
    """An agent's row in ``mir agents list``: its state ``(words, style)``, the reason or
    what broke it, and when (``short_time`` on a terminal, the ISO time in a pipe)."""
    return [
        status.name,
        (status.state, STATE_STYLE.get(status.state, "")),
        status.contract,
        status.error or status.reason,
        status.by,
        short_time(status.at) if terminal else status.at,
    ]
