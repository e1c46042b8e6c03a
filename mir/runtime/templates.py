"""Rendering a contract's prompt template with jinja2 (sandboxed, strict).

Sandboxed because the template sees data that came from outside (the input); strict
(``StrictUndefined``) because a typo in a variable name must fail loudly at load, not
send the model a prompt with a silent hole in it. What no input could satisfy (syntax,
an unknown top-level variable) is a ``ConfigError`` at load; what THIS input breaks (a
string where the template does arithmetic, a missing key) is a ``PromptRenderError``,
which the flow records as ``input_invalid``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from mir.errors import ConfigError
from mir.inference import Message
from mir.runtime.prompting import (
    TEMPLATE_VARIABLES,
    PromptRenderError,
    PromptVariables,
    RenderedPrompt,
    as_data,
    escaped_json,
)


class JinjaPromptRenderer:
    def __init__(self, path: Path, contract_version: str):
        import jinja2
        from jinja2 import meta, nodes
        from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

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
        env.filters["as_data"] = as_data
        env.filters["escaped_json"] = escaped_json
        try:
            self._template = env.from_string(source)
            tree = env.parse(source)
            # Names set anywhere (even in one branch of an `if`) are the template's own.
            assigned = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
            unknown = meta.find_undeclared_variables(tree) - assigned
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(
                f"template syntax: {exc.message}", where=f"{path}:{exc.lineno}"
            ) from exc
        unknown -= TEMPLATE_VARIABLES | set(env.globals)
        if unknown:
            raise ConfigError(
                f"template uses unknown variables: {', '.join(sorted(unknown))}",
                where=str(path),
                hint=f"a template may use: {', '.join(sorted(TEMPLATE_VARIABLES))}",
            )
        self._unsafe = SecurityError
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
                data=variables.data,
            )
        except self._unsafe as exc:  # the template reaches for Python internals: its bug
            raise ConfigError(f"template: {exc}", where=str(self._path)) from exc
        except Exception as exc:  # jinja2 errors, TypeError, OverflowError... from the data
            why = f"{self._path.name}: {type(exc).__name__}: {exc}"
            raise PromptRenderError(why[:500]) from exc
        return RenderedPrompt(
            messages=(Message(role="user", content=text.strip()),), version=self.version
        )
