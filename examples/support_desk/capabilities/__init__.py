"""Capabilities of support-desk: one vertical slice per sub-package (see CLAUDE.md)."""
