"""Alias of ``ccm.gocompat.json`` (Go's ``encoding/json`` text), kept for callers of the
old name."""
from __future__ import annotations

from ccm.gocompat.json import dumps, json_float, string

__all__ = ["dumps", "json_float", "string"]
