"""Host probes the package provider factories share: tools on PATH, the platform family.

``is_manageable`` must stay cheap (no subprocess): only ``PATH`` lookups and facts.
"""
from __future__ import annotations

from collections.abc import Mapping as _Mapping   # isinstance: much cheaper than typing's alias
from typing import Any, Mapping

from ccm.model.runner import on_search_path


def on_path(tool: str) -> bool:
    """Found by the runner's own lookup rule (``ccm.model.runner.find_command``)."""
    return on_search_path(tool)


def platform_family(facts: Mapping[str, Any]) -> str:
    """``host.info.platformFamily`` (``debian``, ``rhel``, ``fedora``...), or ``""``."""
    host = facts.get("host") if isinstance(facts, _Mapping) else None
    info = host.get("info") if isinstance(host, _Mapping) else None
    value = info.get("platformFamily") if isinstance(info, _Mapping) else None
    if value is None and isinstance(host, _Mapping):
        value = host.get("platformFamily")
    return str(value or "")
