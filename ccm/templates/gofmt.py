"""Alias of ``ccm.gocompat.fmt`` and ``ccm.gocompat.strconv`` (Go's value formatting and
string escapes), kept for callers of the old name; new code imports ``ccm.gocompat``."""
from __future__ import annotations

from ccm.gocompat.fmt import go_float, go_key_order, go_sprint, go_type_name, is_number
from ccm.gocompat.strconv import EscapeError, decode_go_escapes

__all__ = ["go_sprint", "go_float", "go_key_order", "go_type_name", "is_number", "decode_go_escapes",
           "EscapeError"]
