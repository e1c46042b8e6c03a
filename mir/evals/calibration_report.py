"""``mir eval calibrate``: a judge's calibration as plain JSON values (``--json``), its
first line (which judge, which labels) and one line per kind of label (the table's
heading)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.evals.calibration import Calibration, KindResult


def calibration_to_json(result: Calibration) -> dict[str, Any]:
    return {
        "judge_model": result.judge_model,
        "prompt_hash": result.prompt_hash,
        "labels": str(result.labels_file),
        "records_file": None if result.records_file is None else str(result.records_file),
        "kinds": [
            {
                "kind": kind.kind,
                "n": kind.agreement.n,
                "kappa": kind.agreement.kappa,
                "agreement": kind.agreement.agreement,
                "labels": list(kind.agreement.labels),
                "matrix": [list(row) for row in kind.agreement.matrix],
                "position_consistency": kind.position_consistency,
                "examples": [
                    {
                        "line": ex.line,
                        "label": ex.label,
                        "verdict": ex.verdict,
                        "reason": ex.reason,
                        "position_consistent": ex.position_consistent,
                    }
                    for ex in kind.examples
                ],
            }
            for kind in result.kinds
        ],
    }


def calibration_heading(result: Calibration) -> str:
    """``judge MODEL, prompt HASH, labels FILE``: which judge was measured on what."""
    model = result.judge_model or "-"
    return f"judge {model}, prompt {result.prompt_hash}, labels {result.labels_file}"


def agreement_line(kind: KindResult) -> str:
    """``rubric: n 40, Cohen's kappa 0.712, raw agreement 0.875[, position consistency]``."""
    agreed = kind.agreement
    kappa = "undefined (one label only)" if agreed.kappa is None else f"{agreed.kappa:.3f}"
    line = f"{kind.kind}: n {agreed.n}, Cohen's kappa {kappa}"
    line += f", raw agreement {agreed.agreement:.3f}"
    if kind.position_consistency is not None:
        line += f", position consistency {kind.position_consistency:.3f}"
    return line
