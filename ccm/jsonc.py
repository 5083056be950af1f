"""JSON through the interpreter's C codec (``_json``) without importing ``json``.

What: ``loads(text or UTF-8 bytes)`` and ``dumps(value)`` (compact, ``ensure_ascii=False``),
giving what ``json.loads`` and ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``
give. Why: ``import json`` imports ``re`` and ``enum`` (``json.scanner``, ``json.decoder``):
measured ~14 ms of CPU on a loaded host (``python3 -c 'import json'`` against ``-c pass``),
more than all the rest of a report's publishing; a steady ``ccm apply`` imports neither.
Guarantees: the same values and text as ``json`` (one differential test,
``tests/test_jsonc.py``); every error is a ``ValueError`` (``TypeError`` for a value JSON
cannot hold, as ``json.dumps``); ``$CCM_REPORT_CLIENT=nats-py`` (which imports ``json``
anyway) goes through ``json`` itself.
Not: options (indent, sorting, hooks), other encodings than UTF-8.
"""
from __future__ import annotations

import os

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Union

import _json

_WS = " \t\n\r"


class _Context:
    """What ``_json.make_scanner`` reads of a decoder (``json.JSONDecoder``'s defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__
    memo: "dict[str, Any]" = {}


def _plain() -> bool:
    return os.environ.get("CCM_REPORT_CLIENT", "") == "nats-py"


_scan = _json.make_scanner(_Context())  # type: ignore[arg-type]


def loads(data: Union[str, bytes]) -> Any:
    if _plain():
        import json

        return json.loads(data)
    text = data.decode("utf-8", "surrogatepass") if isinstance(data, (bytes, bytearray)) else data
    if text.startswith("\ufeff"):
        raise ValueError(_where("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0))
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(_where("Expecting value", text, exc.value)) from None
    if text[end:].strip(_WS):
        raise ValueError(_where("Extra data", text, len(text) - len(text[end:].lstrip(_WS))))
    return value


def _where(what: str, text: str, pos: int) -> str:
    """``json``'s words for an error at ``pos``."""
    line = text.count("\n", 0, pos) + 1
    return f"{what}: line {line} column {pos - text.rfind(chr(10), 0, pos)} (char {pos})"


def _default(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps(value: Any) -> str:
    if _plain():
        import json

        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    encode = _json.make_encoder({}, _default, _json.encode_basestring, None, ":", ",", False, False, True)
    return "".join(encode(value, 0))
