"""``mir eval calibrate LABELS.jsonl``: measure the judge against human labels.

Registered on the ``mir eval`` group by ``register(group)``. Prints Cohen's kappa, raw
agreement and the confusion matrix per kind of label (rubric, pairwise) and records the
result in ``judge-calibration.json`` beside the labels, for ``judge.min_kappa``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from mir.cli.options import FORMAT, JSON
from mir.cli.output import add_row, chosen_format, console, listing, print_json, say, step_spinner

if TYPE_CHECKING:
    from mir.evals import Calibration


def register(group: typer.Typer) -> None:
    @group.command("calibrate")
    def calibrate_command(
        labels: Path = typer.Argument(
            ...,
            metavar="LABELS.jsonl",
            help="Human labels, one JSON object a line: input, decision, rubric, label "
            "(pass|fail); or input, a, b, criteria, label (A|B|tie).",
        ),
        suite: Path | None = typer.Option(
            None, "--suite", help="Take the judge settings from this suite's `judge:` section."
        ),
        judge_provider: str | None = typer.Option(
            None,
            "--judge-provider",
            help="llama, litellm or scripted (default: the suite's, "
            "else the project's [tool.mir.model]).",
        ),
        judge_model: str | None = typer.Option(
            None, "--judge-model", help="llama: 'default' or a .gguf; litellm: a model id."
        ),
        judge_api_base: str | None = typer.Option(
            None,
            "--judge-api-base",
            help="litellm: the judge's server, e.g. http://127.0.0.1:8080/v1.",
        ),
        judge_api_key_env: str | None = typer.Option(
            None, "--judge-api-key-env", help="Name of the variable holding the key."
        ),
        judge_responses: Path | None = typer.Option(
            None, "--judge-responses", help="scripted: JSONL of the judge's raw outputs."
        ),
        no_record: bool = typer.Option(
            False, "--no-record", help="Do not append to judge-calibration.json."
        ),
        as_json: bool = JSON,
        fmt: str | None = FORMAT,
        project: str | None = typer.Option(
            None, "--project", help="Project folder (default: found from the labels file)."
        ),
    ) -> None:
        """Run the judge on human-labelled examples: Cohen's kappa, agreement, confusion."""
        from mir.evals import calibrate_judge

        as_json = chosen_format(fmt, as_json) == "json"
        with step_spinner(enabled=not as_json) as show:
            result = calibrate_judge(
                labels, suite=suite, project=project, provider=judge_provider,
                model=judge_model, api_base=judge_api_base, api_key_env=judge_api_key_env,
                responses=judge_responses, record=not no_record,
                progress=None if show is None else lambda d, n: show(f"judging {d}/{n}"),
            )  # fmt: skip
        if as_json:
            from mir.evals import calibration_to_json

            print_json(calibration_to_json(result))
        else:
            _print(result)


def _print(result: Calibration) -> None:
    from mir.evals import agreement_line, calibration_heading

    out = console()
    say(calibration_heading(result))
    for kind in result.kinds:
        agreed = kind.agreement
        out.print(agreement_line(kind), markup=False)
        table = listing("human \\ judge", *agreed.labels, right=agreed.labels)
        for label, row in zip(agreed.labels, agreed.matrix, strict=True):
            add_row(table, label, *row)
        out.print(table)
    if result.records_file is not None:
        say(f"recorded in {result.records_file}")
