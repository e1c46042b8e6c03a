"""The store's checks: local files or the fleet store (reachable, schema), and the
locks held in the state folder right now (the trace store's folder and compaction
locks, review locks, the agent states'): each probed once without waiting."""

from __future__ import annotations

from mir.doctor.domain import Check, ok, problem, warn
from mir.errors import MirUserError
from mir.project import Project


def store_check(project: Project) -> Check:
    """What ``mir store status`` says, as one row."""
    from mir.runtime import store_status
    from mir.storage import StoreUnavailable, quiet_pool_log

    quiet_pool_log()  # the pool's retries would print a line each; the row says it once
    try:
        status = store_status(project.root)
    except (MirUserError, StoreUnavailable) as exc:
        return problem(
            "store",
            str(exc),
            "start the server or fix [tool.mir.store] url ($MIR_STORE_URL)",
        )
    found = "; ".join(line for line in status.lines() if not line.startswith("warning: "))
    if status.warning:
        return warn("store", found, status.warning)
    return ok("store", found)


def lock_check(project: Project) -> Check:
    """Lock files under the state folder that another process holds now."""
    from mir.storage import file_lock

    folder = project.state_dir
    locks = sorted(folder.rglob("*.lock")) if folder.is_dir() else []
    held = []
    for path in locks:
        try:
            with file_lock(path, timeout=0) as got:
                if not got:
                    held.append(str(path.relative_to(project.root)))
        except OSError:
            held.append(f"{path.relative_to(project.root)} (unreadable)")
    if held:
        return warn(
            "locks",
            f"held now: {', '.join(held)}",
            "a mir process is running (a decision, compaction or review); "
            "wait for it, or find it with `fuser FILE`",
        )
    return ok("locks", f"none held ({len(locks)} lock file(s) free)")
