"""Which judge a verdict comes from: the built-in judge's folder, the hash of what shapes
its answers, and its identity (model and prompt hash) that calibrations are kept by."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


def judge_home() -> Path:
    """``capabilities/judge``: ``mir/_capabilities/judge`` in an installed wheel, else the
    repository's own folder (a source checkout or an editable install)."""
    package = Path(__file__).resolve().parent.parent  # the ``mir`` package
    shipped = package / "_capabilities" / "judge"
    return shipped if shipped.is_dir() else package.parent / "capabilities" / "judge"


def judge_prompt_hash(home: Path | None = None) -> str:
    """Hash of everything that shapes the judge's answers: both contracts, both prompt
    templates and the decision schemas. A calibration counts only for this hash."""
    home = home or judge_home()
    digest = hashlib.sha256()
    files = [*sorted((home / "agents").glob("*.yaml")), *sorted((home / "agents").glob("*.j2"))]
    for file in [*files, home / "domain.py"]:
        digest.update(file.relative_to(home).as_posix().encode())
        # newline-normalised: a checkout with CRLF endings is the same judge
        digest.update(file.read_bytes().replace(b"\r\n", b"\n"))
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class JudgeIdentity:
    """Which judge this is, for calibration records: model and prompt hash."""

    provider: str
    model: str
    prompt_hash: str

    @property
    def model_label(self) -> str:
        """``llama:default``, ``litellm:openai/gpt-4o-mini``, ``scripted``."""
        return self.provider if self.provider == "scripted" else f"{self.provider}:{self.model}"
