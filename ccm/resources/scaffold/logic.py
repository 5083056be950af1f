"""Scaffold decision logic: pure ``plan`` and ``is_desired`` over a dry-render state.

The state's metadata lists absolute target paths: ``changed`` (would be added or
updated), ``stable`` (equal) and ``purged`` (in the target, not produced by the source).
"""
from __future__ import annotations

import os
import urllib.parse

from ccm.model.errors import ResourceError
from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.resources.scaffold import delimiters
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Dict, Mapping, Sequence, Tuple

_VARIABLE_NAMES = ("Facts", "Data", "Environ", "WorkingDir")


def source_dir(props: Properties, working_dir: Any) -> str:
    src: str = props.get("source")
    if urllib.parse.urlsplit(src).scheme:
        raise ResourceError(f"source {src} is a URL; only local directories are supported")
    if not os.path.isabs(src):
        src = os.path.join(working_dir or os.getcwd(), src)
    return os.path.normpath(src)


def template_inputs(props: Properties, ctx: ResourceContext) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The six variables and the functions a scaffold template sees.

    The ``data`` property replaces the Hiera data (facts stay), also for ``lookup()``;
    an empty map means unset, as upstream.
    """
    env: Mapping[str, Any] = ctx.template_environment()
    facts = env.get("Facts", ctx.facts or {})
    environ = env.get("Environ", {})
    data = env.get("Data", {})
    if props["data"]:
        from ccm.templates import make_environment

        data = props["data"]
        extra = {k: v for k, v in env.items()
                 if callable(v) and k not in ("lookup", "readFile", "file", "template", "jet")}
        env = make_environment(facts=facts, data=data, environ=environ,
                               working_dir=env.get("WorkingDir") or ctx.working_dir, functions=extra)
    variables = {"facts": facts, "Facts": facts, "data": data, "Data": data,
                 "environ": environ, "Environ": environ}
    functions = {k: v for k, v in env.items() if callable(v) and k not in _VARIABLE_NAMES}
    return variables, functions


def render_job(props: Properties, ctx: ResourceContext) -> Any:
    from ccm.resources.scaffold.choria import RenderJob

    variables, functions = template_inputs(props, ctx)
    left, right = delimiters(props)
    post = []
    for entry in props.get("post") or []:
        for pattern, command in entry.items():
            post.append((pattern, command))
    return RenderJob(source=source_dir(props, ctx.working_dir), target=props.name,
                     engine=props.get("engine") or "jet", left=left, right=right,
                     skip_empty=bool(props.get("skip_empty")), purge=bool(props.get("purge")),
                     post=tuple(post), variables=variables, functions=functions)


def _counts(state: ResourceState) -> Tuple[int, int, int]:
    meta = state.metadata
    return len(meta.get("changed") or []), len(meta.get("stable") or []), len(meta.get("purged") or [])


class ScaffoldProvider(Protocol):
    """What a scaffold provider (``choria``) offers: a dry render as the state, the real
    render, and removal of purged files. ``job`` is the provider's ``RenderJob``."""

    name: str

    def status(self, job: Any, *, ensure: str) -> ResourceState: ...

    def render(self, job: Any) -> Any: ...

    def remove(self, target: str, files: Sequence[str]) -> None: ...


class ScaffoldLogic(TypeLogic[ScaffoldProvider]):
    def status(self, provider: ScaffoldProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        state = provider.status(render_job(props, ctx), ensure=props.ensure)
        if ctx.noop and props.get("purge") and props.ensure != "absent":
            for path in state.metadata.get("purged") or []:
                ctx.log.info("Would have removed file", file=path)
        return state

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        changed, stable, purged = _counts(state)
        if props.ensure == "absent":
            if not state.metadata.get("target_exists") or changed + stable == 0:
                return True, ""
            return False, f"target still has {stable} stable and {changed} changed files"
        # Upstream also demands stable > 0, so a scaffold rendering no files never
        # converges; ours is stable when nothing would change.
        if changed == 0 and (purged == 0 or not props.get("purge")):
            return True, ""
        return False, f"scaffold needs work: changed={changed} stable={stable} purged={purged}"

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        ok, reason = self.is_desired(props, state)
        if ok:
            return Plan()
        changed, stable, purged = _counts(state)
        if props.ensure == "absent":
            affected = changed + stable + (purged if props.get("purge") else 0)
            meta = state.metadata
            files = list(meta.get("changed") or []) + list(meta.get("stable") or [])
            return Plan(("remove",), f"Would have removed {affected} scaffold files", reason=reason,
                        params={"files": files})
        affected = changed + (purged if props.get("purge") else 0)
        return Plan(("render",), f"Would have changed {affected} scaffold files", reason=reason)

    def act(self, provider: ScaffoldProvider, props: Properties, plan: Plan, ctx: ResourceContext) -> Any:
        if plan.actions[0] == "remove":
            provider.remove(props.name, plan.params.get("files") or [])
            return None
        return provider.render(render_job(props, ctx))

    def verify(self, provider: ScaffoldProvider, props: Properties, plan: Plan, acted: Any,
               ctx: ResourceContext) -> Tuple[Any, bool, str]:
        state = self.status(provider, props, ctx)
        if props.ensure == "absent":
            ok, reason = self.is_desired(props, state)
            return state, ok, reason
        if not state.metadata.get("target_exists"):
            return state, False, f"target directory {props.name} was not created"
        return state, True, ""
