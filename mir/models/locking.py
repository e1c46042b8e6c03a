"""The registry's edit lock: an exclusive ``flock`` on ``.mir/models.lock``, held from
reading ``models.toml`` to the history commit (see ``editing``), across processes and
threads, re-entrant within one thread (a rollback calls ``set_stage``)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ParamSpec, TypeVar

from mir.errors import ConfigError
from mir.models.registry_file import FILE_NAME
from mir.storage import file_lock

LOCK_FILE = Path(".mir") / "models.lock"
# How long an edit waits for another edit to finish before giving up with one line.
LOCK_WAIT_S = 60.0
_held = threading.local()  # this thread's lock depth: rollback -> set_stage re-enters
_P = ParamSpec("_P")
_T = TypeVar("_T")


@contextlib.contextmanager
def editing_lock(root: Path) -> Iterator[None]:
    """Exclusive across processes and threads; re-entrant within one thread."""
    depth = getattr(_held, "depth", 0)
    if depth:
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    path = root / LOCK_FILE
    with contextlib.ExitStack() as stack:
        try:
            held = stack.enter_context(file_lock(path, timeout=LOCK_WAIT_S, mode=0o644))
        except OSError as exc:
            raise ConfigError(
                f"cannot open the registry's edit lock ({exc.strerror})",
                where=str(path),
                hint=f"{FILE_NAME} was not changed",
            ) from exc
        if not held:
            raise ConfigError(
                f"another `mir models` edit has held {FILE_NAME} for over {LOCK_WAIT_S:.0f} s",
                where=str(path),
                hint=f"retry when it is done; {FILE_NAME} was not changed",
            )
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0


def serialized(edit: Callable[_P, _T]) -> Callable[_P, _T]:
    import functools

    @functools.wraps(edit)
    def locked(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        root = kwargs["root"] if "root" in kwargs else args[0]
        with editing_lock(Path(root)):  # type: ignore[arg-type]
            return edit(*args, **kwargs)

    return locked
