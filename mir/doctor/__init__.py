"""``mir doctor``: what is wrong with this set-up, one check per row."""

from mir.doctor.domain import COLUMNS, Check, Diagnosis
from mir.doctor.entrypoints import diagnose

__all__ = ["COLUMNS", "Check", "Diagnosis", "diagnose"]
