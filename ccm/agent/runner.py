"""The agent's one seam to the engine: build a worker's manager, load and run a manifest.

Every apply, health-check run and bundle validation of the agent goes through the three
functions here, so how the engine is driven (today ``ccm.manager.build`` plus
``ccm.apply.load_manifest``/``execute``, the same path as ``ccm apply``) is decided in
one place.

``StoppableResources`` lets a shutdown finish the resource that is running and skip the
rest: the engine iterates the manifest's resource list, and this list stops yielding
once the agent's stop event is set.
"""
from __future__ import annotations

import threading
from typing import Any, Dict, Iterator, List, Mapping, Optional

from ccm.model.errors import CCMError


class StoppableResources(list):  # type: ignore[type-arg]
    """A manifest's resource list whose iteration ends when ``stop`` is set."""

    def __init__(self, items: List[Any], stop: threading.Event):
        super().__init__(items)
        self.stop = stop

    def __iter__(self) -> Iterator[Any]:
        for item in list.__iter__(self):
            if self.stop.is_set():
                return
            yield item


def new_manager(*, facts: Optional[Dict[str, Any]], environ: Dict[str, str], metrics: Any, user_log: Any,
                nats_context: str) -> Any:
    """A manager for one worker (its own memory session and working directory)."""
    from ccm.manager import build

    return build(facts=facts, environ=environ, metrics=metrics, user_log=user_log, nats_context=nats_context)


def load(manager: Any, path: str, external_data: Optional[Mapping[str, Any]]) -> Any:
    """Resolve the manifest at ``path`` completely (nothing runs)."""
    from ccm.apply import load_manifest

    return load_manifest(path, manager, overriding_data=dict(external_data) if external_data else None)


def apply(manager: Any, path: str, *, external_data: Optional[Mapping[str, Any]], health_check_only: bool,
          stop: threading.Event) -> Any:
    """Load and execute the manifest at ``path``; returns the engine's result (events,
    summary). Raises ``CCMError`` when the manifest does not resolve."""
    from ccm.apply import execute

    manifest = load(manager, path, external_data)
    try:
        manifest.resources = StoppableResources(manifest.resources, stop)
        return execute(manager, manifest, health_check_only=health_check_only)
    finally:
        manifest.cleanup()


__all__ = ["CCMError", "StoppableResources", "apply", "load", "new_manager"]
