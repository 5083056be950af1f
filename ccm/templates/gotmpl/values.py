"""Go template's error type, the invalid value and text/template's truthiness rule."""
from __future__ import annotations


from ccm.gocompat.fmt import go_type_name
from ccm.model.errors import TemplateError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Optional


class GoTemplateError(TemplateError):
    """A Go template could not be parsed or executed.

    ``str()`` is ``template: <name>:<line>:<col>: <reason>`` for parse errors and
    ``template: <name>:<line>:<col>: executing "<name>" at <<node>>: <reason>``
    at run time, like Go's messages with the column added.
    """

    def __init__(self, reason: str, *, template: str = "template", line: int = 0, column: int = 0,
                 node: Optional[str] = None, executing: Optional[str] = None):
        self.reason = reason
        self.template = template
        self.line = line
        self.column = column
        self.node = node
        if executing is not None:
            text = f'template: {template}:{line}:{column}: executing "{executing}" at <{node}>: {reason}'
        else:
            text = f"template: {template}:{line}:{column}: {reason}"
        super().__init__(text)


class FuncError(Exception):
    """A function rejected its arguments or failed; the message is Go's. The executor
    reports it as ``error calling <name>: <message>``."""


class _Missing:
    """Go's invalid ``reflect.Value``: a missing map key; prints ``<no value>``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no value>"


MISSING = _Missing()
_NO_FINAL = object()
_WS = " \t\r\n"


def _go_type(v: Any) -> str:
    return "<nil>" if v is MISSING else go_type_name(v)


def truth(v: Any) -> bool:
    """Go template truthiness: zero values and empty collections are false.

    Unlike Jet (``ccm.templates.jet.values._truth``, reflect's zero test: an empty
    non-nil list is true), text/template's ``truth`` checks ``Len() > 0``.
    """
    if v is None or v is MISSING:
        return False
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):  # a number: bools returned above
        return v != 0
    if isinstance(v, (str, list, tuple, dict, bytes)):
        return len(v) > 0
    return True


def _arg(v: Any) -> Any:
    """A value as a function argument: an invalid value becomes nil."""
    return None if v is MISSING else v
