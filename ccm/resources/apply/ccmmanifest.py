"""ccmmanifest provider for the apply type: resolves and executes a child manifest.

Guarantees (manifest.md §Nested manifests): the child path is relative to the parent
manifest's directory; the child runs in the parent's session at ``depth + 1`` and fails
cleanly, naming the chain of manifests, at depth 10 (upstream always passes depth 0);
noop and health-check-only can be switched on for the child, never off; ``allow_apply:
false`` rejects a child containing apply resources before any of them runs; ``data``
replaces the inherited parent data as the overriding data (CLI/external data still
wins, via the manager); the manager's noop, working directory, data, depth, log and
chain are restored afterwards, on success and on error.
"""
from __future__ import annotations

import os
from typing import Any, List, Mapping

from ccm.model.errors import CCMError, ResourceError
from ccm.model.provider import Manageable
from ccm.model.resource import Properties
from ccm.resources.apply.logic import DEPTH_ERROR, MAX_DEPTH, ChildResult

CHAIN_ATTR = "apply_chain"   # child manifest paths from the top-level run down to here


def child_path(name: str, working_dir: Any) -> str:
    path = name if os.path.isabs(name) else os.path.join(working_dir or os.getcwd(), name)
    return os.path.normpath(path)


class ManifestProvider:
    name = "ccmmanifest"

    def __init__(self, runner: Any = None, log: Any = None):
        self.log = log

    def apply(self, props: Properties, ctx: Any) -> ChildResult:
        from ccm.apply import execute, load_manifest

        manager = ctx.manager
        if manager is None:
            raise ResourceError("nested apply needs a manager")
        parent_depth = int(getattr(manager, "depth", 0) or 0)
        path = child_path(props.name, manager.working_dir)
        chain: List[str] = list(getattr(manager, CHAIN_ATTR, None) or [])
        if parent_depth + 1 >= MAX_DEPTH:
            raise ResourceError(f"{DEPTH_ERROR}: " + " -> ".join(chain + [path]))
        snap = manager.snapshot()
        try:
            manager.depth = parent_depth + 1
            setattr(manager, CHAIN_ATTR, chain + [path])
            if props.get("noop"):
                manager.noop = True
            health_check_only = bool(props.get("health_check_only")) or bool(snap.get("health_check_only"))
            manager.health_check_only = health_check_only
            child_log = manager.user_log.bind(manifest=props.name)
            manager.user_log = child_log
            overriding: Mapping[str, Any] = props["data"] if props["data"] is not None else snap["data"]
            try:
                manifest = load_manifest(path, manager, overriding_data=overriding,
                                         deny_apply=not props.get("allow_apply", True))
            except CCMError as exc:
                raise ResourceError(f"could not load child manifest {props.name}: {exc}") from None
            try:
                result = execute(manager, manifest, health_check_only=health_check_only, nested=True,
                                 user_log=child_log)
            except CCMError as exc:
                raise ResourceError(f"child manifest {props.name} failed: {exc}") from None
            finally:
                manifest.cleanup()
        finally:
            manager.restore(snap)
            setattr(manager, CHAIN_ATTR, chain)
        failed = [e for e in result.events if e.failed or e.unmet_requirements]
        failed_ids = {id(e) for e in failed}
        changed = [e for e in result.events if id(e) not in failed_ids and e.changed]
        skipped = len(result.events) - len(failed) - len(changed)
        errors = tuple(err for e in failed for err in e.errors)
        outcome = ChildResult(len(manifest.resources), len(changed), len(failed), errors)
        msg = ("Child manifest had failures" if failed else
               "Child manifest had changes" if changed else "Child manifest completed")
        log = ctx.log if ctx.log is not None else manager.user_log
        (log.error if failed else log.info)(msg, resources=outcome.resource_count, changed=len(changed),
                                            failed=len(failed), skipped=skipped)
        return outcome


class ManifestFactory:
    type_name = "apply"
    name = "ccmmanifest"

    def is_manageable(self, facts: Mapping[str, Any], props: Properties) -> Manageable:
        return Manageable(True, 1)

    def new(self, runner: Any, log: Any) -> ManifestProvider:
        return ManifestProvider(runner, log)
