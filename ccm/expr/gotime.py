"""Alias of ``ccm.gocompat.time`` (the value ``now()`` returns), kept for callers of the
old name; new code imports ``ccm.gocompat.time``."""
from __future__ import annotations

from ccm.gocompat.time import GoTime

__all__ = ["GoTime"]
