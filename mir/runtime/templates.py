"""Rendering a contract's prompt template with jinja2 (sandboxed, strict).

Sandboxed because the template sees data that came from outside (the input); strict
(``StrictUndefined``) because a typo in a variable name must fail loudly at load or
first render, not send the model a prompt with a silent hole in it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from mir.errors import ConfigError
from mir.inference import Message
from mir.runtime.prompting import PromptVariables, RenderedPrompt


class JinjaPromptRenderer:
    def __init__(self, path: Path, contract_version: str):
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        try:
            source = path.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError) as exc:
            raise ConfigError(
                "prompt template not found",
                where=str(path),
                hint="create it, or fix 'prompt' in the contract",
            ) from exc
        env = ImmutableSandboxedEnvironment(
            undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
        )
        try:
            self._template = env.from_string(source)
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(
                f"template syntax: {exc.message}", where=f"{path}:{exc.lineno}"
            ) from exc
        self._errors = (jinja2.TemplateError,)
        self._path = path
        template_hash = hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]
        self.version = f"{contract_version}+{template_hash}"

    def render(self, variables: PromptVariables) -> RenderedPrompt:
        try:
            text = self._template.render(
                mission=variables.mission,
                input=variables.input,
                context=variables.context,
                actions=variables.actions,
                schema=variables.schema,
                errors=variables.errors,
            )
        except self._errors as exc:
            raise ConfigError(f"template: {exc}", where=str(self._path)) from exc
        return RenderedPrompt(
            messages=(Message(role="user", content=text.strip()),), version=self.version
        )
