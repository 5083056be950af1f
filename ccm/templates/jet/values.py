"""Jet's error type, the invalid value and Jet's truthiness rule (shared by every stage)."""
from __future__ import annotations


from ccm.gocompat.fmt import go_type_name
from ccm.model.errors import TemplateError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


class JetError(TemplateError):
    """A Jet template could not be parsed or rendered.

    ``template``, ``line`` and ``column`` locate the problem, ``reason`` says what
    it was; ``str()`` gives ``template: <name>:<line>:<col>: <reason>`` for parse
    errors and ``Jet Runtime Error ("<name>":<line>:<col>): <reason>`` at run time.
    """

    def __init__(self, reason: str, *, template: str = "template", line: int = 0,
                 column: int = 0, runtime: bool = False):
        self.reason = reason
        self.template = template
        self.line = line
        self.column = column
        self.runtime = runtime
        if runtime:
            text = f'Jet Runtime Error ("{template}":{line}:{column}): {reason}'
        else:
            text = f"template: {template}:{line}:{column}: {reason}"
        super().__init__(text)


class _Missing:
    """An invalid value (Go's zero ``reflect.Value``): a missing map key."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()

_WS = " \t\r\n"


def _go_type(v: Any) -> str:
    return "invalid" if v is MISSING else go_type_name(v)


def _truth(v: Any) -> bool:
    # Go's reflect IsZero: a non-nil empty slice or map is *not* zero. Jet decides
    # truth with reflect's zero test while text/template (ccm.templates.gotmpl.values.truth)
    # uses its own rule where empty collections are false; manifests depend on both.
    if v is None or v is MISSING:
        return False
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):  # a number: bools returned above
        return v != 0
    if isinstance(v, str):
        return v != ""
    return True
