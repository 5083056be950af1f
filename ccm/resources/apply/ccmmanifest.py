"""ccmmanifest provider for the apply type: resolves and executes a child manifest.

Guarantees (manifest.md §Nested manifests): the child path is relative to the parent
manifest's directory; the child runs in the parent's session at ``depth + 1`` and fails
cleanly, naming the chain of manifests, at depth 10 (upstream always passes depth 0);
noop and health-check-only can be switched on for the child, never off; ``allow_apply:
false`` rejects a child containing apply resources before any of them runs; ``data``
replaces the inherited parent data as the overriding data (CLI/external data still
wins, via the manager). The child runs on a child manager in a child run
(``ctx.apply_child`` -> ``ccm.manager.Manager.run_child``, ``ccm.model.run.Run.child``),
so the parent's noop, working directory, data, depth, log and chain are never touched.
"""
from __future__ import annotations

import os

from ccm.model.errors import ResourceError
from ccm.model.provider import AlwaysManageable
from ccm.model.resource import Properties, ResourceContext
from ccm.resources.apply.logic import DEPTH_ERROR, MAX_DEPTH, ChildResult
from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Optional


def child_path(name: str, working_dir: Optional[str]) -> str:
    path = name if os.path.isabs(name) else os.path.join(working_dir or os.getcwd(), name)
    return os.path.normpath(path)


class ManifestProvider:
    name = "ccmmanifest"

    def __init__(self, runner: Any = None, log: Any = None):
        self.log = log

    def apply(self, props: Properties, ctx: ResourceContext) -> ChildResult:
        path = child_path(props.name, ctx.working_dir)
        if ctx.depth + 1 >= MAX_DEPTH:
            raise ResourceError(f"{DEPTH_ERROR}: " + " -> ".join(list(ctx.chain) + [path]))
        run = ctx.apply_child(path, noop=bool(props.get("noop")),
                              health_check_only=bool(props.get("health_check_only")),
                              data=props["data"], deny_apply=not props.get("allow_apply", True),
                              label=props.name)
        if run.load_error:
            raise ResourceError(f"could not load child manifest {props.name}: {run.load_error}")
        if run.run_error:
            raise ResourceError(f"child manifest {props.name} failed: {run.run_error}")
        failed = [e for e in run.events if e.failed or e.unmet_requirements]
        failed_ids = {id(e) for e in failed}
        changed = [e for e in run.events if id(e) not in failed_ids and e.changed]
        skipped = len(run.events) - len(failed) - len(changed)
        errors = tuple(err for e in failed for err in e.errors)
        outcome = ChildResult(run.resource_count, len(changed), len(failed), errors)
        msg = ("Child manifest had failures" if failed else
               "Child manifest had changes" if changed else "Child manifest completed")
        (ctx.log.error if failed else ctx.log.info)(msg, resources=outcome.resource_count, changed=len(changed),
                                                    failed=len(failed), skipped=skipped)
        return outcome


class ManifestFactory(AlwaysManageable):
    type_name = "apply"
    name = "ccmmanifest"

    def new(self, runner: Any, log: Any) -> ManifestProvider:
        return ManifestProvider(runner, log)
