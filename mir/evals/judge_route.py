"""The one route both judge agents use, from the suite's ``judge:`` settings."""

from __future__ import annotations

from pathlib import Path

from mir.contracts import JudgeSettings, Route
from mir.errors import ConfigError
from mir.inference import ModelSettings


def judge_route(
    settings: JudgeSettings,
    *,
    suite_dir: Path,
    model_settings: ModelSettings,
    provider: str | None = None,
    max_tokens: int = 640,
) -> Route:
    """The one route both judge agents use: the suite's ``judge:`` settings, else the
    project's ``[tool.mir.model]``.

    The run's ``provider`` (``mir eval --provider``) picks the agent's model, not the
    judge's: a judge stays the same judge whatever model is under test, so its
    calibration still holds. Only a scripted run (offline replay) makes a judge without
    a provider of its own scripted too: it then replays ``judge.responses``, which a run
    on a real model ignores (recorded verdicts of other answers would mean nothing).
    Decoding settings (temperature, ``max_tokens``) stay the judge contract's."""
    chosen = settings.provider
    if chosen is None:
        chosen = "scripted" if provider == "scripted" else model_settings.provider
    responses = None
    if chosen == "scripted" and settings.responses is not None:
        responses = Path(settings.responses).expanduser()
        responses = responses if responses.is_absolute() else suite_dir / responses
    if chosen == "scripted" and responses is None:
        raise ConfigError(
            "the judge runs scripted but the suite names no judge responses",
            hint="set judge.responses to a JSONL file of the judge's raw outputs "
            "(relative to the suite), or judge.provider to llama or litellm",
        )
    same = model_settings.provider == chosen
    model = settings.model or (model_settings.model if same else None)
    if chosen == "llama":
        model = model or "default"
    if chosen == "litellm" and not model:
        raise ConfigError(
            "the judge runs on litellm but names no model",
            hint="set judge.model, e.g. 'openai/gpt-4o-mini'",
        )
    return Route(
        name="judge",
        provider=chosen,  # type: ignore[arg-type]
        model=model if chosen != "scripted" else None,
        api_base=settings.api_base or (model_settings.api_base if same else None),
        api_key_env=settings.api_key_env or (model_settings.api_key_env if same else None),
        temperature=0.0,  # the same answer for the same question: a judge must be repeatable
        max_tokens=max_tokens,
        responses=str(responses) if responses is not None else None,
    )
