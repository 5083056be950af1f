"""The facts tree's value types and its output order.

``FactObject`` marks objects that upstream takes from the system-information library
(``host.info``, interfaces, partitions, usage, CPU and memory objects): their keys keep
the documented field order. Every other map (the top level, the families, anything from
fact files) is printed with sorted keys (data-and-templates.md §1.1).
"""
from __future__ import annotations

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any


class FactObject(dict[str, "Any"]):
    """A dict whose key order is the documented field order."""


def canonical(value: Any) -> Any:
    """Plain dicts/lists in output order: FactObject keys as built, other maps sorted."""
    if isinstance(value, FactObject):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value
