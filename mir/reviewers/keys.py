"""Ed25519 keys and signatures, through ``cryptography`` (imported lazily: `mir --help`
and every command that does not sign stay as fast as before).

A private key file is the key in unencrypted PKCS#8 PEM (what ``cryptography`` and
``openssl pkey`` read), written 0600 and never under the project's state folder; the
same text may be given in ``MIR_REVIEWER_KEY``. A public key is ``ed25519:`` + base64 of
its 32 raw bytes.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mir.errors import ConfigError, UsageError
from mir.reviewers.batch import verify_one
from mir.reviewers.domain import KEY_PREFIX, PUBLIC_KEY, Statement

KEY_FILE_ENV = "MIR_REVIEWER_KEY_FILE"
KEY_ENV = "MIR_REVIEWER_KEY"


@dataclass(frozen=True)
class SigningKey:
    """A reviewer's private key, able to sign statements."""

    private: Any  # cryptography's Ed25519PrivateKey
    source: str  # where it came from (a path or an environment variable), for messages

    @property
    def public_key(self) -> str:
        from cryptography.hazmat.primitives import serialization

        raw = self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        return KEY_PREFIX + base64.b64encode(raw).decode()

    def sign(self, statement: Statement) -> str:
        """The base64 Ed25519 signature of the statement's canonical bytes."""
        return base64.b64encode(self.private.sign(statement.canonical())).decode()


def generate_key() -> SigningKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return SigningKey(Ed25519PrivateKey.generate(), "generated")


def private_pem(key: SigningKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def parse_private_key(text: str | bytes, source: str) -> SigningKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    data = text.encode() if isinstance(text, str) else text
    try:
        key = serialization.load_pem_private_key(data.strip() + b"\n", password=None)
    except (ValueError, TypeError) as exc:
        raise UsageError(
            f"{source} is not an unencrypted Ed25519 private key in PEM",
            hint="use the file `mir reviewers keygen` wrote",
        ) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise UsageError(f"{source} is not an Ed25519 key", hint="run `mir reviewers keygen`")
    return SigningKey(key, source)


def load_signing_key(path: str | Path | None = None) -> SigningKey | None:
    """The reviewer's key: ``path``, else the file ``$MIR_REVIEWER_KEY_FILE``, else the
    key text in ``$MIR_REVIEWER_KEY``; None when none of them is given (unsigned)."""
    if path is None and os.environ.get(KEY_FILE_ENV):
        path = os.environ[KEY_FILE_ENV]
    if path is not None:
        file = Path(path).expanduser()
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read the key file {file}: {exc.strerror or exc}") from exc
        return parse_private_key(data, str(file))
    text = os.environ.get(KEY_ENV)
    if text:
        return parse_private_key(text, f"${KEY_ENV}")
    return None


def public_key_bytes(public_key: str) -> bytes:
    if not PUBLIC_KEY.match(public_key):
        raise ConfigError(
            f"invalid public key {public_key[:60]!r}",
            hint="expected 'ed25519:' + base64 of 32 bytes, as `mir reviewers keygen` prints",
        )
    return base64.b64decode(public_key.removeprefix(KEY_PREFIX))


def verify_signature(public_key: str, statement: Statement, signature: str | None) -> bool:
    """True when ``signature`` is the key's signature of the statement's canonical bytes."""
    if not signature or not isinstance(signature, str):
        return False
    return verify_one(public_key, statement.canonical(), signature)


def write_private_key(key: SigningKey, out: Path, state_dir: Path | None) -> Path:
    """Write the key to ``out`` (0600, never overwriting, never inside ``state_dir``)."""
    out = out.expanduser()
    target = out.resolve()
    if state_dir is not None:
        state = state_dir.resolve()
        if target == state or state in target.parents:
            raise UsageError(
                f"{out} is inside the project's state folder {state_dir}: a private key "
                "never goes there",
                hint="use --out with a path outside the project, e.g. ~/.config/mir/keys/",
            )
    if target.exists():
        raise UsageError(f"{out} already exists: not overwritten", hint="choose another --out")
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise UsageError(f"{out} already exists: not overwritten") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(private_pem(key))
    os.chmod(target, 0o600)  # whatever the umask
    return target


def default_key_path(name: str) -> Path:
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "mir" / "keys" / f"{name}.key"
