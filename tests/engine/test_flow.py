"""The shared apply flow (ccm.resources.base) against a fake provider and fake type."""
from __future__ import annotations

import pytest

from ccm.model.events import ResourceState
from ccm.model.resource import Field, Plan, TypeLogic
from ccm.registry import Registry, TypeSpec
from ccm.resources import properties as P
from tests import kit


class Widget:
    """A fake provider: a dict of widget name -> state, recording every mutation."""

    name = "fake"

    def __init__(self, states=None, converge=True):
        self.states = dict(states or {})
        self.calls = []
        self.converge = converge

    def status(self, name):
        return ResourceState(type="widget", name=name, ensure=self.states.get(name, "absent"))

    def set(self, name, ensure):
        self.calls.append(("set", name, ensure))
        if self.converge:
            self.states[name] = ensure


class WidgetLogic(TypeLogic):
    supports_refresh = True

    def status(self, provider, props, ctx):
        return provider.status(props.name)

    def is_desired(self, props, state, acted=None):
        if state.ensure == props.ensure:
            return True, ""
        return False, f"ensure mismatch: state={state.ensure} requested={props.ensure}"

    def plan(self, props, state, refresh=False):
        if refresh:
            return Plan(("set",), "Would have refreshed", refresh=True)
        ok, reason = self.is_desired(props, state)
        return Plan() if ok else Plan(("set",), f"Would have set {props.ensure}", reason=reason)

    def act(self, provider, props, plan, ctx):
        provider.set(props.name, props.ensure)


class NoActionLogic(WidgetLogic):
    stable_means_no_action = True


@pytest.fixture
def world():
    provider = Widget()
    spec = TypeSpec(name="widget", fields=(Field("subscribe", "str_list"),), logic="tests.engine.test_flow:WidgetLogic", providers={})
    registry = Registry({})
    registry._types["widget"] = spec
    registry._type_paths["widget"] = "tests.engine.test_flow"
    registry.register(kit.StaticFactory("widget", "fake", provider))
    mgr = kit.manager(log_level=None, registry=registry, data={"enabled": True, "n": 3})
    return mgr, spec, provider


def props(spec, **values):
    p = P.build(spec, values)
    P.validate(spec, p)
    return p


def run(mgr, spec, p, record=True):
    ev = mgr.apply_resource(p)
    if record:
        mgr.record(ev)
    return ev


def test_change_then_stable(world):
    mgr, spec, provider = world
    ev = run(mgr, spec, props(spec, name="a", ensure="on"))
    assert ev.changed and not ev.failed and ev.final_ensure == "on" and ev.provider == "fake"
    assert ev.status.stable is True
    ev2 = run(mgr, spec, props(spec, name="a", ensure="on"))
    assert not ev2.changed and not ev2.failed
    assert provider.calls == [("set", "a", "on")]


def test_noop_describes_and_changes_nothing(world):
    mgr, spec, provider = world
    mgr.noop = True
    ev = run(mgr, spec, props(spec, name="a", ensure="on"))
    assert ev.changed and ev.noop and ev.noop_message == "Would have set on"
    assert provider.calls == [] and provider.states == {}


def test_non_convergence_fails_with_reason(world):
    mgr, spec, provider = world
    provider.converge = False
    ev = run(mgr, spec, props(spec, name="a", ensure="on"))
    assert ev.failed
    assert ev.errors == ["failed to reach desired state: on: ensure mismatch: state=absent requested=on"]
    assert ev.status is None and ev.final_ensure == ""


@pytest.mark.parametrize("cond_if,cond_unless,managed", [
    (None, None, True), ("true", None, True), ("false", None, False), (None, "true", False),
    (None, "false", True), ("true", "true", False), ("true", "false", True), ("false", "true", False),
    ("false", "false", False),
])
def test_control_truth_table(world, cond_if, cond_unless, managed):
    mgr, spec, provider = world
    control = {}
    if cond_if:
        control["if"] = cond_if
    if cond_unless:
        control["unless"] = cond_unless
    ev = run(mgr, spec, props(spec, name="a", ensure="on", control=control))
    assert ev.skipped is (not managed)
    assert bool(provider.calls) is managed


def test_control_sees_data_and_non_boolean_fails_only_this_resource(world):
    mgr, spec, provider = world
    ev = run(mgr, spec, props(spec, name="a", ensure="on", control={"if": "Data.enabled && Data.n > 2"}))
    assert ev.changed
    ev = run(mgr, spec, props(spec, name="b", ensure="on", control={"if": "Data.n"}))
    assert ev.failed and "did not return a boolean" in ev.errors[0]
    assert ("set", "b", "on") not in provider.calls


def test_require_gate_cascades_and_missing_target_fails(world):
    mgr, spec, provider = world
    provider.converge = False
    bad = run(mgr, spec, props(spec, name="bad", ensure="on"))
    assert bad.failed
    provider.converge = True
    skipped = run(mgr, spec, props(spec, name="c", ensure="on", require=["widget#bad"]))
    assert skipped.skipped and skipped.unmet_requirements == ["widget#bad"]
    cascade = run(mgr, spec, props(spec, name="d", ensure="on", require=["widget#c"]))
    assert cascade.skipped and cascade.unmet_requirements == ["widget#c"]
    missing = run(mgr, spec, props(spec, name="e", ensure="on", require=["widget#nope"]))
    assert missing.failed and missing.errors == ["no events found for widget#nope"]
    assert not any(c[1] in ("c", "d", "e") for c in provider.calls)


def test_require_by_alias(world):
    mgr, spec, provider = world
    run(mgr, spec, props(spec, name="a", alias="first", ensure="on"))
    ev = run(mgr, spec, props(spec, name="b", ensure="on", require=["widget#first"]))
    assert ev.changed and not ev.skipped


def test_subscribe_refreshes(world):
    mgr, spec, provider = world
    run(mgr, spec, props(spec, name="a", ensure="on"))   # changed
    ev = run(mgr, spec, props(spec, name="svc", ensure="on", subscribe=["widget#a"]))
    assert ev.changed  # first run converges
    ev = run(mgr, spec, props(spec, name="svc", ensure="on", subscribe=["widget#a"]))
    assert ev.refreshed and ev.changed
    missing = run(mgr, spec, props(spec, name="svc", ensure="on", subscribe=["widget#zzz"]))
    assert missing.failed and "no events found for widget#zzz" in missing.errors[0]


def test_no_suitable_provider_is_a_failed_event():
    spec = TypeSpec(name="widget", fields=(), logic="tests.engine.test_flow:WidgetLogic", providers={})
    registry = Registry({})
    registry._types["widget"] = spec
    registry._type_paths["widget"] = "x"
    registry.register(kit.StaticFactory("widget", "fake", Widget(), usable=False))
    mgr = kit.manager(log_level=None, registry=registry)
    ev = mgr.apply_resource(props(spec, name="a", ensure="on"))
    assert ev.failed and ev.errors == ["no suitable provider found"]


def test_registry_priority_and_forced_provider():
    spec = TypeSpec(name="widget", fields=(), logic="tests.engine.test_flow:WidgetLogic", providers={})
    registry = Registry({})
    registry._types["widget"] = spec
    registry._type_paths["widget"] = "x"
    slow, fast, other = Widget(), Widget(), Widget()
    registry.register(kit.StaticFactory("widget", "slow", slow, priority=5))
    registry.register(kit.StaticFactory("widget", "fast", fast, priority=1))
    registry.register(kit.StaticFactory("widget", "tie", other, priority=1))
    assert registry.select("widget", {}, props(spec, name="a", ensure="on")).name == "fast"
    assert registry.select("widget", {}, props(spec, name="a", ensure="on", provider="slow")).name == "slow"
    from ccm.model.errors import NoSuitableProvider
    from ccm.registry import DuplicateProvider

    with pytest.raises(NoSuitableProvider, match="provider not found"):
        registry.select("widget", {}, props(spec, name="a", ensure="on", provider="nope"))
    with pytest.raises(DuplicateProvider):
        registry.register(kit.StaticFactory("widget", "fast", fast))


def test_unknown_property_rejected_with_resource_and_key(world):
    mgr, spec, provider = world
    from ccm.model.errors import ValidationError

    with pytest.raises(ValidationError) as exc:
        P.build(spec, {"name": "a", "ensure": "on", "refresh_only": True})
    assert "widget#a" in str(exc.value) and "refresh_only" in str(exc.value)


def test_stable_flag_after_change_depends_on_type(world):
    mgr, spec, provider = world
    ev = run(mgr, spec, props(spec, name="s1", ensure="on"))
    assert ev.changed and ev.status.stable is True   # default: desired-state test passed
    spec.logic = "tests.engine.test_flow:NoActionLogic"
    ev = run(mgr, spec, props(spec, name="s2", ensure="on"))
    assert ev.changed and ev.status.stable is False  # package/service: an action was needed
