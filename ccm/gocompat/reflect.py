"""Go's ``reflect``, the part templates and expressions need: a field or method of a value, by name.

Go templates (``{{ .Registrations.PrometheusFileSD }}``), Jet (``[[ .x.Name ]]``) and expr
(``x.Method()``) name a field or method of whatever value the user's data or a function gave
them; Go finds it with ``reflect``. That is reflection by design, not a capability probe, so it
lives here, in the one place that looks up attributes by a name read from a template. Names that
start with ``_`` are never reachable (Go's unexported names; Python's private ones and dunders).
Standard library only.
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = ["member", "has_field"]


def member(value: Any, name: str, default: Any) -> Any:
    """The field or method ``name`` of ``value``, or ``default`` when it has none or ``name``
    is private (starts with ``_``)."""
    if name.startswith("_"):
        return default
    return getattr(value, name, default)


def has_field(value: Any, name: str) -> bool:
    """Whether ``value`` has an attribute ``name``, private ones included: what Jet's
    assignment (``[[ .x.y = 1 ]]``) checks before it sets the attribute."""
    return hasattr(value, name)
