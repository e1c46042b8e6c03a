"""Web logins of declared reviewers: ``<state_dir>/reviewer-logins.json``.

A password is never stored: each login keeps a random salt and the scrypt hash
(``hashlib.scrypt``, n=2**14, r=8, p=1) of the password; a check compares in constant
time. The file is written atomically, 0600. Only a reviewer declared in reviewers.toml
can have a login, and a login of a reviewer no longer declared never checks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.errors import ConfigError, UsageError
from mir.reviewers.roster import load_reviewers, reviewer_named
from mir.storage import write_atomic

FILE_NAME = "reviewer-logins.json"
SCRYPT = {"n": 2**14, "r": 8, "p": 1}
MIN_PASSWORD = 8
_DKLEN = 32


def logins_path(state_dir: Path) -> Path:
    return state_dir / FILE_NAME


def _hash(password: str, salt: bytes, params: dict[str, int]) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"),
        salt=salt,
        n=params["n"],
        r=params["r"],
        p=params["p"],
        maxmem=128 * params["n"] * params["r"] * (params["p"] + 1) + 1024 * 1024,
        dklen=_DKLEN,
    )


def _read(state_dir: Path) -> dict[str, Any]:
    path = logins_path(state_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the reviewer logins: {exc}", where=str(path)) from exc
    logins = data.get("logins") if isinstance(data, dict) else None
    if not isinstance(logins, dict):
        raise ConfigError("no 'logins' table", where=str(path), hint="set a password again")
    return logins


def set_password(root: Path, state_dir: Path, name: str, password: str) -> None:
    """Store the scrypt hash of ``password`` as ``name``'s web login."""
    reviewer_named(load_reviewers(root), name, root)
    if len(password) < MIN_PASSWORD:
        raise UsageError(f"the password is shorter than {MIN_PASSWORD} characters")
    logins = _read(state_dir)
    salt = secrets.token_bytes(16)
    logins[name] = {
        "scrypt": dict(SCRYPT),
        "salt": base64.b64encode(salt).decode(),
        "hash": base64.b64encode(_hash(password, salt, SCRYPT)).decode(),
        "set_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    state_dir.mkdir(parents=True, exist_ok=True)
    path = logins_path(state_dir)
    text = json.dumps({"version": 1, "logins": logins}, indent=2, sort_keys=True)
    write_atomic(path, text, mode=0o600)


def has_login(state_dir: Path, name: str) -> bool:
    try:
        return name in _read(state_dir)
    except ConfigError:
        return False


def check_login(root: Path, state_dir: Path, name: str, password: str) -> bool:
    """True when ``name`` is a declared reviewer and ``password`` is their login's."""
    if name not in load_reviewers(root):
        return False
    entry = _read(state_dir).get(name)
    if not isinstance(entry, dict):
        return False
    try:
        params = {k: int(entry["scrypt"][k]) for k in ("n", "r", "p")}
        salt = base64.b64decode(entry["salt"], validate=True)
        stored = base64.b64decode(entry["hash"], validate=True)
        if params["n"] > 2**20 or params["r"] > 32 or params["p"] > 16:
            return False  # an edited file must not make a check cost minutes
        return hmac.compare_digest(_hash(password, salt, params), stored)
    except (KeyError, TypeError, ValueError):
        return False
