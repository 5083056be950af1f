"""The wire objects and ``Field`` are value classes: they keep what their
dataclasses gave callers (construction, defaults, equality, repr, hashing and
immutability where they had it)."""
from __future__ import annotations

import copy
import pickle

import pytest

from ccm.model.events import HealthCheckResult, ResourceState, SessionStartEvent, SessionSummary, TransactionEvent
from ccm.model.kinds import STR_LIST
from ccm.model.resource import NEVER, Field


def test_resource_state_compares_and_shows_everything_but_internal():
    a = ResourceState("file", "/x", "present", timestamp_ns=1, extra={"metadata": {"size": 1}})
    b = ResourceState(type="file", name="/x", ensure="present", timestamp_ns=1, extra={"metadata": {"size": 1}},
                      internal={"fd": 3})
    assert a == b and a.internal == {} and b.internal == {"fd": 3}
    assert repr(a) == repr(b) == ("ResourceState(type='file', name='/x', ensure='present', changed=False, "
                                  "refreshed=False, stable=False, noop=False, noop_message='', timestamp_ns=1, "
                                  "extra={'metadata': {'size': 1}})")
    assert a != ResourceState("file", "/x", "absent", timestamp_ns=1, extra={"metadata": {"size": 1}})
    assert a.__eq__("x") is NotImplemented
    with pytest.raises(TypeError):
        hash(a)   # compared by value, not hashable (as the dataclass was)


def test_defaults_are_fresh_per_instance():
    one, two = TransactionEvent("file", "a"), TransactionEvent("file", "b")
    one.errors.append("boom")
    one.properties["k"] = 1
    one.health_checks.append(HealthCheckResult(0))
    assert two.errors == [] and two.properties == {} and two.health_checks == [] and two.unmet_requirements == []
    assert (one.event_id, one.timestamp_ns) == ("", 0)   # the maker stamps them (ccm.clock), not the model
    assert ResourceState("file", "a").extra is not ResourceState("file", "b").extra
    assert ResourceState("file", "a").internal is not ResourceState("file", "b").internal
    assert (SessionStartEvent().event_id, SessionStartEvent().timestamp_ns) == ("", 0)
    assert SessionStartEvent("id", 5) == SessionStartEvent(event_id="id", timestamp_ns=5)


def test_events_round_trip_and_compare():
    ev = TransactionEvent("file", "/x", "posix", requested_ensure="present", duration_ns=7,
                          status=ResourceState("file", "/x", "present", timestamp_ns=1_000_000_000),
                          health_checks=[HealthCheckResult(1, 2, "warn", "chk")], errors=["e"], failed=True,
                          event_id="3MshQfCdiumMlcVufCO2i9q5Ifz", timestamp_ns=2_000_000_000)
    back = TransactionEvent.from_dict(ev.to_dict())
    assert back.to_dict() == ev.to_dict()
    assert back.health_checks == [HealthCheckResult(1, 2, "warn", "")]   # the name is not on the wire
    assert repr(ev).startswith("TransactionEvent(type='file', name='/x', provider='posix', alias='', ")
    summary = SessionSummary.build([SessionStartEvent("s", 1_000_000_000), ev])
    assert summary == SessionSummary(start_time_ns=1_000_000_000, end_time_ns=2_000_000_000,
                                     total_duration_ns=1_000_000_000, total_resources=1, unique_resources=1,
                                     failed_resources=1, health_checked_count=1, health_check_warning_count=1,
                                     total_errors=1)
    assert list(summary.to_dict())[:3] == ["start_time", "end_time", "total_duration"]


def test_field_is_frozen_hashable_and_replaceable():
    f = Field("require", "str_list", template=NEVER)
    assert f.kind is STR_LIST   # a kind's name is normalised to the kind
    assert f == Field("require", STR_LIST, NEVER) and hash(f) == hash(Field("require", STR_LIST, NEVER))
    assert {f: 1}[Field("require", STR_LIST, template=NEVER)] == 1
    with pytest.raises(AttributeError):
        f.key = "other"   # type: ignore[misc]
    with pytest.raises(AttributeError):
        del f.key
    g = f.replace(always_emit=True)
    assert g.always_emit and not f.always_emit and g.key == "require" and g.kind is STR_LIST and g != f
    assert copy.copy(f) == f and copy.copy(f) is not f
    back = pickle.loads(pickle.dumps(Field("name", choices=("a",))))   # kinds compare by identity
    assert (back.key, back.choices, type(back.kind)) == ("name", ("a",), type(Field("name").kind))
    assert repr(Field("name")).startswith("Field(key='name', kind=")


def test_manageable_is_a_pair_with_named_fields():
    from typing import NamedTuple

    from ccm.model.provider import Manageable

    class Reference(NamedTuple):
        usable: bool
        priority: int = 1

    for args in ((True,), (False, 99)):
        mine, ref = Manageable(*args), Reference(*args)
        assert mine == ref and tuple(mine) == tuple(ref) and hash(mine) == hash(ref)
        assert (mine.usable, mine.priority) == (ref.usable, ref.priority)
        assert repr(mine) == repr(ref).replace("Reference", "Manageable")
        assert pickle.loads(pickle.dumps(mine)) == mine and type(copy.copy(mine)) is Manageable
        usable, priority = mine
        assert (usable, priority) == args + (1,) * (2 - len(args)) and mine[0] is args[0]
