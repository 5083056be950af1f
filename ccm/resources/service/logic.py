"""Service decision logic: pure ``plan`` and ``is_desired`` over an observed state.

The provider contract this logic drives is ``ServiceProvider`` below.

Refresh (seed 001): a changed subscribed resource restarts the service only when it is
ensured running and currently running (starting a stopped one covers the change); the
event is then marked refreshed.
"""
from __future__ import annotations


from ccm.model.errors import ValidationError
from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.resources.service import check_ensure, check_name
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Callable, Dict, List, Optional, Tuple

MESSAGES = {
    "restart": "Would have restarted via subscribe",
    "stop": "Would have stopped",
    "start": "Would have started",
    "enable": "Would have enabled",
    "disable": "Would have disabled",
}


class ServiceProvider(Protocol):
    """What a service provider (``systemd``, ``sysv``; fakes in the tests) offers this logic.

    ``status``: ensure ``running``/``stopped``, metadata ``{name, provider, enabled,
    running}``. The actions return ``None`` or a short text describing a failed command;
    the result is never trusted: the flow re-reads the status and the text only explains
    a desired-state failure.
    """

    name: str

    def status(self, service: str) -> ResourceState: ...

    def start(self, service: str) -> Optional[str]: ...

    def stop(self, service: str) -> Optional[str]: ...

    def restart(self, service: str) -> Optional[str]: ...

    def enable(self, service: str) -> Optional[str]: ...

    def disable(self, service: str) -> Optional[str]: ...


# what each planned action calls (the keys of MESSAGES)
_ACTIONS: Dict[str, Callable[[ServiceProvider, str], Optional[str]]] = {
    "restart": lambda p, name: p.restart(name),
    "stop": lambda p, name: p.stop(name),
    "start": lambda p, name: p.start(name),
    "enable": lambda p, name: p.enable(name),
    "disable": lambda p, name: p.disable(name),
}


class ServiceLogic(TypeLogic[ServiceProvider]):
    supports_refresh = True
    stable_means_no_action = True

    def status(self, provider: ServiceProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        try:   # the rendered values, in case validation saw templates
            check_ensure(props.ensure)
            check_name(props.name)
        except ValidationError as exc:
            raise exc.with_resource(props.resource_id) from None
        return provider.status(props.name)

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        if state.ensure != props.ensure:
            return False, f"service is {state.ensure}, expected {props.ensure}"
        enable = props["enable"]
        enabled = bool(state.metadata.get("enabled"))
        if enable is True and not enabled:
            return False, "service is disabled, expected enabled"
        if enable is False and enabled:
            return False, "service is enabled, expected disabled"
        return True, ""

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        want = props.ensure
        running = state.ensure == "running"
        actions: List[str] = []
        refreshed = False
        if refresh and want == "running" and running:
            actions.append("restart")
            refreshed = True
        elif want == "stopped" and running:
            actions.append("stop")
        elif want == "running" and not running:
            actions.append("start")
        enable = props["enable"]
        enabled = bool(state.metadata.get("enabled"))
        if enable is True and not enabled:
            actions.append("enable")
        elif enable is False and enabled:
            actions.append("disable")
        if not actions:
            return Plan()
        message = MESSAGES[actions[0]]
        if len(actions) > 1:
            message += ", w" + MESSAGES[actions[1]][1:]
        _ok, reason = self.is_desired(props, state)
        return Plan(tuple(actions), message, refresh=refreshed, reason=reason or "subscribed resource changed")

    def act(self, provider: ServiceProvider, props: Properties, plan: Plan, ctx: ResourceContext) -> List[str]:
        failures = []
        for action in plan.actions:
            problem = _ACTIONS[action](provider, props.name)
            if problem:
                failures.append(problem)
                # one line here; the failure message carries the output tail
                ctx.log.warn("Service command failed", action=action, error=problem.partition("\n")[0])
        return failures

    def desired_state_error(self, props: Properties, reason: str, acted: Any) -> str:
        text = f"failed to reach desired state: {props.ensure}: {reason}"
        if acted:   # each command's first line in the parentheses, its output tail after them
            parts = [str(problem).partition("\n") for problem in acted]
            text += f" ({'; '.join(head for head, _, _ in parts)})"
            text += "".join(f"\n{tail}" for _, _, tail in parts if tail)
        return text
