"""What ``registrations()`` returns: a list of entries with ``PrometheusFileSD()``."""
from __future__ import annotations

import re

from ccm.gocompat import json as gojson
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Tuple

_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
SCRAPE = "prometheus.io/scrape"


def sort_entries(entries: List[Any]) -> List[Any]:
    """Lookup order: address (string order), then port (missing = 0)."""
    return sorted(entries, key=lambda e: (e.address, e.port or 0))


def _included(e: Any) -> bool:
    if not isinstance(e.port, int) or isinstance(e.port, bool) or e.port <= 0:
        return False
    scrape = e.annotations.get(SCRAPE)
    if e.service == "prometheus" or e.protocol == "prometheus":
        return scrape is None or scrape == "true"
    included: bool = scrape == "true"
    return included


def _target(e: Any) -> str:
    return f"[{e.address}]:{e.port}" if ":" in e.address else f"{e.address}:{e.port}"


def prometheus_file_sd(entries: List[Any]) -> str:
    groups: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
    for e in entries:
        if not _included(e):
            continue
        key = (e.cluster, e.service, e.protocol)
        group = groups.get(key)
        if group is None:
            labels = {"cluster": e.cluster, "service": e.service, "protocol": e.protocol}
            for k, v in e.annotations.items():
                if v and not k.startswith("__") and _LABEL.match(k):
                    labels[k] = v
            group = groups[key] = {"labels": {k: labels[k] for k in sorted(labels)}, "targets": []}
        group["targets"].append(_target(e))
    if not groups:
        return "[]"
    return gojson.dumps(list(groups.values()), indent=2, sort_keys=False)


class Entries(list["Any"]):
    """The template value of ``registrations()``: entries, plus upstream's method."""

    def PrometheusFileSD(self) -> str:  # noqa: N802 - upstream's method name
        return prometheus_file_sd(list(self))
