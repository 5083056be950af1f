"""Exec decision logic: guards are observed in ``status``; ``plan`` is pure."""
from __future__ import annotations

import os

from ccm.clock import now_ns
from ccm.model.errors import ProviderError
from ccm.model.events import ResourceState
from ccm.model.resource import Plan, Properties, ResourceContext, TypeLogic
from ccm.model.runner import CommandResult
from ccm.redact import scrub_text
from ccm.typing_guard import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from typing import Any, Optional, Tuple


def _creates_path(props: Properties) -> Optional[str]:
    creates: Optional[str] = props.get("creates")
    if not creates:
        return None
    if not os.path.isabs(creates):
        creates = os.path.join(props.get("cwd") or "/", creates)
    return creates


def returns_text(returns: Any) -> str:
    return "[" + " ".join(str(r) for r in returns) + "]"


class ExecProvider(Protocol):
    """What an exec provider (``posix``: argv split, ``shell``: ``/bin/sh -c``) offers: run a
    guard command line (``onlyif``/``unless``) or the resource's command."""

    name: str

    def run_guard(self, line: str, props: Properties) -> CommandResult: ...

    def execute(self, props: Properties) -> CommandResult: ...


class ExecLogic(TypeLogic[ExecProvider]):
    supports_refresh = True

    def status(self, provider: ExecProvider, props: Properties, ctx: ResourceContext) -> ResourceState:
        state = ResourceState(type="exec", name=props.name, ensure="present", timestamp_ns=now_ns())
        creates = _creates_path(props)
        if creates and os.path.exists(creates):
            state.extra["creates_satisfied"] = True
        for guard in ("onlyif", "unless"):
            line = props.get(guard)
            if not line:
                continue
            result = provider.run_guard(line, props)
            if result.error:
                raise ProviderError(f"{guard} guard {line!r} could not run: {result.error}")
            if result.exit_code == 0:
                state.extra[f"{guard}_satisfied"] = True
        return state

    def _guard_stable(self, props: Properties, state: ResourceState) -> bool:
        if state.extra.get("creates_satisfied"):
            return True
        if props.get("onlyif") and not state.extra.get("onlyif_satisfied"):
            return True
        if props.get("unless") and state.extra.get("unless_satisfied"):
            return True
        return bool(props.get("refreshonly"))

    def plan(self, props: Properties, state: ResourceState, refresh: bool = False) -> Plan:
        if refresh:
            return Plan(("execute",), "Would have executed via subscribe", refresh=True)
        if self._guard_stable(props, state):
            return Plan()
        return Plan(("execute",), "Would have executed", reason="command did not run and no guard short-circuited")

    last_output = ""   # the output tail of the command this logic ran (one instance per resource run)

    def act(self, provider: ExecProvider, props: Properties, plan: Plan, ctx: ResourceContext) -> int:
        result = provider.execute(props)
        if props.get("logoutput"):
            # each line as the value of an output= field of a line naming the resource: a
            # command cannot print a line that passes for one of ccm's own (the user log
            # escapes control characters)
            label = f"exec#{props.alias or props.name}"
            for line in scrub_text(result.redacted(result.stdout)).splitlines():
                ctx.run_log.info(label, output=line)
            for line in scrub_text(result.redacted(result.stderr)).splitlines():
                ctx.run_log.warn(label, stream="stderr", output=line)
        self.last_output = scrub_text(result.output_tail())
        if result.error:
            raise ProviderError(scrub_text(result.with_output(result.error)))
        return result.exit_code

    def is_desired(self, props: Properties, state: ResourceState, acted: Any = None) -> Tuple[bool, str]:
        # The exit code is checked before `creates`: a command that ran and failed is a
        # failure even if it left its marker file behind (upstream gap).
        if acted is not None:
            returns = props.get("returns") or [0]
            if acted in returns:
                return True, ""
            return False, f"exit code {acted} not in allowed returns {returns_text(returns)}"
        if self._guard_stable(props, state):
            return True, ""
        return False, "command did not run and no guard short-circuited"

    def verify(self, provider: ExecProvider, props: Properties, plan: Plan, acted: Any,
               ctx: ResourceContext) -> Tuple[ResourceState, bool, str]:
        state = ResourceState(type="exec", name=props.name, ensure="present", extra={"exitcode": acted}, timestamp_ns=now_ns())
        creates = _creates_path(props)
        if creates and os.path.exists(creates):
            state.extra["creates_satisfied"] = True
        ok, reason = self.is_desired(props, state, acted)
        return state, ok, reason

    def desired_state_error(self, props: Properties, reason: str, acted: Any) -> str:
        message = f"failed to reach desired state: exit code {acted}: {reason}"
        return f"{message}\n{self.last_output}" if self.last_output else message
