"""The review audit's memory of the reviews (and flows) it judged ok, which nobody who can
only edit the project can forge.

``mir traces verify`` skips the Ed25519 check of a review it judged ok before and that is
unchanged since. Each cache line is a tag: the HMAC-SHA256, under a secret of the
verifying user, of everything the judgement read (reviewers.toml, the contract, the flow,
its pending decision and the review event). The secret is 32 random bytes in
``$XDG_STATE_HOME/mir/verify-cache.key`` (``~/.local/state/mir/`` without it), created
0600 and never under the project: whoever can write ``.mir/`` (the trace store and
``.mir/reviews/verified.txt``) but not that file cannot make a line that matches a
forged or edited statement, so such a review is simply verified again. A key file that
others may read or write, or that is not the user's, is not trusted: nothing is cached.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from pathlib import Path

KEY_NAME = "verify-cache.key"
CHECKED = Path("reviews") / "verified.txt"
_KEY_BYTES = 32


def state_home() -> Path:
    """The verifying user's state folder for mir (XDG base directory spec)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "state"
    return root / "mir"


def _read_secret(path: Path) -> tuple[bytes | None, str | None]:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return None, f"{path} cannot be read ({exc.strerror}): every review verified"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
            why = "others may read or write it"
        elif hasattr(os, "getuid") and info.st_uid != os.getuid():
            why = "another user owns it"
        else:
            data = handle.read(_KEY_BYTES + 1)
            if len(data) == _KEY_BYTES:
                return data, None
            why = f"it does not hold {_KEY_BYTES} bytes"
    return (
        None,
        f"{path} is not trusted ({why}): every review verified; delete it to make a new one",
    )


def cache_secret(project_root: Path | None = None) -> tuple[bytes | None, str | None]:
    """The secret (made on first use), or None and why: then nothing is cached. A state
    folder inside the project (``XDG_STATE_HOME`` pointed there) is refused: whoever can
    edit the project could read the secret."""
    path = state_home() / KEY_NAME
    if project_root is not None and path.resolve().is_relative_to(project_root.resolve()):
        return None, f"{path} is inside the project: not a secret, every review verified"
    if path.exists() or path.is_symlink():
        return _read_secret(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_secret(path)  # another verify made it first
    except OSError:
        return None, None  # no state folder to keep it in (read-only home): no cache
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_bytes(_KEY_BYTES))
        handle.flush()
        os.fsync(handle.fileno())
    return _read_secret(path)


class ReviewCache:
    """The tags read from ``<state_dir>/reviews/verified.txt`` and the ones to add."""

    def __init__(self, state_dir: Path, *, full: bool, project_root: Path | None = None):
        self._path = state_dir / CHECKED
        self._secret, self.problem = cache_secret(project_root)
        self._full = full
        self._seen = set() if full or self._secret is None else _read_tags(self._path)
        self._new: list[str] = []

    @property
    def enabled(self) -> bool:
        return self._secret is not None

    def tag(self, text: str) -> str:
        if self._secret is None:
            return ""
        return hmac.digest(self._secret, text.encode("utf-8", "surrogatepass"), "sha256").hex()

    def __contains__(self, tag: str) -> bool:
        return bool(tag) and tag in self._seen

    def add(self, tag: str) -> None:
        if tag:
            self._new.append(tag)

    def write(self) -> None:
        """Append the new tags (a ``--full`` run starts the file again)."""
        if self._secret is None or (not self._new and not self._full):
            return
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            # never through a link someone put in the project's state folder
            how = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if self._full else os.O_APPEND)
            fd = os.open(self._path, how | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write("".join(f"{tag}\n" for tag in self._new))
        except OSError:
            pass  # a read-only state folder: the next verify checks them again


def _read_tags(path: Path) -> set[str]:
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return set()
    return {line for line in text.splitlines() if len(line) == 64}
