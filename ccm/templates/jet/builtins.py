"""Jet's builtin functions (``len isset lower upper ... safeJs``)."""
from __future__ import annotations

import json as _json
import urllib.parse

from ccm.gocompat.fmt import go_sprint
from ccm.templates.jet.values import MISSING, _go_type
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List


class _Isset:
    """Marker: ``isset`` needs its argument nodes, not their values."""


_ISSET = _Isset()


def _go_json(v: Any) -> str:
    """Go ``json.Marshal`` text: compact, sorted keys, ``<>&`` escaped."""
    from ccm.gocompat import json as gojson

    def default(x: Any) -> Any:
        if x is MISSING:
            return None
        raise ValueError(f"json: unsupported type: {_go_type(x)}")
    return gojson.dumps(v, default=default)


def _b_len(v: Any) -> int:
    if v is MISSING:
        raise ValueError("len(): argument is not a valid value")
    if isinstance(v, str):
        return len(v.encode("utf-8"))
    if isinstance(v, (list, tuple, dict)):
        return len(v)
    raise ValueError(f"len(): invalid value type {_go_type(v)}")


def _b_repeat(s: str, n: int) -> str:
    if n < 0:
        raise ValueError("strings: negative Repeat count")
    return s * n


def _b_replace(s: str, old: str, new: str, n: int) -> str:
    return s.replace(old, new) if n < 0 else s.replace(old, new, n)


def _b_split(s: str, sep: str) -> List[str]:
    if sep == "":
        return list(s)
    return s.split(sep)


def _b_html(s: str) -> str:
    return (s.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&#34;"))


def _b_map(*kv: Any) -> Dict[Any, Any]:
    if len(kv) % 2:
        raise ValueError("map(): incomplete key-value pair (even number of arguments required)")
    return {kv[i]: kv[i + 1] for i in range(0, len(kv), 2)}


def _b_ints(lo: int, hi: int) -> List[int]:
    if hi <= lo:
        raise ValueError("ints(): upper limit must be greater than lower limit")
    return list(range(int(lo), int(hi)))


def _identity(v: Any) -> Any:
    return v


_BUILTINS: Dict[str, Any] = {
    "lower": lambda s: _need_str("lower", s).lower(),
    "upper": lambda s: _need_str("upper", s).upper(),
    "hasPrefix": lambda s, p: _need_str("hasPrefix", s).startswith(_need_str("hasPrefix", p)),
    "hasSuffix": lambda s, p: _need_str("hasSuffix", s).endswith(_need_str("hasSuffix", p)),
    "repeat": _b_repeat,
    "replace": _b_replace,
    "split": _b_split,
    "trimSpace": lambda s: _need_str("trimSpace", s).strip(" \t\n\r\v\f\u0085\u00a0"),
    "html": _b_html,
    "url": lambda s: urllib.parse.quote_plus(_need_str("url", s), safe=""),
    "json": _go_json,
    "writeJson": _go_json,
    "map": _b_map,
    "slice": lambda *a: list(a),
    "array": lambda *a: list(a),
    "ints": _b_ints,
    "len": _b_len,
    "isset": _ISSET,
    "raw": _identity,
    "unsafe": _identity,
    "safeHtml": _b_html,
    "safeJs": lambda s: _json.dumps(go_sprint(s))[1:-1],
}

# the builtin names (`ccm doc functions`)
BUILTIN_NAMES = frozenset(_BUILTINS)


def _need_str(fn: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"{fn}: argument must be a string, not {_go_type(v)}")
    return v
