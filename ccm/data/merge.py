"""Deep and shallow merge of JSON-shaped values.

Guarantees (README "Deep merge"): maps merge recursively; when both sides are lists
the result is the left list followed by the right list; any other combination takes
the right-hand value. Inputs are never mutated: the result shares no containers with
either side. Not: a merge of arbitrary objects (only dict/list containers recurse).
"""
from __future__ import annotations

from collections.abc import Mapping

from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Dict


def deep_merge(left: Any, right: Any) -> Any:
    """Merge ``right`` over ``left`` (right wins)."""
    import copy   # here: a run that merges nothing does not load it

    if isinstance(left, Mapping) and isinstance(right, Mapping):
        out = {k: copy.deepcopy(v) for k, v in left.items()}
        for key, value in right.items():
            if key in out:
                out[key] = deep_merge(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
        return out
    if isinstance(left, list) and isinstance(right, list):
        return copy.deepcopy(left) + copy.deepcopy(right)
    return copy.deepcopy(right)


def shallow_merge(left: Mapping[str, Any], right: Mapping[str, Any]) -> Dict[str, Any]:
    """Top-level keys of ``right`` replace those of ``left`` (Hiera ``merge: first``)."""
    import copy

    out = {k: copy.deepcopy(v) for k, v in left.items()}
    for key, value in right.items():
        out[key] = copy.deepcopy(value)
    return out
