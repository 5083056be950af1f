"""The manager seam: ensure / status / apply / child, and the lifetimes of its caches."""
from __future__ import annotations

import json
import os
import pwd
import threading

import pytest

from ccm.manager import Manager
from ccm.model.errors import ManifestError, ValidationError
from ccm.model.manager import RunManager
from ccm.resources import ownership
from tests import kit


def _file(path: str, content: str = "x") -> dict:
    user = pwd.getpwuid(os.getuid()).pw_name
    import grp

    group = grp.getgrgid(os.getgid()).gr_name
    return {"name": path, "ensure": "present", "content": content, "owner": user, "group": group, "mode": "0644"}


def test_ensure_validates_runs_and_records(tmp_path):
    m = kit.manager(log_level=None)
    target = tmp_path / "a.txt"
    event = m.ensure("file", _file(str(target), "hello"))
    assert event.changed and not event.failed
    assert target.read_text() == "hello"
    assert m.session.transaction_events()[-1].event_id == event.event_id


def test_ensure_rejects_bad_properties_before_running(tmp_path):
    m = kit.manager(log_level=None)
    with pytest.raises(ValidationError) as err:
        m.ensure("file", dict(_file(str(tmp_path / "b")), bogus=1))
    assert "file#" in str(err.value) and "bogus" in str(err.value)
    assert not (tmp_path / "b").exists()
    assert m.session.transaction_events() == []


def test_status_goes_through_type_logic(tmp_path):
    m = kit.manager(log_level=None)
    target = tmp_path / "c.txt"
    target.write_text("abc")
    state = m.status("file", str(target))
    assert state.ensure == "present" and state.name == str(target)
    assert m.status("file", str(tmp_path / "missing")).ensure == "absent"


def test_apply_loads_and_executes_a_manifest(tmp_path):
    target = tmp_path / "out.txt"
    manifest = tmp_path / "m.yaml"
    spec = _file(str(target), "from manifest")
    name = spec.pop("name")
    manifest.write_text(json.dumps({"ccm": {"resources": [{"file": [{name: spec}]}]}}))
    m = kit.manager(log_level=None)
    result = m.apply(str(manifest), noop=True)
    assert not result.failed and not target.exists()   # noop for this run only
    assert m.noop is False
    result = m.apply(str(manifest))
    assert result.changed and target.read_text() == "from manifest"


def test_apply_rejects_before_running(tmp_path):
    manifest = tmp_path / "bad.yaml"
    manifest.write_text("ccm:\n  resources:\n    - file:\n        - /x:\n            nope: 1\n")
    with pytest.raises(ManifestError):
        kit.manager(log_level=None).apply(str(manifest))


def test_child_shares_collaborators_and_owns_run_settings():
    m = kit.manager(log_level=None, data={"a": 1})
    log = m.user_log.bind(worker="w")
    kid = m.child(noop=True, working_dir="/tmp", user_log=log)
    for attr in ("runner", "registry", "metrics", "session", "environ", "publisher"):
        assert getattr(kid, attr) is getattr(m, attr), attr
    assert kid.facts() is m.facts()
    assert (kid.noop, kid.working_dir, kid.user_log) == (True, "/tmp", log)
    assert (m.noop, m.working_dir) == (False, None) and m.user_log is not log
    kid.set_data({"b": 2})
    assert m.data() == {"a": 1} and kid.data() == {"b": 2}


def test_refresh_facts_regathers_for_the_whole_family(monkeypatch):
    calls = []

    def gather():
        calls.append(1)
        return {"n": len(calls)}

    monkeypatch.setattr("ccm.facts.gather", gather)
    m = Manager(environ={})
    kid = m.child()
    assert m.facts() == {"n": 1} and kid.facts() == {"n": 1}
    view = m.facts_view()
    assert view["n"] == 1
    kid.refresh_facts()
    assert m.facts() == {"n": 2} and len(calls) == 2
    assert m.facts_view()["n"] == 2
    given = Manager(environ={}, facts={"fixed": True})
    given.refresh_facts()
    assert given.facts() == {"fixed": True}


def test_facts_gathered_once_under_concurrency(monkeypatch):
    calls = []
    monkeypatch.setattr("ccm.facts.gather", lambda: calls.append(1) or {"x": 1})
    m = Manager(environ={})
    threads = [threading.Thread(target=m.child().facts) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1


def test_owner_lookups_last_one_run(tmp_path):
    me = pwd.getpwuid(os.getuid()).pw_name
    assert ownership.uid_for(me) == os.getuid()
    assert ownership._ids._maps["uid"].get(me) == os.getuid()
    kit.manager(log_level=None).ensure("file", _file(str(tmp_path / "d")))   # a new run starts: cache cleared
    assert ownership._ids._maps["uid"].get(me) in (None, os.getuid())
    ownership.clear_id_cache()
    assert ownership._ids._maps["uid"] == {}


def test_manager_satisfies_run_manager_contract():
    m = kit.manager(log_level=None)
    contract = [n for n in dir(RunManager) if not n.startswith("_")] + list(RunManager.__annotations__)
    missing = [n for n in contract if not hasattr(m, n)]
    assert not missing
