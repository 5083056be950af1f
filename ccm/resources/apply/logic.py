"""Nested-apply decision logic.

A nested apply always runs its child (the child's own resources decide what changes),
also in noop runs, where the child runs in noop too (``acts_in_noop``). The result is
the child's counts; the resource's own state never carries ``noop``.
"""
from __future__ import annotations


from ccm.clock import now_ns
from ccm.model.errors import CCMError
from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Tuple

MAX_DEPTH = 10
DEPTH_ERROR = f"maximum apply depth of {MAX_DEPTH} exceeded"


class ChildResult:
    """What one child run produced (``ccmmanifest`` provider -> logic)."""

    def __init__(self, resource_count: int = 0, changed_count: int = 0, failed_count: int = 0,
                 errors: Tuple[str, ...] = ()):
        self.resource_count = resource_count
        self.changed_count = changed_count
        self.failed_count = failed_count
        self.errors = errors

    def state(self, name: str) -> ResourceState:
        return ResourceState(type="apply", name=name, ensure="present",
                             extra={"resource_count": self.resource_count, "changed_count": self.changed_count,
                                    "failed_count": self.failed_count}, timestamp_ns=now_ns())

    def failure(self) -> str:
        if not self.failed_count:
            return ""
        # A recursion failure deep down is reported as itself at every level, so the
        # top-level event shows the chain of manifests, not "1 failed resource" ten times.
        for err in self.errors:
            if err.startswith(DEPTH_ERROR):
                return err
        return f"child manifest had {self.failed_count} failed resources"


class ApplyProvider(Protocol):
    """What the nested-apply provider (``ccmmanifest``) offers: run the child manifest."""

    name: str

    def apply(self, props: Properties, ctx: ResourceContext) -> "ChildResult": ...


class ApplyLogic(TypeLogic[ApplyProvider]):
    acts_in_noop = True
    # Upstream never runs the child in health-check-only runs, so child health checks
    # never run there. The shared flow calls act() for types setting this, and the
    # engine exposes the mode as the run's ``health_check_only`` (``ccm.model.run.Run``).
    runs_in_health_check_only = True

    def status(self, provider: ApplyProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        return ResourceState(type="apply", name=props.name, ensure="present", timestamp_ns=now_ns())

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        if acted is None:
            return False, "child manifest not applied yet"
        reason = acted.failure()
        return (not reason), reason

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        return Plan(("apply",), "", reason="child manifests are always applied")

    def act(self, provider: ApplyProvider, props: Properties, plan: Plan, ctx: ResourceContext) -> ChildResult:
        return provider.apply(props, ctx)

    def verify(self, provider: ApplyProvider, props: Properties, plan: Plan, acted: Any,
               ctx: ResourceContext) -> Tuple[Any, bool, str]:
        ok, reason = self.is_desired(props, None, acted)  # type: ignore[arg-type]
        return acted.state(props.name), ok, reason

    def after_noop(self, props: Properties, plan: Plan, acted: Any, before: Any) -> Tuple[Any, bool, str]:
        reason = acted.failure()
        if reason:
            raise CCMError(reason)
        return acted.state(props.name), True, ""

    def changed(self, plan: Plan, before: Any, after: Any) -> bool:
        return bool(after.extra.get("changed_count"))

    def desired_state_error(self, props: Properties, reason: str, acted: Any) -> str:
        return reason
