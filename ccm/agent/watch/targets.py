"""What to watch after a run: its events -> the paths its resources manage (pure).

A run's events are collected as ``Seen`` (type, name, properties, noop) in the order
they were recorded. A top-level resource is known by its ``type#name`` reference; a
nested manifest's resources (an ``apply`` resource's child) are recorded before their
``apply`` resource and belong to it: its re-apply is what repairs (or, in noop, reports)
them. Each managed path is watched through its nearest existing ancestor directory,
matched by the next component of the path (``Spot``): a file replaced by rename, a
directory removed, an absent path that reappears all show there.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ccm.resources import PACKAGE_DB, SERVICE_POLL, WATCHED
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

INSIDE = ""   # a Spot name matching every entry of its directory (a scaffold target's files)


class Seen:
    """One recorded event, as much of it as the watch reads (slots: one per resource)."""

    __slots__ = ("type", "name", "properties", "noop", "changed", "failed", "monitor")

    def __init__(self, type: str, name: str, properties: Dict[str, Any], noop: bool, changed: bool = False,
                 failed: bool = False, monitor: bool = False) -> None:
        self.type = type
        self.name = name
        self.properties = properties
        self.noop = noop
        self.changed = changed
        self.failed = failed
        self.monitor = monitor   # run in health-check-only mode: nothing of it is applied or observed

    @property
    def ref(self) -> str:
        return f"{self.type}#{self.name}"


class Target:
    """A managed path, the top-level resource whose re-apply repairs it, whether drift is
    only reported (noop), whether the directory's entries count too (scaffold targets)."""

    __slots__ = ("path", "ref", "noop", "inside")

    def __init__(self, path: str, ref: str, noop: bool, inside: bool = False) -> None:
        self.path = path
        self.ref = ref
        self.noop = noop
        self.inside = inside


@dataclass
class Plan:
    targets: List[Target]
    packages: List[str]   # top-level refs that hold package resources
    services: List[str]   # top-level refs that hold service resources
    noop_refs: Set[str]


def seen_of(event: Any) -> Seen:
    props = event.properties if isinstance(event.properties, dict) else {}
    keep = {k: props[k] for k, _ in _path_keys(event.type) if k != "name" and props.get(k)} or _EMPTY
    return Seen(event.type, event.name, keep, bool(event.noop), bool(event.changed), bool(event.failed),
                bool(event.health_check_only))


def _watched(type_name: str) -> Tuple[str, ...]:
    return WATCHED.get(type_name, ())


def _path_keys(type_name: str) -> List[Tuple[str, bool]]:
    """(property, inside) of each path ``type_name`` manages, from ``ccm.resources.WATCHED``."""
    keys = _PATH_KEYS.get(type_name)
    if keys is None:
        keys = _PATH_KEYS[type_name] = [(k.partition("/")[0], k.endswith("/*")) for k in _watched(type_name)
                                        if k not in (PACKAGE_DB, SERVICE_POLL)]
    return keys


_PATH_KEYS: Dict[str, List[Tuple[str, bool]]] = {}
_EMPTY: Dict[str, Any] = {}   # shared by every event without a path property (never written to)


def paths_of(seen: Seen) -> List[Tuple[str, bool]]:
    """(path, inside) that ``seen`` manages (``ccm.resources.WATCHED``); only absolute paths."""
    out: List[Tuple[str, bool]] = []
    for prop, inside in _path_keys(seen.type):
        value = seen.name if prop == "name" else seen.properties.get(prop)
        if isinstance(value, str) and value.startswith("/"):
            if "//" in value or "/." in value or (value.endswith("/") and value != "/"):
                value = os.path.normpath(value)   # names are validated canonical: rarely needed
            out.append((value, inside))
    return out


def owners(events: Iterable[Seen], top_refs: Set[str]) -> Dict[str, List[Seen]]:
    """Each top-level resource's events: its own, and an ``apply`` resource's children's."""
    out: Dict[str, List[Seen]] = {}
    children: List[Seen] = []
    for seen in events:
        ref = seen.ref
        if ref not in top_refs:
            children.append(seen)
            continue
        out.setdefault(ref, []).extend([seen] + (children if seen.type == "apply" else []))
        children = []
    return out


def plan(events: Iterable[Seen], top_refs: Set[str]) -> Plan:
    """Assign each event's paths to the top-level resource that re-applies it."""
    result = Plan([], [], [], set())
    for ref, owned in owners(events, top_refs).items():
        for item in owned:
            _assign(result, item, ref)
    return result


def _assign(result: Plan, item: Seen, ref: str) -> None:
    watch_only = item.noop or item.monitor
    if watch_only:
        result.noop_refs.add(ref)
    for path, inside in paths_of(item):
        result.targets.append(Target(path, ref, watch_only, inside))
    watched = _watched(item.type)
    if PACKAGE_DB in watched and ref not in result.packages:
        result.packages.append(ref)
    if SERVICE_POLL in watched and ref not in result.services:
        result.services.append(ref)


@dataclass(frozen=True)
class Spot:
    directory: str   # an existing directory (no symlink) to watch
    name: str        # the entry in it that leads to the path; INSIDE: any entry


def spot_of(target: Target, isdir: Optional[Callable[[str], bool]] = None) -> Optional[Spot]:
    """Where ``target`` is watched: its nearest existing, real ancestor directory."""
    if isdir is None:
        isdir = _real_dir
    if target.inside and isdir(target.path):
        return Spot(target.path, INSIDE)
    child, parent = target.path, os.path.dirname(target.path)
    while parent != child:
        if isdir(parent):
            return Spot(parent, os.path.basename(child))
        child, parent = parent, os.path.dirname(parent)
    return None


def _real_dir(path: str) -> bool:
    import stat

    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def index(targets: Iterable[Target]) -> Dict[str, Dict[str, Set[str]]]:
    """directory -> entry name (or INSIDE) -> the refs a change there affects."""
    out: Dict[str, Dict[str, Set[str]]] = {}
    known: Dict[str, bool] = {}   # one lstat per directory, not per path

    def isdir(path: str) -> bool:
        found = known.get(path)
        if found is None:
            found = known[path] = _real_dir(path)
        return found

    for target in targets:
        spot = spot_of(target, isdir)
        if spot is not None:
            out.setdefault(spot.directory, {}).setdefault(spot.name, set()).add(target.ref)
    return out
