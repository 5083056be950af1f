"""The events the apply flow makes (``ccm.resources.flowevents``): a ``LazyEvent`` (id and
properties made when first read) serialises, counts and logs as its plain twin
(``plain_event``: a ``TransactionEvent`` stamped and filled at once), and its ids are
KSUIDs drawn when the event is made."""
from __future__ import annotations

import grp
import json
import os
import pwd
import re
import subprocess
import sys
import threading

import pytest

from ccm import clock
from ccm.apply import load_manifest
from ccm.model.events import EventRecord, TransactionEvent
from ccm.resources import flowevents
from ccm.resources.flowevents import LazyEvent, LazyRecord, plain_event
from tests import twins
from tests import kit
from tests.kit import build, output

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _file_props(tmp_path, manager=None, **extra):
    target = tmp_path / "motd"
    target.write_text("hello\n")
    raw = {"name": str(target), "ensure": "present", "content": "hello\n", "mode": "0644", "owner": ME,
           "group": MYGROUP}
    raw.update(extra)
    return build(manager or kit.manager(), "file", raw)


def _manifest(root):
    """Files changed, stable, templated (rendered while the resource runs), aliased and
    failing; an exec; a require on a failed resource."""
    d = root / "d"
    d.mkdir(parents=True)
    (d / "same").write_text("same\n")

    def file(path, content, **more):
        values = {"ensure": "present", "owner": ME, "group": MYGROUP, "mode": '"0644"',
                  "content": json.dumps(content)}
        values.update(more)
        return f"    - file:\n        - {path}:\n" + "".join(f"            {k}: {v}\n" for k, v in values.items())

    resources = [
        file(d / "same", "same\n"),
        file(d / "new", "new\n", alias="fresh"),
        file(d / "templated", "by {{ Data.who }}\n"),
        "    - exec:\n        - /bin/true:\n            command: /bin/true\n",
        file(d / "bad", "x\n", owner="ccm-no-such-user"),
        file(d / "after", "after\n", require='["file#' + str(d / "bad") + '"]'),
    ]
    manifest = root / "m.yaml"
    manifest.write_text("data:\n  who: ops\nccm:\n  resources:\n" + "".join(resources))
    return manifest


def _runs(root, keep):
    manifest = _manifest(root)
    out = []
    for _ in range(2):   # first, then steady
        m = kit.manager()
        m.session.keep_events = keep
        result = m.execute(load_manifest(str(manifest), m))
        kept = [re.sub(str(root), "ROOT", repr((isinstance(e, TransactionEvent), e.type, e.name, e.alias, e.changed,
                                               e.failed, e.skipped, e.noop, list(e.errors), list(e.unmet_requirements))))
                for e in result.events]
        wire = [twins.wire(root, e) for e in result.events if isinstance(e, TransactionEvent)]
        out.append((kept, wire, twins.summary(result), twins.log_text(root, output(m)),
                    sorted(p.name for p in (root / "d").iterdir())))
    return out


@pytest.mark.parametrize("keep", [True, False], ids=["events", "records"])
def test_lazy_events_of_a_run_equal_the_plain_twin(tmp_path, monkeypatch, keep):
    monkeypatch.setattr(flowevents, "new_event", plain_event)
    plain = _runs(tmp_path / "plain", keep)
    monkeypatch.setattr(flowevents, "new_event", LazyEvent.begin)
    lazy = _runs(tmp_path / "lazy", keep)
    assert lazy == plain
    first = plain[0]
    assert len(first[0]) == 6 and first[2]["failed_resources"] == 1 and first[2]["skipped_resources"] == 1
    if keep:
        assert any('"content": "by ops\\n"' in w for w in first[1]), "properties are the rendered ones"


def test_the_switch_picks_the_plain_twin():
    code = "import ccm.resources.flowevents as f; print(f.new_event is f.plain_event, f.LAZY)"
    for value, want in (("0", "True False"), ("", "False True"), ("1", "False True")):
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                           env=dict(os.environ, CCM_LAZY_EVENTS=value))
        assert r.stdout.strip() == want, (value, r.stderr)


def test_properties_are_the_rendered_ones_made_once(tmp_path):
    manager = kit.manager()
    _spec, props = _file_props(tmp_path, manager, alias="motd", content="changed\n")
    eager = props.to_dict()
    event = manager.apply_resource(props)
    assert event.changed and not event.failed
    assert event.properties == eager and event.properties["alias"] == "motd"
    assert event.properties is event.properties
    twin = TransactionEvent.from_dict(json.loads(json.dumps(event.to_dict())))
    assert twin.properties == eager and twin.to_dict() == event.to_dict()


def _begun(props, args=("file", "/etc/motd", "", "present", False)):
    return LazyEvent.begin(*args), plain_event(*args)


def test_a_lazy_event_holds_what_its_plain_twin_holds(tmp_path):
    _spec, props = _file_props(tmp_path)
    for args in (("file", "/etc/motd", "", "present", False), ("exec", "x", "al", "", True)):
        lazy, plain = _begun(props, args)
        for event in (lazy, plain):
            event.properties_from(props)
        assert lazy.timestamp_ns > 0 and clock.is_ksuid(lazy.event_id) and lazy.event_id != plain.event_id
        lazy.event_id, lazy.timestamp_ns = plain.event_id, plain.timestamp_ns
        assert [getattr(lazy, f) for f in lazy._value_fields] == [getattr(plain, f) for f in plain._value_fields]
        assert lazy.to_dict() == plain.to_dict()
        assert repr(lazy) == repr(plain).replace("TransactionEvent(", "LazyEvent(", 1)
        assert type(lazy.record()) is LazyRecord and type(plain.record()) is EventRecord
        assert [getattr(lazy.record(), f) for f in EventRecord.__slots__] == \
            [getattr(plain.record(), f) for f in EventRecord.__slots__]
    first, second = (LazyEvent.begin("file", n, "", "", False) for n in "ab")
    first.fail("boom")
    first.unmet_requirements.append("exec#x")
    first.health_checks.append("check")
    first.changed = first.noop = True
    first.provider = "posix"
    assert (second.errors, second.unmet_requirements, second.health_checks) == ([], [], [])
    assert not second.changed and not second.noop and second.provider == "" and not second.failed


def test_redacted_values_stay_redacted():
    _spec, props = build(kit.manager(), "archive", {
        "name": "/tmp/never/x.tgz", "ensure": "present", "url": "https://user:pw@example.com/x.tgz", "password": "pw",
        "username": "user", "checksum": "0" * 64, "owner": ME, "group": MYGROUP})
    for event in _begun(props):
        event.properties_from(props)
        assert event.properties == props.to_dict()
        assert event.properties["password"] == "REDACTED" and "pw@" not in event.properties["url"]


def test_assigning_properties_replaces_the_source(tmp_path):
    _spec, props = _file_props(tmp_path)
    event = LazyEvent.begin("file", props.name, "", "", False)
    assert event.properties == {}
    event.properties_from(props)
    event.properties = {"name": "given"}
    assert event.properties == {"name": "given"}
    event.properties_from(props)
    assert event.properties == props.to_dict()


# --- event ids ----------------------------------------------------------------------------

def test_event_ids_are_unique_across_pool_refills_and_threads():
    made = []

    def make():
        made.extend(LazyEvent.begin("file", "x", "", "", False) for _ in range(700))   # > 2 pools of 256

    workers = [threading.Thread(target=make) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    ids = [e.record().event_id for e in made]
    assert len(set(ids)) == len(made) == 2800 and all(clock.is_ksuid(i) for i in ids)
    assert [e.event_id for e in made] == ids   # the event and its record: the same id
    assert len({e._drawn[1] for e in made}) == 2800   # no random part handed out twice


def test_a_forked_child_draws_its_own_random_bytes():
    LazyEvent.begin("file", "warm", "", "", False)   # the parent's pool holds bytes now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: report the random part of its first event
        try:
            os.write(write, LazyEvent.begin("file", "child", "", "", False)._drawn[1])
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 16)
    os.close(read)
    os.waitpid(pid, 0)
    parent_next = LazyEvent.begin("file", "parent", "", "", False)._drawn[1]
    assert len(child) == 16 and child != parent_next


def test_an_id_names_the_events_birth_and_its_random_part(monkeypatch):
    """Drawn when the event is made (its timestamp's second and 16 random bytes), encoded
    on first read as ``new_ksuid`` encodes them; a record made before the read has it too."""
    raw = bytes(range(16))
    born = 1_735_787_045_900_000_000
    monkeypatch.setattr(flowevents, "now_ns", lambda: born)
    monkeypatch.setattr(flowevents, "pooled_random16", lambda: raw)
    monkeypatch.setattr(clock, "random16", lambda: raw)
    event = LazyEvent.begin("file", "x", "", "", False)
    record = event.record()   # copied before anything read the id
    monkeypatch.setattr(flowevents, "now_ns", lambda: born + 3600 * 10**9)
    assert event.timestamp_ns == born
    assert event.event_id == record.event_id == clock.new_ksuid(1_735_787_045) == clock.ksuid_text((born, raw))
    event.event_id = "given"
    assert event.to_dict()["event_id"] == "given" and record.event_id != "given"
