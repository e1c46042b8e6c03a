"""``mir models register`` as one use case: a new version checked (fields, provider,
file, context window, no secret in free text), its GGUF hashed once, then added to
``models.toml`` as a candidate with its history row.

The digest is taken by ``mir.inference.FILE_HASHER`` and kept in the project's digest
cache (``.mir/cache/sha256.json``), keyed on the file's identity (inode, size, mtime,
ctime): the integrity check before the first load finds it there and does not read a
multi-gigabyte file again. A file changed since is hashed again, and refused.
"""

from __future__ import annotations

from pathlib import Path

from mir.errors import UsageError
from mir.models.domain import ModelEntry
from mir.models.editing import register
from mir.models.registry_file import artifact_path

PROVIDERS = ("llama", "litellm")


def refuse_secret(option: str, value: str | None) -> str | None:
    """``value``, unless it holds a secret (an API key, a password, the value of a
    secret environment variable): it would be committed in ``models.toml`` and kept in
    ``.mir/models.duckdb`` unredacted, where traces would have scrubbed it."""
    import os

    from mir.traces import Redactor, secret_env_values

    if value and Redactor(secret_env_values(os.environ, ())).text(value) != value:
        raise UsageError(
            f"{option} looks like it holds a secret; it would be kept unredacted in "
            "models.toml and the model history",
            hint="leave the secret out",
        )
    return value


def author(by: str | None) -> str:
    """Who made a change: ``--by`` (no secret in it), else the login name."""
    if by:
        return refuse_secret("--by", by) or by
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def register_version(
    root: Path,
    *,
    name: str,
    version: str,
    artifact: str,
    provider: str = "llama",
    api_base: str | None = None,
    quantization: str | None = None,
    context: int | None = None,
    queue: int | None = None,
    notes: str | None = None,
    by: str | None = None,
    why: str | None = None,
) -> ModelEntry:
    """Add ``NAME@VERSION`` as a candidate; a llama file is hashed (once) and its
    sha256 kept in the entry. Every refusal is a one-line ``UsageError`` naming the
    option, and leaves ``models.toml`` untouched."""
    from pydantic import ValidationError

    if provider not in PROVIDERS:
        raise UsageError(f"--provider: unknown provider {provider!r}", hint="llama or litellm")
    fields = {
        "name": name,
        "version": version,
        "provider": provider,
        "artifact": artifact,
        "api_base": api_base,
        "quantization": quantization,
        "context": context,
        "queue": queue,
        "notes": refuse_secret("--notes", notes),
    }
    try:
        entry = ModelEntry.model_validate(fields)
        if provider == "llama":
            path = artifact_path(entry, root)
            if not path.is_file():
                raise UsageError(f"--artifact: no file {path}", hint="give a .gguf file")
            entry = entry.model_copy(update={"sha256": _digest(root, path)})
            _check_context(entry.context, path, artifact)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        raise UsageError(f"{field}: {message}" if field else message) from exc
    return register(root, entry, by=author(by), why=refuse_secret("--why", why))


def _digest(root: Path, path: Path) -> str:
    """The file's sha256, through the digest cache the integrity check reads."""
    from mir.inference import DIGEST_CACHE, FILE_HASHER

    return FILE_HASHER.digest(path, root / DIGEST_CACHE)


def _check_context(context: int | None, path: Path, artifact: str) -> None:
    """``--context`` at most what the GGUF was trained on (read from its header)."""
    from mir.inference import trained_context

    trained = trained_context(path)
    if context is not None and trained is not None and context > trained:
        raise UsageError(
            f"--context {context}: {artifact} was trained on {trained} tokens "
            "(its GGUF's context_length)",
            hint=f"give at most {trained}",
        )
