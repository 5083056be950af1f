"""The per-event fast paths (issue 16) give what the plain code gave: an event's
properties made on first read equal the ``to_dict()`` the flow used to store."""
from __future__ import annotations

import grp
import json
import os
import pwd

from ccm.model.events import TransactionEvent
from tests.kit_extra import build, make_manager

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name


def _file_props(tmp_path, manager=None, **extra):
    target = tmp_path / "motd"
    target.write_text("hello\n")
    raw = {"name": str(target), "ensure": "present", "content": "hello\n", "mode": "0644", "owner": ME,
           "group": MYGROUP}
    raw.update(extra)
    return build(manager or make_manager(), "file", raw)


def test_properties_made_on_first_read_equal_the_eager_dict(tmp_path):
    manager = make_manager()
    _spec, props = _file_props(tmp_path, manager, alias="motd", content="changed\n")
    eager = props.to_dict()
    event = manager.apply_resource(props)
    assert event.changed and not event.failed
    assert vars(event)["_properties"] is None   # not made by the flow
    lazy = event.properties
    assert lazy == eager and lazy["alias"] == "motd"
    assert event.properties is lazy   # made once
    twin = TransactionEvent.from_dict(json.loads(json.dumps(event.to_dict())))
    assert twin.properties == eager and twin.to_dict() == event.to_dict()


def test_equality_repr_and_json_see_the_properties(tmp_path):
    _spec, props = _file_props(tmp_path)
    eager = TransactionEvent("file", props.name, event_id="x", timestamp_ns=1, properties=props.to_dict())
    lazy = TransactionEvent("file", props.name, event_id="x", timestamp_ns=1)
    lazy.properties_from(props)
    assert repr(lazy) == repr(eager) and lazy == eager
    other = TransactionEvent("file", props.name, event_id="x", timestamp_ns=1)
    other.properties_from(props)
    assert json.dumps(other.to_dict()) == json.dumps(eager.to_dict())


def test_redacted_values_stay_redacted():
    _spec, props = build(make_manager(), "archive", {
        "name": "/tmp/never/x.tgz", "ensure": "present", "url": "https://user:pw@example.com/x.tgz", "password": "pw",
        "username": "user", "checksum": "0" * 64, "owner": ME, "group": MYGROUP})
    event = TransactionEvent("archive", props.name)
    event.properties_from(props)
    assert event.properties == props.to_dict()
    assert event.properties["password"] == "REDACTED" and "pw@" not in event.properties["url"]


def test_assigning_properties_replaces_the_source(tmp_path):
    _spec, props = _file_props(tmp_path)
    event = TransactionEvent("file", props.name)
    assert event.properties == {}
    event.properties_from(props)
    event.properties = {"name": "given"}
    assert event.properties == {"name": "given"}
    event.properties_from(props)
    assert event.properties == props.to_dict()
