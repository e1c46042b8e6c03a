"""``mir run agent --show-prompt``: the prompt a decision would show the model, and
nothing else: no model is loaded or called, no flow is traced, no executor runs.

It follows a flow's opening exactly (the input check, the caller's world or the context
loader's, the contract's scope), so what it prints is what the first attempt sends.
What a flow would refuse is a usage error here (exit 2, the reason on one line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mir.errors import UsageError
from mir.project import find_project
from mir.runtime.arguments import read_json_object
from mir.runtime.loading import load_parts, resolve_contract
from mir.runtime.opening import caller_context, load_context
from mir.runtime.prompting import PromptRenderError, PromptVariables, RenderedPrompt
from mir.runtime.snapshot import ContextSnapshot, thaw


def prompt_json(prompt: RenderedPrompt) -> dict[str, Any]:
    """What ``--show-prompt --json`` prints: the prompt's version and its messages."""
    messages = [message.model_dump() for message in prompt.messages]
    return {"prompt_version": prompt.version, "messages": messages}


def preview_prompt(
    ref: str,
    *,
    input: str,
    context: str | None = None,
    project: str | Path | None = None,
) -> RenderedPrompt:
    """The rendered first-attempt prompt of ``ref`` for this input and world."""
    data: Any = read_json_object(input, "--input")
    state: Any = read_json_object(context, "--context") if context is not None else None
    ref_path = Path(ref)
    near = ref_path.parent if ref_path.suffix in (".yaml", ".yml") else None
    proj = find_project(Path(project) if project is not None else near)
    parts = load_parts(resolve_contract(ref, proj), proj.root)
    checked = parts.integrity.check_input(data)
    if checked.ok and state is not None:
        checked = caller_context(state)
    if not checked.ok:
        raise UsageError(f"the contract refuses this input: {checked.problems[0].message}")
    if state is None and parts.context_loader is not None:
        loaded = load_context(parts, dict(data))
        if isinstance(loaded, str):
            raise UsageError(loaded, hint="pass the world with --context JSON to skip the loader")
        state = loaded
    snap = ContextSnapshot.take(
        data,
        state or {},
        input_scope=parts.contract.scope.input,
        context_scope=parts.contract.scope.context,
    )
    variables = PromptVariables(
        mission=parts.contract.mission,
        input=thaw(snap.visible_input),
        context=thaw(snap.visible_context),
        actions=dict(parts.contract.actions),
        schema=parts.decision_schema,
        errors=[],
    )
    try:
        return parts.prompt.render(variables)
    except PromptRenderError as exc:
        raise UsageError(f"the prompt cannot be rendered for this input: {exc}") from exc
