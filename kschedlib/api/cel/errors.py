"""The errors of DRA device selectors (CEL), importable without the CEL environment."""

from __future__ import annotations


class CELError(Exception):
    """A runtime error, with cel-go's message (always one line)."""


class CELCompileError(CELError):
    """An expression that does not compile, does not type-check or is too long."""
