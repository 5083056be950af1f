"""The agent's one seam to the engine: the agent's manager, a worker's manager, and
loading and running a manifest.

Every apply, health-check run and bundle validation of the agent goes through the
functions here. The agent builds one root manager (``root_manager``); each worker and
each validation gets ``Manager.child()`` of it, so all of them share the facts cache,
the runner, the registry, the metrics and the NATS connection, with their own working
directory, data and log. Runs go through ``Manager.load``/``Manager.execute``, the
same path ``ccm apply`` takes (with the agent's external data as the overriding layer).

``StoppableResources`` lets a shutdown finish the resource that is running and skip the
rest: the engine iterates the manifest's resource list, and this list stops yielding
once the agent's stop event is set.
"""
from __future__ import annotations

import os
import threading

from ccm.model.errors import CCMError
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Mapping, Optional

SUBSET_ENV = "CCM_WATCH_SUBSET"   # "0": a drift re-apply runs the whole manifest (the differential twin)
RUN_LOCK_WAIT = 30.0   # seconds an apply waits for another ccm run to finish, then is skipped


class StoppableResources(list["Any"]):   # the string: typing is not imported at run time
    """A manifest's resource list whose iteration ends when ``stop`` is set."""

    def __init__(self, items: List[Any], stop: threading.Event):
        super().__init__(items)
        self.stop = stop

    def __iter__(self) -> Iterator[Any]:
        for item in list.__iter__(self):
            if self.stop.is_set():
                return
            yield item


def root_manager(*, environ: Dict[str, str], metrics: Any, user_log: Any, nats_context: str) -> Any:
    """The agent's manager: facts are set by the agent (``set_facts``), never gathered here."""
    from ccm.manager import build

    return build(facts={}, environ=environ, metrics=metrics, user_log=user_log, nats_context=nats_context)


def worker_manager(root: Any, user_log: Any) -> Any:
    """A manager for one worker (or one validation), sharing the root's collaborators."""
    return root.child(user_log=user_log)


def run_manager(root: Any, user_log: Any) -> Any:
    """A worker's manager for its runs: an agent run is read back by its summary only,
    so its session keeps each event's flags and counters (``EventRecord``), never the
    event with its properties and status (the store is the root's, shared by every
    worker: runs happen one at a time, each starting a new session)."""
    manager = worker_manager(root, user_log)
    manager.session.keep_events = False
    return manager


def forget_run(manager: Any) -> None:
    """Drop the finished run's records once its summary was read: nothing reads them
    before the next run starts a new session, and between cycles they only held memory
    (10,000 records kept ~12 MiB of an idle agent's RSS). Only the in-memory store:
    a directory store's files are a shell session's, never the agent's to remove."""
    from ccm.session import MemoryStore

    if isinstance(manager.session, MemoryStore):
        manager.session.stop(destroy=True)


def load(manager: Any, path: str, external_data: Optional[Mapping[str, Any]], *, text: Optional[str] = None) -> Any:
    """Resolve the manifest at ``path`` completely (nothing runs); ``text``: a local
    manifest's content as the worker read it (its last good version, see ``Worker``)."""
    return manager.load(path, overriding_data=dict(external_data) if external_data else None, text=text)


def execute(manager: Any, manifest: Any, *, health_check_only: bool, stop: threading.Event,
            only: Optional[List[str]] = None, quiet: bool = False) -> Any:
    """Execute a loaded manifest (and clean it up); returns the engine's result (events,
    summary). ``only``: the resources the drift watch re-applies (``type#name``); the
    engine decides what else runs with them (``select_resources``); ``quiet``: the run
    logs nothing (a service poll)."""
    try:
        resources = manifest.resources
        if only is not None and os.environ.get(SUBSET_ENV) != "0":   # "0": the plain path, the whole manifest
            from ccm.apply.engine import select_resources

            resources = select_resources(manifest, only)
        manifest.resources = StoppableResources(resources, stop)
        if health_check_only:
            return manager.execute(manifest, health_check_only=True)
        # the host-wide run lock `ccm apply` takes: a cron run and the agent never overlap
        from ccm.agent.timing import scaled
        from ccm.locks import acquire_run_lock

        lock = acquire_run_lock(manifest.source, scaled(RUN_LOCK_WAIT))
        try:
            return manager.execute(manifest, health_check_only=False, quiet=quiet)
        finally:
            lock.release()
    finally:
        manifest.cleanup()


def apply(manager: Any, path: str, *, external_data: Optional[Mapping[str, Any]], health_check_only: bool,
          stop: threading.Event, text: Optional[str] = None) -> Any:
    """Load and execute the manifest at ``path``; returns the engine's result (events,
    summary). Raises ``CCMError`` when the manifest does not resolve."""
    manifest = load(manager, path, external_data, text=text)
    return execute(manager, manifest, health_check_only=health_check_only, stop=stop)


__all__ = ["CCMError", "StoppableResources", "apply", "execute", "forget_run", "load", "root_manager",
           "run_manager", "worker_manager"]
