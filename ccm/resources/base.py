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
from ccm.model.manager import ChildRun, RunManager
from ccm.model.resource import DEFERRED, Properties, ResourceContext, TypeLogic
from ccm.model.run import Run
from ccm.resources import flowevents
from ccm.resources import properties as P
from ccm.tmplcache import ProbedEnvironment
from ccm.typing_guard import TYPE_CHECKING

_new_object = object.__new__

if TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Tuple

    from ccm.model.manager import UserLog
    from ccm.model.provider import ProviderFactory
    from ccm.registry import TypeSpec

log = internal("ccm.resources")

# the properties that can gate or extend the flow; most resources set none of them
# (``_flow`` tests each with ``in``: a frozenset.isdisjoint(values) iterates the dict,
# several times the cost, once per resource)
_GATES = ("control", "require", "health_checks")


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


def select_provider(manager: RunManager, run: Run, props: Properties,
                    facts: Any = None) -> Tuple[ProviderFactory, Any]:
    """(factory, provider) for ``props`` in ``run``; ``facts``: the manager's facts view, if taken."""
    factory = manager.registry.select(props.type_name, manager.facts_view() if facts is None else facts, props)
    return factory, _new_provider(manager, run, factory)


def _new_provider(manager: RunManager, run: Run, factory: ProviderFactory) -> Any:
    """A provider from ``factory`` for ``run``, handed what its factory declares it takes:
    the run's cache (``prefetches``) and write sink (``stages_writes``)."""
    provider = factory.new(manager.runner, run.log)
    if factory.prefetches and run.cache is not None:
        provider.use_run_cache(run.cache)
    if factory.stages_writes:
        provider.use_write_sink(run.sink)
    return provider


class _Nesting:
    """``ResourceContext.nested`` of the resources of ``run``: a child manifest runs one
    level below it (``RunManager.run_child``)."""

    __slots__ = ("manager", "run")

    def __init__(self, manager: RunManager, run: Run) -> None:
        self.manager, self.run = manager, run

    def apply_child(self, path: str, *, noop: bool, health_check_only: bool,
                    data: Optional[Mapping[str, Any]], deny_apply: bool, label: str) -> ChildRun:
        return self.manager.run_child(self.run, path, noop=noop, health_check_only=health_check_only, data=data,
                                      deny_apply=deny_apply, label=label)


def context(manager: RunManager, run: Run, facts: Any = None) -> ResourceContext:
    """The slice of ``manager`` and ``run`` a type's logic sees while one resource runs
    (``facts``: the manager's facts view, if already taken)."""
    return ResourceContext(run.noop, manager.working_dir, run.log, manager.runner,
                           manager.facts_view() if facts is None else facts, run.depth,
                           run.chain, run.log, manager.template_environment, _Nesting(manager, run), run.diff)


class _FlowContext(ResourceContext):
    """The context of one resource of a ``RunFlow``: the run-wide fields are class
    attributes of the run's own subclass (``RunFlow``), so a resource's context holds only
    the resource; its ``log`` is bound to the resource on first use (most resources never
    log through it)."""

    run_log: UserLog
    _resource: Tuple[str, str]

    @property   # the attribute ResourceContext sets, bound here on first use
    def log(self) -> UserLog:
        bound: Optional[UserLog] = self.__dict__.get("_log")
        if bound is None:
            type_name, name = self._resource
            bound = self.__dict__["_log"] = self.run_log.bind(type=type_name, name=name)
        return bound

    @log.setter
    def log(self, value: UserLog) -> None:
        self.__dict__["_log"] = value


class RunFlow:
    """The shared flow over the resources of one run: ``ccm.apply.engine.execute`` makes
    one per manifest run, ``Manager.apply_resource`` one per resource.

    Every per-run setting comes from ``run`` (``ccm.model.run.Run``). What every resource
    of the run shares is looked up once: the facts view, the context's run-wide fields,
    one provider per factory that declares ``provider_per_run`` and one logic per type
    that declares ``stateless``. ``template_free``: no resource holds a template anywhere
    (a manifest from the plan cache, ``Manifest.template_free``), so there is nothing to
    render at run time. The manager's ``session`` and working directory must not change
    while the flow is in use.
    """

    def __init__(self, manager: RunManager, run: Run, *, template_free: bool = False) -> None:
        self.manager = manager
        self._run = run
        self.health_check_only = run.health_check_only
        self.template_free = template_free
        self._shared_environment: Optional[ProbedEnvironment] = None
        self.facts = facts = manager.facts_view()
        self._providers: Dict[ProviderFactory, Any] = {}   # factory -> its provider, for the run
        self._select = manager.registry.select
        self._failed_refs = manager.session.failed_refs   # the require gate
        self._metrics = manager.metrics if manager.metrics.enabled else None   # the no-op sink: nothing to time
        # ResourceContext's fields, as its __init__ would set them from context() above
        self._context = type("_RunContext", (_FlowContext,), {
            "noop": run.noop, "diff": run.diff, "working_dir": manager.working_dir, "run_log": run.log,
            "runner": manager.runner, "facts": facts, "depth": run.depth,
            "chain": run.chain, "nested": _Nesting(manager, run),
            # a function as a class attribute would become a method: staticmethod keeps it as it is
            "_template_environment": staticmethod(manager.template_environment)})

    def context(self, type_name: str, name: str) -> ResourceContext:
        ctx: _FlowContext = _new_object(self._context)
        ctx._resource = (type_name, name)
        return ctx

    def run(self, spec: "TypeSpec", props: Properties) -> TransactionEvent:
        """Run one resource through the whole flow and return its (unrecorded) event."""
        started = time.monotonic_ns()
        values = props.values
        type_name, name = props.type_name, values.get("name") or ""
        health_check_only = self.health_check_only
        event = flowevents.new_event(type_name, name, values.get("alias") or "", values.get("ensure") or "",
                                     health_check_only)
        ctx: _FlowContext = _new_object(self._context)   # self.context(), inlined: once per resource
        ctx._resource = (type_name, name)
        try:
            self._flow(spec, props, event, ctx)
        except CCMError as exc:
            event.fail(str(exc))
        except Exception as exc:  # a bug in one type must not take the run down
            log.debug("unexpected error", exc_info=True)
            event.fail(f"unexpected error: {type(exc).__name__}: {exc}")
        event.properties_from(props)   # rendered by now
        event.duration_ns = time.monotonic_ns() - started
        return event

    def _flow(self, spec: "TypeSpec", props: Properties, event: TransactionEvent, ctx: ResourceContext) -> None:
        factory: ProviderFactory = self._select(props.type_name, self.facts, props)
        provider = self._providers.get(factory)
        if provider is None:
            provider = _new_provider(self.manager, self._run, factory)
            if factory.provider_per_run:
                self._providers[factory] = provider
        event.provider = factory.name

        values = props.values
        gated = False
        for key in _GATES:   # values holds only the keys that are set
            if key in values:
                gated = True
                break
        if gated or not self.template_free:
            if (not self.template_free or "control" in values) and not self._passes_gates(props, event, gated):
                return
            requires = values.get("require") if gated else None   # after _passes_gates: it renders in place
            if requires:
                unmet = self._failed_refs(requires)
                if unmet:
                    event.skipped = True
                    event.unmet_requirements = unmet
                    return

        logic = spec.new_logic()
        # Nested manifests run their child in health-check-only mode instead of skipping it.
        if not self.health_check_only or logic.runs_in_health_check_only:
            metrics = self._metrics
            apply_started = time.monotonic() if metrics is not None else 0.0
            try:
                _apply(self.manager, logic, props, provider, event, ctx, self._run.noop)
            except CCMError as exc:
                _not_applied(self.manager, props, event, exc, self._run.noop)
            finally:
                if metrics is not None:
                    metrics.observe("resource_apply", time.monotonic() - apply_started,
                                    type=props.type_name, provider=factory.name, name=props.alias or props.name)

        checks = values.get("health_checks") if gated else None
        if checks:
            from ccm.healthcheck import run_checks

            results, errors = run_checks(self.manager, props, checks, ctx.log)
            event.health_checks = results
            for err in errors:
                event.fail(err)

    def _passes_gates(self, props: Properties, event: TransactionEvent, gated: bool) -> bool:
        """``control`` and the deferred templates, before the ``require`` gate: False when
        ``control`` skips the resource (``event`` says so)."""
        values = props.values
        env: Any = None   # the template environment, made only if a template or expression reads it
        if gated and values.get("control"):
            env = self.manager.lazy_template_environment()
            if not _control_allows(props, env):
                event.skipped = True
                return False
        if not self.template_free:   # render_phase calls the function only for a template
            P.render_phase(props, self._template_environment if env is None else env, DEFERRED)
        return True

    def _template_environment(self) -> Any:
        """The manager's lazy template environment; a ``ccm.tmplcache.ProbedEnvironment``
        is shared by the run's resources until a template resolves it (each ``Data``
        value or fact a template reads is then asked once per run)."""
        shared = self._shared_environment
        if shared is not None and not shared.resolved:
            return shared
        env = self.manager.lazy_template_environment()
        self._shared_environment = env if isinstance(env, ProbedEnvironment) else None
        return env


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
    run = manager.single_run()
    _factory, chosen = select_provider(manager, run, props)
    state: ResourceState = spec.new_logic().status(chosen, props, context(manager, run))
    return state


def _not_applied(manager: RunManager, props: Properties, event: TransactionEvent, exc: CCMError, noop: bool) -> None:
    """A failure of status, plan, act or verify: the event fails, or in noop says what an
    earlier resource of the run would change first (and so what it cannot see yet)."""
    event.status = None
    event.final_ensure = ""
    pending = _pending_requirements(manager, props) if noop else []
    if pending:
        event.noop = event.changed = True
        event.noop_message = f"{_intent(props)} after {', '.join(pending)}"
        log.debug("noop status unavailable before its requirements change",
                  extra={"kv": {"resource": props.resource_id, "error": str(exc)}})
    else:
        event.fail(str(exc))


def run(manager: RunManager, spec: "TypeSpec", props: Properties, run: Run) -> TransactionEvent:
    """Run one resource through the whole flow in ``run`` and return its (unrecorded) event."""
    return RunFlow(manager, run).run(spec, props)


def _apply(manager: RunManager, logic: TypeLogic[Any], props: Properties, provider: Any, event: TransactionEvent,
           ctx: ResourceContext, noop: bool) -> None:
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
    event.noop = noop
    event.noop_message = state.noop_message
