"""The shared apply flow, written once for every resource type.

Order (seed 001): select the provider, ``control`` gate, deferred templates, ``require``
gate, status, plan, act or describe (noop), verify convergence by re-reading status,
health checks, finalize the event. The type's ``TypeLogic`` decides; this module runs.

Every failure here becomes a failed event for this resource; nothing raises to the
caller except programming errors, so one bad resource never aborts a run.
"""
from __future__ import annotations

import time

from ccm.log import internal
from ccm.model.errors import CCMError, DesiredStateError, SessionError
from ccm.model.events import ResourceState, TransactionEvent
from ccm.model.manager import RunManager, UserLog
from ccm.model.resource import DEFERRED, Properties, ResourceContext, TypeLogic
from ccm.resources import properties as P

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

    from ccm.registry import TypeSpec

log = internal("ccm.resources")

# the properties that can gate or extend the flow; most resources set none of them
_GATES = frozenset(("control", "require", "health_checks"))


class _ResourceLog:
    """The run's log bound to one resource (``type``, ``name``), bound on first use: most
    resources never log through it, and a steady run has thousands of them."""

    __slots__ = ("_parent", "_type", "_name", "_bound")

    def __init__(self, parent: UserLog, type_name: str, name: str) -> None:
        self._parent, self._type, self._name = parent, type_name, name
        self._bound: Optional[UserLog] = None

    def _log(self) -> UserLog:
        bound = self._bound
        if bound is None:
            bound = self._bound = self._parent.bind(type=self._type, name=self._name)
        return bound

    @property
    def quiet(self) -> bool:
        return self._log().quiet

    @quiet.setter
    def quiet(self, value: bool) -> None:
        self._log().quiet = value

    def bind(self, **attrs: Any) -> UserLog:
        return self._log().bind(**attrs)

    def debug(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self._log().debug(message, *pairs, **attrs)

    def info(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self._log().info(message, *pairs, **attrs)

    def warn(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self._log().warn(message, *pairs, **attrs)

    def error(self, message: str, *pairs: Tuple[str, Any], **attrs: Any) -> None:
        self._log().error(message, *pairs, **attrs)

    def __getattr__(self, name: str) -> Any:   # the rest of the bound log (records, level, log ...)
        if name.startswith("_"):   # our own slots before __init__ (copy, pickle): no recursion
            raise AttributeError(name)
        return getattr(self._log(), name)


def _control_allows(props: Properties, env: Any) -> bool:
    control = props.get("control") or {}
    if not control:
        return True
    from ccm import expr

    results = {}
    for key in ("if", "unless"):
        source = (control.get(key) or "").strip()
        if not source:
            continue
        value = expr.evaluate(source, env)
        if not isinstance(value, bool):
            raise CCMError(f"control {key} expression {source!r} did not return a boolean (got {value!r})")
        results[key] = value
    return results.get("if", True) and not results.get("unless", False)


_INTENT = {"running": "would start", "stopped": "would stop", "present": "would create", "absent": "would remove",
           "latest": "would install the latest version", "directory": "would create directory"}


def _intent(props: Properties) -> str:
    if props.type_name == "package" and props.ensure == "present":
        return "would install"
    return _INTENT.get(props.ensure, f"would ensure {props.ensure}" if props.ensure else "would run")


def _pending_requirements(manager: RunManager, props: Properties) -> List[str]:
    """The requirements (require/subscribe) an earlier resource of this noop run would change."""
    pending: List[str] = []
    refs = list(props.get("require") or [])
    if any(f.key == "subscribe" for f in props.fields):
        refs += list(props.get("subscribe") or [])
    for ref in refs:
        if not isinstance(ref, str) or "#" not in ref:
            continue
        t, n = ref.split("#", 1)
        try:
            events = manager.session.events_for(t, n)
        except Exception:
            continue
        if events and events[-1].noop and events[-1].changed and ref not in pending:
            pending.append(ref)
    return pending


def select_provider(manager: RunManager, props: Properties,
                    facts: Any = None) -> Tuple[Any, Any]:
    """(factory, provider) for ``props``; ``facts``: the manager's facts view, if taken."""
    factory = manager.registry.select(props.type_name, manager.facts_view() if facts is None else facts, props)
    provider = factory.new(manager.runner, manager.user_log)
    cache = manager.run_cache   # optional provider capability: prefetching
    if cache is not None and hasattr(provider, "use_run_cache"):
        provider.use_run_cache(cache)
    batch = manager.write_batch   # set by the apply flow while a batch may take this write
    if batch is not None and hasattr(provider, "use_write_batch"):   # optional capability
        provider.use_write_batch(batch)
    return factory, provider


def context(manager: RunManager, user_log: UserLog, facts: Any = None) -> ResourceContext:
    """The slice of ``manager`` a type's logic sees while one resource runs (``facts``:
    the manager's facts view, if already taken)."""
    # positionally (the order of ResourceContext's parameters): one context per resource,
    # and ten keyword arguments cost twice what building the object does
    return ResourceContext(manager.noop, manager.working_dir, user_log, manager.runner,
                           manager.facts_view() if facts is None else facts, manager.depth,
                           manager.apply_chain, manager.user_log, manager.template_environment, manager)


def observe(manager: RunManager, spec: "TypeSpec", name: str, *, provider: Optional[str] = None) -> ResourceState:
    """``ccm status`` and goss probes: the state of ``name`` through the provider this host
    would use (or the forced ``provider``) and the type's own ``status`` (no control gate,
    templates or plan)."""
    if spec.status_name is not None:
        name = spec.status_name(name)
    values: Dict[str, Any] = {"name": name, "ensure": spec.default_ensure or "present"}
    if provider:
        values["provider"] = provider
    props = Properties(spec.name, values, spec.all_fields)
    _factory, provider = select_provider(manager, props)
    state: ResourceState = spec.new_logic().status(provider, props, context(manager, manager.user_log))
    return state


def run(manager: RunManager, spec: "TypeSpec", props: Properties, *,
        health_check_only: bool = False) -> TransactionEvent:
    """Run one resource through the whole flow and return its (unrecorded) event."""
    started = time.monotonic_ns()
    values = props.values
    type_name, name = props.type_name, values.get("name") or ""
    event = TransactionEvent.begin(type_name, name, values.get("alias") or "", values.get("ensure") or "",
                                   health_check_only)
    user_log: UserLog = _ResourceLog(manager.user_log, type_name, name)
    try:
        _flow(manager, spec, props, event, health_check_only, user_log)
    except CCMError as exc:
        event.fail(str(exc))
    except Exception as exc:  # a bug in one type must not take the run down
        log.debug("unexpected error", exc_info=True)
        event.fail(f"unexpected error: {type(exc).__name__}: {exc}")
    event.properties_from(props)   # props.to_dict() when something reads them
    event.duration_ns = time.monotonic_ns() - started
    return event


def _flow(manager: RunManager, spec: "TypeSpec", props: Properties, event: TransactionEvent,
          health_check_only: bool, user_log: UserLog) -> None:
    facts = manager.facts_view()   # one lazy view for the provider choice and the context
    factory, provider = select_provider(manager, props, facts)
    event.provider = factory.name
    values = props.values

    gated = not _GATES.isdisjoint(values)   # values holds only the keys that are set
    # the environment is made only if a deferred field holds a template (render_phase calls this)
    env: Any = manager.lazy_template_environment
    if gated and values.get("control"):
        env = env()   # built only if a template or expression reads it
        if not _control_allows(props, env):
            event.skipped = True
            return
    P.render_phase(props, env, DEFERRED)

    requires = values.get("require") if gated else None
    if requires:
        unmet = [ref for ref in requires if manager.session.is_failed(ref)]
        if unmet:
            event.skipped = True
            event.unmet_requirements = unmet
            return

    logic = spec.new_logic()
    # Nested manifests run their child in health-check-only mode instead of skipping it.
    if not health_check_only or logic.runs_in_health_check_only:
        apply_started = time.monotonic()
        try:
            _apply(manager, logic, props, provider, event, user_log, facts)
        except CCMError as exc:
            event.status = None
            event.final_ensure = ""
            pending = _pending_requirements(manager, props) if manager.noop else []
            if pending:
                # noop: what it cannot see yet, an earlier resource would change first
                event.noop = event.changed = True
                event.noop_message = f"{_intent(props)} after {', '.join(pending)}"
                log.debug("noop status unavailable before its requirements change",
                          extra={"kv": {"resource": props.resource_id, "error": str(exc)}})
            else:
                event.fail(str(exc))
        finally:
            metrics = manager.metrics
            if metrics.enabled:
                metrics.observe("resource_apply", time.monotonic() - apply_started,
                                type=props.type_name, provider=factory.name, name=props.alias or props.name)

    checks = values.get("health_checks") if gated else None
    if checks:
        from ccm.healthcheck import run_checks

        results, errors = run_checks(manager, props, checks, user_log)
        event.health_checks = results
        for err in errors:
            event.fail(err)


def _apply(manager: RunManager, logic: TypeLogic[Any], props: Properties, provider: Any, event: TransactionEvent,
           user_log: UserLog, facts: Any) -> None:
    ctx = context(manager, user_log, facts)
    refresh = False
    if logic.supports_refresh:
        refs = logic.refresh_refs(props)
        if refs:
            try:
                refresh = manager.session.should_refresh(refs)
            except SessionError as exc:
                raise CCMError(str(exc)) from None

    before = logic.status(provider, props, ctx)
    plan = logic.plan(props, before, refresh)
    state = before
    if not plan.actions:   # plan.stable, read without its property call
        state.stable = True
    elif ctx.noop and not logic.acts_in_noop:
        state.noop = True
        state.noop_message = plan.noop_message
        state.changed = True
        state.stable = False
    else:
        acted = logic.act(provider, props, plan, ctx)
        if ctx.noop:
            state, ok, reason = logic.after_noop(props, plan, acted, before)
        else:
            state, ok, reason = logic.verify(provider, props, plan, acted, ctx)
            if not ok:
                raise DesiredStateError(logic.desired_state_error(props, reason, acted))
        state.changed = logic.changed(plan, before, state)
        # package and service report "stable" as "no action was needed"; the other types
        # as "the desired-state test passed" (true after a successful change).
        state.stable = ok and not logic.stable_means_no_action
    state.refreshed = plan.refresh
    event.status = state
    event.final_ensure = state.ensure
    event.changed = state.changed
    event.refreshed = state.refreshed
    event.noop = manager.noop
    event.noop_message = state.noop_message
