"""Archive validation messages and the pure decision logic (table-driven, no I/O)."""
from __future__ import annotations

import pytest

from ccm.model.errors import ValidationError
from ccm.model.events import ResourceState
from ccm.registry import Registry
from ccm.resources import BUILTIN_TYPES
from ccm.resources import properties as P
from ccm.resources.archive.logic import ArchiveLogic

SPEC = Registry(BUILTIN_TYPES).spec("archive")
SUM = "a" * 64
BASE = {"name": "/opt/app.tar.gz", "ensure": "present", "url": "https://example.com/dl/app.tar.gz",
        "owner": "root", "group": "root"}


def props(**kw):
    raw = dict(BASE)
    raw.update(kw)
    for k in [k for k, v in raw.items() if v is None]:
        del raw[k]
    p = P.build(SPEC, raw)
    P.validate(SPEC, p)
    return p


@pytest.mark.parametrize("override,message", [
    ({"url": ""}, "url cannot be empty"),
    ({"url": "example.com/app.tar.gz"}, "url must be absolute (include scheme like http:// or https://)"),
    ({"url": "http://h:badport/app.tar.gz"}, "invalid url:"),
    ({"url": "https://example.com/"}, "url must have a filename in the path"),
    ({"url": "https://example.com/app.rar"}, "url filename must end in .zip, .tar.gz, .tgz, or .tar"),
    ({"url": "ftp://example.com/app.tar.gz"}, "url scheme must be http or https"),
    ({"name": "/opt/app.rar"}, "name must end in .zip, .tar.gz, .tgz, or .tar"),
    ({"name": "/opt/app.zip"}, "url and name must have the same archive type: url is tar.gz, name is zip"),
    ({"name": "opt/app.tar.gz"}, "file path must be absolute"),
    ({"name": "/opt/../app.tar.gz"}, "file path must be absolute"),
    ({"ensure": "latest"}, 'invalid ensure value: must be one of "present" or "absent"'),
    ({"cleanup": True, "creates": "/opt/app/bin"}, "cleanup requires extract_parent to be set"),
    ({"cleanup": True, "extract_parent": "/opt"}, "cleanup requires creates to be set"),
    ({"creates": "rel/x"}, "creates path must be absolute"),
    ({"extract_parent": "/opt/./x"}, "extract_parent path must be absolute"),
    ({"owner": None}, "owner cannot be empty"),
    ({"group": None}, "group cannot be empty"),
    ({"checksum": "abc"}, "checksum must be a hex encoded sha256"),
    ({"bogus": 1}, "unknown property 'bogus'"),
])
def test_validation(override, message):
    with pytest.raises(ValidationError) as exc:
        props(**override)
    assert message in str(exc.value)
    assert "archive#" in str(exc.value)


def test_valid_variants():
    props(url="https://example.com/x/APP.TGZ", name="/opt/app.tar.gz")  # same type, case-insensitive
    props(url="http://example.com/a.zip", name="/opt/a.ZIP", ensure="absent")
    p = props(checksum=SUM.upper())
    assert p.get("checksum") == SUM  # normalised (upstream never converges on upper case)


def test_secrets_redacted_in_properties_dict():
    p = props(url="https://bob:s3cret@example.com/app.tar.gz", username="u", password="hunter2",
              headers={"Authorization": "Bearer tok123", "Accept": "x/y", "X-Api-Key": "k"})
    d = p.to_dict()
    text = repr(d)
    assert "s3cret" not in text and "hunter2" not in text and "tok123" not in text and "'k'" not in text
    assert d["url"] == "https://REDACTED@example.com/app.tar.gz"
    assert d["headers"]["Accept"] == "x/y"
    assert p.get("password") == "hunter2"  # the provider still gets the real value


def state(ensure="absent", **meta):
    m = {"name": "/opt/app.tar.gz"}
    m.update(meta)
    return ResourceState(type="archive", name="/opt/app.tar.gz", ensure=ensure, extra={"metadata": m})


L = ArchiveLogic()
PRESENT = dict(owner="root", group="root", checksum=SUM, archive_exists=True)


@pytest.mark.parametrize("kw,st,ok,reason", [
    ({}, state(), False, "archive file missing"),
    ({}, state("present", **PRESENT), True, ""),
    ({"checksum": SUM}, state("present", **dict(PRESENT, checksum="b" * 64)), False, "checksum mismatch"),
    ({}, state("present", **dict(PRESENT, owner="daemon")), False, "owner mismatch: state=daemon requested=root"),
    ({}, state("present", **dict(PRESENT, group="daemon")), False, "group mismatch"),
    ({"creates": "/opt/app/bin"}, state("present", **PRESENT), False, "creates path missing: /opt/app/bin"),
    ({"creates": "/opt/app/bin", "extract_parent": "/opt", "cleanup": True}, state(creates_exists=True), True, ""),
    ({"ensure": "absent"}, state(), True, ""),
    ({"ensure": "absent"}, state("present", **PRESENT), False, "archive still exists (ensure=present)"),
])
def test_is_desired(kw, st, ok, reason):
    got_ok, got_reason = L.is_desired(props(**kw), st)
    assert got_ok is ok
    assert reason in got_reason


@pytest.mark.parametrize("kw,st,actions,message", [
    ({}, state("present", **PRESENT), (), ""),
    ({}, state(), ("download",), "Would have downloaded"),
    ({"checksum": SUM}, state("present", **dict(PRESENT, checksum="b" * 64)), ("download",), "Would have downloaded"),
    ({"extract_parent": "/opt", "creates": "/opt/app"}, state(), ("download", "extract"),
     "Would have downloaded. Would have extracted"),
    ({"checksum": SUM, "extract_parent": "/opt", "creates": "/opt/app"}, state("present", **PRESENT),
     ("extract",), "Would have extracted"),
    # without a checksum every unstable run re-downloads
    ({"extract_parent": "/opt", "creates": "/opt/app"}, state("present", **PRESENT), ("download", "extract"),
     "Would have downloaded. Would have extracted"),
    ({"extract_parent": "/opt", "creates": "/opt/app", "cleanup": True}, state(),
     ("download", "extract", "cleanup"), "Would have downloaded. Would have extracted. Would have cleaned up"),
    ({"checksum": SUM}, state("present", **dict(PRESENT, owner="daemon")), ("chown",), "Would have updated ownership"),
    ({"ensure": "absent"}, state("present", **PRESENT), ("remove",), "Would have removed"),
])
def test_plan(kw, st, actions, message):
    plan = L.plan(props(**kw), st)
    assert plan.actions == actions
    assert plan.noop_message == message
