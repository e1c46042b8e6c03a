"""Secrets never reach a trace file: every string is scrubbed before it is written.

Four sources of secrets, all replaced by ``[REDACTED]``:

* values of environment variables the project names (``[tool.mir.traces] redact_env``)
  and of every variable whose *name* says it is a secret: one of its ``_``-separated
  words is KEY, SECRET, TOKEN, PASS, PASSWORD, CREDENTIAL(S), AUTH ... (``API_KEY``,
  ``AWS_SECRET_ACCESS_KEY``, ``DB_PASS``; not ``KEYBOARD`` nor ``PATH``);
* explicit values the caller passes (e.g. a key read from a vault);
* shapes secrets have whatever their origin (``SECRET_SHAPES``): authorization headers
  (Bearer in any casing, Basic), provider keys (OpenAI/Anthropic ``sk-``, Stripe
  ``sk_live_``, Google ``AIza``, GitHub, GitLab, Slack, AWS, Hugging Face, npm,
  SendGrid), bare JWTs, PEM private keys, passwords in URLs, and ``key: value`` /
  ``key=value`` / ``"key": "value"`` pairs whose key names a secret (password, pwd,
  secret, token, api_key, access_key ...); in structured data, the value of any dict
  key that names a secret;
* the project's own patterns (``[tool.mir.traces] redact_patterns``).

Redaction works on decoded values (each string, each dict key, recursively), never on
serialized JSON text: a blind text substitution could match across JSON syntax (a
numeric secret matching a token count) and corrupt the line. It is idempotent: a
redacted value redacts to itself (exports redact what the store already redacted).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[REDACTED]"
# Words of an environment variable's name that make its value a secret.
SECRET_NAME_PARTS = frozenset(
    {
        *("KEY", "KEYS", "APIKEY", "SECRET", "SECRETS", "TOKEN", "TOKENS", "PAT"),
        *("PASS", "PASSWD", "PASSWORD", "PASSWORDS", "PASSPHRASE"),
        *("CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH"),
    }
)
# Values shorter than this are not redacted as literals: scrubbing "1" or "dev" from
# every trace would destroy the record without protecting anything worth protecting.
MIN_SECRET_LENGTH = 6

_TOKEN_CHARS = r"[A-Za-z0-9._~+/=-]"
_NOT_REDACTED = r"(?!\[REDACTED\])"
# Keys naming a secret in ``key: value`` text. Left boundary: not after a letter (so
# ``db_password`` and ``x-api-key`` match, ``bypass`` does not) or a camelCase hump
# (``dbPassword``); right boundary: not before a letter (``tokens``, ``TOKENS``,
# ``passwordHash`` are not secrets, and the pre-check relies on it for "tokens").
_KEY_WORDS = (
    r"(?i:passwords?|passwd|passphrase|pwd|(?<=[_-])pass|secrets?|token"
    r"|(?:api|access|private|secret|signing|encryption|master|client)[_-]?key|credentials?)"
)
_KEY_NAME = rf"(?:(?<![A-Za-z])|(?<=[a-z])(?=[A-Z])){_KEY_WORDS}(?![A-Za-z])"
_QUOTED = r"""\\"(?:(?!\\").)*\\"|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'"""
_AUTH_SCHEME = r"(?:(?i:bearer|basic|token|digest|negotiate|ntlm)\s+)"

# Each alternative is one outer named group (``match.lastgroup`` says which one hit).
SECRET_SHAPES: dict[str, str] = {
    # PEM private keys, to the END line (or the end of the text when cut off).
    "pem": r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    "authorization": rf"(?P<authorization_head>(?i:authorization)(?:\\?[\"'])?\s*[:=]\s*"
    rf"(?:\\?[\"'])?){_NOT_REDACTED}{_AUTH_SCHEME}?[^\s\"',;\\]+",
    "pair": rf"(?P<pair_head>{_KEY_NAME}(?:\\?[\"'])?\s*[:=]>?\s*){_NOT_REDACTED}"
    rf"{_AUTH_SCHEME}?(?P<pair_value>{_QUOTED}|[^\s\"',;&}}\]\\]+)",
    # Anchored on "://" (the scheme is left in place): starting at the scheme would
    # rescan a long "a.a.a..." run from every word boundary (quadratic on hostile text).
    "url": r"(?P<url_head>(?<=[A-Za-z0-9+.-])://[^\s:/@]*:)[^\s/@]+@",
    "basic": r"(?P<basic_head>(?i:basic)\s+)(?P<basic_token>[A-Za-z0-9+/]{8,}={0,2})",
    "bearer": rf"(?i:bearer)\s+{_TOKEN_CHARS}{{8,}}",
    # Only where a base64url run starts: "eyJeyJeyJ..." must not be rescanned from each.
    "jwt": r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
    "openai": r"\bsk-[A-Za-z0-9_-]{16,}",
    "stripe": r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
    "google": r"\bAIza[0-9A-Za-z_-]{35}",
    "github": r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{22,}",
    "slack": r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    "aws": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "huggingface": r"\bhf_[A-Za-z0-9]{30,}",
}
# Substrings every SECRET_SHAPES match contains, lowercase (kept next to them: change
# both together; a unit test checks a sample of each shape against them). They are
# searched in the lowercased text: schemes and key names come in any casing, and one
# lowercase copy (~0.2 us) is cheaper than a second list of casings to scan.
# Every scan costs ~0.2 us on a trace line: markers sharing a first letter are one
# regex (a literal first character is a fast scan in ``re``), the others plain `in`.
MARKERS = ("credential", "xox", "hf_", "eyj")
MARKER_GROUPS = tuple(
    re.compile(group)
    for group in (
        r"p(?:ass|wd|rivate key)",
        r"s(?:k-|ecret)",
        r"b(?:earer|asic)",
        r"a(?:iza|kia|sia|uthorization)",
        r"k_(?:live|test)_",
    )
)
_TOKEN_MARKER = re.compile(r"token(?!s)")
_GITHUB_MARKER = re.compile(r"gh[pousr]_|github_pat_")  # one C-speed scan for "g"
# "<word>key" / "<word>_key" / "<word>-key" of a key naming a secret (after "key").
_KEY_PREFIXES = ("api", "access", "private", "secret", "signing", "encryption", "master")
_KEY_PREFIXES += ("client",)

_SECRET_KEY_LAST = frozenset(
    {"password", "passwords", "passwd", "passphrase", "pwd", "secret", "secrets", "token"}
    | {"credential", "credentials", "apikey", "authorization"}
)
_SECRET_KEY_PAIR = frozenset(
    {"api", "access", "private", "secret", "signing", "encryption", "master", "client"}
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Words of a key name are split on "_", "-", ".", " " and camelCase humps only: the
# characters that stay as they are in JSON text, where the pre-check looks for them.
_WORDS = re.compile(r"[_\-. ]+")
_PATH = re.compile(r"(?:~|\.{0,2})/[\w./-]*")


def is_secret_name(name: str) -> bool:
    """True for an environment variable name whose value is a secret (``DB_PASS``)."""
    return any(part in SECRET_NAME_PARTS for part in re.split(r"[^A-Z0-9]+", name.upper()))


def is_secret_key(key: str) -> bool:
    """True for a dict key naming a secret: ``password``, ``apiKey``, ``client_secret``,
    ``access_token`` (not ``idempotency_key``, ``prompt_tokens``, ``password_hash``)."""
    words = [w for w in _WORDS.split(_CAMEL.sub("_", key).lower()) if w]
    if not words:
        return False
    if words[-1] in _SECRET_KEY_LAST:
        return True
    return len(words) > 1 and words[-1] == "key" and words[-2] in _SECRET_KEY_PAIR


def secret_env_values(environ: Mapping[str, str], names: Iterable[str]) -> list[str]:
    """Values of the named variables plus every variable whose name marks it secret.

    A secret-named variable holding a file path (``SSH_AUTH_SOCK``,
    ``GOOGLE_APPLICATION_CREDENTIALS``) points at a secret; the path itself is not one,
    and scrubbing it would only blank paths out of traces.
    """
    wanted = set(names)
    return [
        value
        for name, value in environ.items()
        if value and (name in wanted or (is_secret_name(name) and not _PATH.fullmatch(value)))
    ]


class Redactor:
    """Replaces secrets in strings and nested JSON-like values."""

    def __init__(self, values: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
        literals = sorted({v for v in values if len(v) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        parts = [re.escape(v) for v in literals]
        parts += [f"(?P<{name}>{shape})" for name, shape in SECRET_SHAPES.items()]
        self._pattern = re.compile("|".join(parts))
        # The project's own patterns may hold groups and flags of their own: one pass each.
        self._custom = [re.compile(p) for p in patterns]
        # The pre-check runs on every event, so it is plain substring search (C speed,
        # ~20x cheaper than the regex): each literal as it appears raw and inside JSON
        # text, and a marker of every shape. A hit only means "run the regex".
        # Escaped twice too: ``data`` is JSON text inside the JSON line.
        escaped = {json.dumps(v, ensure_ascii=False)[1:-1] for v in literals}
        twice = {json.dumps(v, ensure_ascii=False)[1:-1] for v in escaped}
        self._literals = tuple(set(literals) | escaped | twice)

    def text(self, value: str) -> str:
        # Again until nothing changes (at most a few passes, and only for strings that
        # held a secret): a replacement can expose another shape ("9xoxb-..." is no
        # token, "[REDACTED]xoxb-..." is), and redaction must be idempotent.
        for _ in range(4):
            redacted = self._pattern.sub(self._replace, value)
            for pattern in self._custom:
                redacted = pattern.sub(REDACTED, redacted)
            if redacted == value:
                break
            value = redacted
        return value

    def _replace(self, match: re.Match[str]) -> str:
        shape = match.lastgroup
        if shape is None or shape in ("pem", "bearer") or shape not in SECRET_SHAPES:
            return REDACTED  # a literal, or a shape that is a secret from end to end
        head = match.group(f"{shape}_head") if f"{shape}_head" in match.re.groupindex else None
        if shape == "pair":
            value = match.group("pair_value")
            quote = value[:2] if value.startswith('\\"') else value[:1]
            quote = quote if quote in ('"', "'", '\\"') else ""
            return f"{head}{quote}{REDACTED}{quote}"
        if shape == "url":
            return f"{head}{REDACTED}@"
        if shape == "basic":
            token = match.group("basic_token")
            if not _is_basic_credential(token):  # "basic understanding": prose, not a key
                return f"{head}{self.text(token)}"
            return f"{head}{REDACTED}"
        return f"{head}{REDACTED}" if head is not None else REDACTED

    def might_contain(self, text: str) -> bool:
        """False means no secret is in ``text`` (a string or JSON text): skip the walk."""
        # Plain loops and `in`: the cheapest scans CPython has (this runs on every event).
        for literal in self._literals:
            if literal in text:
                return True
        if _GITHUB_MARKER.search(text) is not None:
            return True
        folded = text.lower()
        for marker in MARKERS:
            if marker in folded:
                return True
        for group in MARKER_GROUPS:
            if group.search(folded) is not None:
                return True
        # Every trace body holds "prompt_tokens" and "completion_tokens": a "token" not
        # followed by "s" is what a secret key name ("token", "access_token") looks like.
        if _TOKEN_MARKER.search(folded) is not None:
            return True
        if "key" in folded and _names_a_secret_key(folded):
            return True
        if "@" in text and "://" in text:
            return True
        # A project pattern may match the decoded text only (an escaped quote or newline
        # in JSON text): any escape sends the event through the walk.
        return bool(self._custom) and (
            "\\" in text or any(p.search(text) is not None for p in self._custom)
        )

    def value(self, value: Any) -> Any:
        """Recursively redact every string and dict key of a JSON-like value; the whole
        value under a key that names a secret (``{"password": ...}``) is redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {
                self.text(str(k)): _blank(v) if is_secret_key(str(k)) else self.value(v)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def _blank(value: Any) -> Any:
    """Every string and number under a secret key becomes [REDACTED] (structure kept)."""
    if isinstance(value, Mapping):
        return {str(k): _blank(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_blank(v) for v in value]
    if isinstance(value, bool) or value is None or value == "":
        return value
    if isinstance(value, str | int | float):
        return REDACTED
    return value


def _names_a_secret_key(folded: str) -> bool:
    """Whether a "key" in lowercased text ends a secret's key name (``api_key``)."""
    at = folded.find("key")
    while at != -1:
        if folded[max(at - 16, 0) : at].rstrip("_-. ").endswith(_KEY_PREFIXES):
            return True
        at = folded.find("key", at + 3)
    return False


def _is_basic_credential(token: str) -> bool:
    """HTTP Basic credentials are base64 of ``user:password``."""
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded
