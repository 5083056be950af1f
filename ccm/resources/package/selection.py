"""Host probes the package provider factories share: tools on PATH, the platform family.

``is_manageable`` must stay cheap (no subprocess): only ``PATH`` lookups and facts.
"""
from __future__ import annotations

from collections.abc import Mapping as _Mapping   # isinstance: much cheaper than typing's alias
from ccm.typing_guard import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any, Mapping, Tuple

from ccm.cmdsearch import on_search_path
from ccm.lazymap import LazyMapping
from ccm.model.provider import Manageable, ProviderFactory
from ccm.model.resource import Properties


def on_path(tool: str) -> bool:
    """Found by the runner's own lookup rule (``ccm.cmdsearch.find_command``)."""
    return on_search_path(tool)


def platform_family(facts: Mapping[str, Any]) -> str:
    """``host.info.platformFamily`` (``debian``, ``rhel``, ``fedora``...), or ``""``. The
    manager's facts view answers it without gathering every fact (``probe``)."""
    if isinstance(facts, LazyMapping):
        value = facts.probe(("host", "info", "platformFamily"))
        if value is None:
            value = facts.probe(("host", "platformFamily"))
        return str(value or "")
    host = facts.get("host") if isinstance(facts, _Mapping) else None
    info = host.get("info") if isinstance(host, _Mapping) else None
    value = info.get("platformFamily") if isinstance(info, _Mapping) else None
    if value is None and isinstance(host, _Mapping):
        value = host.get("platformFamily")
    return str(value or "")


class ToolsFactory(ProviderFactory):
    """A package manager's factory: usable when every one of its ``tools`` is on PATH;
    priority 1 where the platform family is one of its ``families`` (or unknown), else 2.
    apt and dnf share priority 1 in the spec; on a host with both tools the platform
    family decides, so selection is never random. The split probe (``is_usable`` +
    ``priority``, ``ccm.model.provider.ProviderFactory``) lets the registry read the facts
    only for that tie. Its providers answer ``status`` from the run's cache (``prefetches``)."""

    type_name = "package"
    split_probe = True
    prefetches = True
    tools: Tuple[str, ...] = ()
    families: Tuple[str, ...] = ()

    def found(self, tool: str) -> bool:
        return on_path(tool)

    def is_usable(self, props: Properties) -> bool:
        return all(self.found(t) for t in self.tools)

    def priority(self, facts: Mapping[str, Any], props: Properties) -> int:
        family = platform_family(facts)
        return 1 if not family or family in self.families else 2

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        if not self.is_usable(props):
            return Manageable(False, 1)
        return Manageable(True, self.priority(facts, props))
