"""Helpers both template engines (``ccm.templates.jet``, ``ccm.templates.gotmpl``) use:
template source positions and cached call signatures.

Each engine keeps its own invalid value, error type and truthiness rule (they differ on
purpose, see their ``values`` modules).
"""
from __future__ import annotations

import inspect

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
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


def scan_quoted(text: str, i: int, unquote: Callable[[str, int], str],
                error: Callable[[str, int], Exception]) -> Tuple[str, Any, int]:
    """The Go-style literal starting at ``text[i]`` (``"..."``, raw ```...```, ``'c'``).

    Returns ``("string", text, end)`` or ``("char", code point, end)``; ``unquote`` reads
    a double-quoted body's escapes and ``error`` builds the engine's parse error.
    """
    n = len(text)
    c = text[i]
    if c == '"':
        j = i + 1
        while j < n and text[j] != '"':
            if text[j] == "\\":
                j += 1
            elif text[j] == "\n":
                break
            j += 1
        if j >= n or text[j] != '"':
            raise error("unterminated quoted string", i)
        return "string", unquote(text[i + 1:j], i), j + 1
    if c == "`":
        j = text.find("`", i + 1)
        if j < 0:
            raise error("unterminated raw quoted string", i)
        return "string", text[i + 1:j], j + 1
    j = i + 1
    while j < n and text[j] != "'":
        if text[j] == "\\":
            j += 1
        j += 1
    if j >= n:
        raise error("unterminated character constant", i)
    body = unquote(text[i + 1:j], i)
    if len(body) != 1:
        raise error(f"malformed character constant: {text[i:j + 1]}", i)
    return "char", ord(body), j + 1
