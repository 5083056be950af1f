"""Helpers both template engines (``ccm.templates.jet``, ``ccm.templates.gotmpl``) use:
template source positions and cached call signatures.

Each engine keeps its own invalid value, error type and truthiness rule (they differ on
purpose, see their ``values`` modules).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional, Tuple


class Source:
    """Template text plus its name, with position -> (line, column) for messages."""

    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name

    def where(self, pos: int) -> Tuple[int, int]:
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - (self.text.rfind("\n", 0, pos) + 1) + 1


def signature(fn: Callable[..., Any], cache: Dict[Any, Any]) -> Optional[inspect.Signature]:
    """``inspect.signature`` cached per function for one render (None when it has none)."""
    try:
        cached: Optional[inspect.Signature] = cache[fn]
        return cached
    except (KeyError, TypeError):
        pass
    try:
        sig: Optional[inspect.Signature] = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    try:
        cache[fn] = sig
    except TypeError:  # unhashable callable
        pass
    return sig
