"""What the posix provider reports of a path (``FileObservation``) and what the file logic
decides from it: the documented metadata, and the decision a plain reading of that
metadata gives (names looked up as ``pwd``/``grp`` answer, modes as formatted)."""
from __future__ import annotations

import copy
import grp
import hashlib
import os
import pickle
import pwd
import stat
import threading

import pytest

from ccm.model.errors import ResourceError

from ccm.gocompat.rfc3339 import rfc3339
from ccm.model.errors import ValidationError
from ccm.model.resource import Plan
from ccm.registry import default_registry
from ccm.resources import properties as P
from ccm.resources.file import steady
from ccm.resources.file.logic import FileLogic, desired_mode
from ccm.resources.file.observation import FileObservation
from ccm.resources.file.posix import SOURCE_COMPARED, PosixFileProvider
from ccm.resources.ownership import clear_id_cache, format_mode

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name
SPEC = default_registry().spec("file")
DESIRED = b"setting = 1\n"
KINDS = ["same", "other", "longer", "empty", "directory", "fifo"]


class _Ctx:
    noop = False
    diff = False
    working_dir = None


@pytest.fixture(autouse=True, params=[True, False], ids=["steady", "plain"])
def twin(request, monkeypatch):
    """Every test here runs with the steady twin and with the plain one."""
    monkeypatch.setattr(steady, "ENABLED", request.param)
    clear_id_cache()
    yield request.param
    clear_id_cache()


def _props(**values):
    p = P.build(SPEC, values)
    P.validate(SPEC, p)
    return p


def _name(lookup, key: int) -> str:
    try:
        return str(lookup(key)[0])
    except KeyError:
        return str(key)


def _plain_metadata(path: str):
    """The documented metadata of ``path``, step by step (name, checksum, owner, group,
    mode, provider, mtime, size, extended)."""
    st = os.stat(path)
    meta = {"name": path}
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as fh:
            meta["checksum"] = hashlib.sha256(fh.read()).hexdigest()
    meta["owner"] = _name(pwd.getpwuid, st.st_uid)
    meta["group"] = _name(grp.getgrgid, st.st_gid)
    meta["mode"] = f"{st.st_mode & 0o777:04o}"
    meta["provider"] = "posix"
    meta["mtime"] = rfc3339(st.st_mtime_ns)
    if st.st_size:
        meta["size"] = st.st_size
    meta["extended"] = {}
    return meta


def _plain_id(name, lookup):
    if name.isascii() and name.isdigit():
        return int(name)
    try:
        return lookup(name)[2]
    except KeyError:
        return None


def _plain_decision(props, meta, ensure, desired_checksum):
    """``is_desired`` as the documented rule reads the metadata."""
    want = props.ensure
    if want == "absent":
        return (True, "") if ensure == "absent" else (False, f"file still exists (ensure={ensure})")
    if ensure != want:
        return False, f"ensure mismatch: state={ensure} requested={want}"
    if want != "directory" and desired_checksum and meta.get("checksum", "") != desired_checksum:
        return False, f"content checksum mismatch: state={meta.get('checksum', '')} requested={desired_checksum}"
    for key, lookup in (("owner", pwd.getpwnam), ("group", grp.getgrnam)):
        have, wanted = meta[key], props.get(key)
        if have != wanted and not (_plain_id(have, lookup) is not None
                                   and _plain_id(have, lookup) == _plain_id(wanted, lookup)):
            return False, f"{key} mismatch: state={have} requested={wanted}"
    wanted_mode = format_mode(desired_mode(props))
    if meta["mode"] != wanted_mode:
        return False, f"mode mismatch: state={meta['mode']} requested={wanted_mode}"
    return True, ""


def _file(tmp_path, kind, mode=0o644):
    path = tmp_path / "f"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes({"same": DESIRED, "other": b"other\n", "longer": DESIRED + b"!", "empty": b""}[kind])
    os.chmod(path, mode)
    return str(path)


# --- what status reports ------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("args", [(), (DESIRED,), (DESIRED, hashlib.sha256(DESIRED).hexdigest()),
                                  (None, hashlib.sha256(DESIRED).hexdigest())], ids=["plain", "bytes", "both", "sum"])
def test_status_reports_the_documented_metadata(tmp_path, twin, kind, args):
    path = _file(tmp_path, kind)
    want = _plain_metadata(path)
    for _ in range(2):   # the second time from remembered names and mode texts
        state = PosixFileProvider().status(path, *args)
        assert list(state.metadata.items()) == list(want.items())
        assert state.extra is state.extra
        assert (state.type, state.name, state.ensure) == ("file", path, "directory" if kind == "directory" else "present")
        assert state.same == (kind == "same" and args[:1] == (DESIRED,))


def test_status_of_a_missing_file(tmp_path):
    state = PosixFileProvider().status(str(tmp_path / "none"), DESIRED, owner=ME, group=MYGROUP)
    assert state.ensure == "absent" and state.stat is None
    assert list(state.metadata.items()) == [("name", str(tmp_path / "none")), ("provider", "posix"), ("extended", {}),
                                            ("owner", ""), ("group", ""), ("mode", ""), ("mtime", rfc3339(0))]


def test_status_names_the_owner_and_the_desired_ids(tmp_path):
    path = _file(tmp_path, "same")
    state = PosixFileProvider().status(path, DESIRED, owner=str(os.getuid()), group=MYGROUP)
    assert (state.owner, state.group) == (ME, MYGROUP) and (state.uid, state.gid) == (os.getuid(), os.getgid())
    state = PosixFileProvider().status(path, owner="ccm-no-such-user", group="")
    assert state.uid is None and state.gid is None


def test_a_state_serialises_shows_and_compares_as_the_plain_one(tmp_path):
    path = _file(tmp_path, "same")
    for read_first in (False, True):
        state = PosixFileProvider().status(path, DESIRED)
        plain = FileObservation(path, state.ensure, state.timestamp_ns, state.stat, state.owner, state.group,
                                state.checksum, state.same, state.desired_data, state.desired_sum, state.uid,
                                state.gid)
        if read_first:
            assert state.metadata
        assert repr(state) == repr(plain).replace("FileObservation(", type(state).__name__ + "(", 1)
        assert state._values() == plain._values()
        assert state.to_dict() == plain.to_dict() and list(state.to_dict()) == list(plain.to_dict())
        assert state.metadata == _plain_metadata(path)


def test_the_common_fields_are_the_defaults_and_can_be_set(tmp_path):
    from ccm.model.events import ResourceState

    state = PosixFileProvider().status(_file(tmp_path, "same"), DESIRED)
    fresh = ResourceState("file", "/x")
    fields = ("changed", "refreshed", "stable", "noop", "noop_message")
    assert [getattr(state, f) for f in fields] == [getattr(fresh, f) for f in fields]
    assert state.internal == {} and state.internal is state.internal
    state.stable = state.changed = True
    state.extra = {"metadata": {"replaced": 1}}
    assert state.metadata == {"replaced": 1} and state.stable and state.changed
    assert not PosixFileProvider().status(str(tmp_path / "f"), DESIRED).stable, "class defaults are not shared state"


def test_every_thread_reads_the_same_metadata_object(tmp_path):
    path = _file(tmp_path, "same")
    for _ in range(20):
        state = PosixFileProvider().status(path, DESIRED)
        seen = []
        barrier = threading.Barrier(8)

        def read(state=state, seen=seen, barrier=barrier):
            barrier.wait()
            seen.append(state.extra)

        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(e is seen[0] for e in seen)


def test_copies_and_pickles_keep_the_observation(tmp_path):
    state = PosixFileProvider().status(_file(tmp_path, "same"), DESIRED)
    for other in (copy.copy(state), copy.deepcopy(state), pickle.loads(pickle.dumps(state))):
        assert other.same and other.stat == state.stat
        assert other.to_dict() == state.to_dict() and other.metadata["checksum"] == hashlib.sha256(DESIRED).hexdigest()


# --- what the logic decides ----------------------------------------------------------------

OWNERS = [ME, str(os.getuid()), "ccm-no-such-user", str(os.getuid() + 1)]
GROUPS = [MYGROUP, str(os.getgid()), str(os.getgid() + 1)]


@pytest.mark.parametrize("ensure,content", [("present", "setting = 1\n"), ("present", None), ("directory", None),
                                            ("present", "")])
def test_decisions_are_the_plain_reading_of_the_metadata(tmp_path, ensure, content):
    """Every kind of file, owner, group and mode: the decision from the observed fields is
    the one the documented metadata gives."""
    paths = {}
    for kind in KINDS:
        (tmp_path / kind).mkdir()
        paths[kind] = _file(tmp_path / kind, kind)
    os.chmod(paths["other"], 0o600)
    logic = FileLogic()
    desired_sum = hashlib.sha256(content.encode()).hexdigest() if content is not None else ""
    for mode in ("0644", "644", "0600", "0755", 420, "0o644"):
        for owner in OWNERS:
            for group in GROUPS:
                for kind in KINDS:
                    values = {"name": paths[kind], "ensure": ensure, "owner": owner, "group": group, "mode": mode}
                    if content is not None:
                        values["content"] = content
                    props = _props(**values)
                    state = logic.status(PosixFileProvider(), props, _Ctx())
                    want = _plain_decision(props, _plain_metadata(paths[kind]), state.ensure, desired_sum)
                    assert logic.is_desired(props, state) == want, values
                    if kind == "fifo" and ensure == "present" and content is not None and not want[0]:
                        with pytest.raises(ResourceError, match="is not a regular file"):
                            logic.plan(props, state)   # never replaced by a regular file (issue 24)
                    elif kind != "directory" or ensure == "directory":
                        assert logic.plan(props, state).stable == want[0], values


@pytest.mark.parametrize("wanted", [DESIRED, b"", b"y" * 70000], ids=["small", "empty", "large"])
def test_a_source_file_is_decided_from_its_checksum(tmp_path, wanted):
    """A small source is handed to status as bytes (the file compared, not hashed), a large
    one as its digest only: the decision is the plain one either way."""
    src = tmp_path / "src"
    src.write_bytes(wanted)
    logic = FileLogic()
    for have in (wanted, b"other\n", wanted + b"!"):
        path = tmp_path / "f"
        path.write_bytes(have)
        os.chmod(path, 0o644)
        props = _props(name=str(path), ensure="present", source=str(src), owner=ME, group=MYGROUP, mode="0644")
        state = logic.status(PosixFileProvider(), props, _Ctx())
        want = _plain_decision(props, _plain_metadata(str(path)), "present", hashlib.sha256(wanted).hexdigest())
        assert logic.is_desired(props, state) == want
        assert want[0] == (have == wanted) and state.same == (have == wanted and len(wanted) < SOURCE_COMPARED)


def test_a_staged_file_is_decided_as_from_its_metadata(tmp_path):
    """During a write batch ``status`` reports the staged file with its checksum: the
    decision compares it with the desired bytes' digest."""
    from tests.engine.test_first_run_files_in_place_before_reported import _staged_batch

    provider, batch = _staged_batch(tmp_path, 3)
    logic = FileLogic()
    for i in range(3):
        path = str(tmp_path / f"f{i}")
        for content, mode in ((f"new {i}", "0640"), (f"old {i}", "0640"), (f"new {i}", "0644")):
            props = _props(name=path, ensure="present", content=content, owner=ME, group=MYGROUP, mode=mode)
            state = logic.status(provider, props, _Ctx())
            assert isinstance(state.checksum, str) and not state.same
            assert logic.is_desired(props, state)[0] == (content == f"new {i}" and mode == "0640")
    batch.commit(False)


def test_a_forgotten_lookup_is_asked_again(tmp_path):
    """Lookups go with the run that made them: after ``clear_id_cache`` the names and ids
    are looked up again, and the decision is the same."""
    from ccm.resources import ownership

    path = _file(tmp_path, "same")
    props = _props(name=path, ensure="present", content="setting = 1\n", owner=ME, group=MYGROUP, mode="0644")
    logic = FileLogic()
    assert logic.is_desired(props, logic.status(PosixFileProvider(), props, _Ctx())) == (True, "")
    clear_id_cache()
    assert ownership._ids.user == {} and ownership._ids.uid == {}
    assert logic.is_desired(props, logic.status(PosixFileProvider(), props, _Ctx())) == (True, "")
    assert ownership._ids.user and ownership._ids.uid


@pytest.mark.parametrize("size", [0, 1, 4096, (1 << 16) - 1, 1 << 16, (1 << 20) - 1, 1 << 20, (1 << 20) + 7, 3 << 20])
def test_the_source_checksum_is_the_digest_of_its_bytes(tmp_path, size):
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    (tmp_path / "src").write_bytes(data)
    assert PosixFileProvider().read_source("src", str(tmp_path)) == \
        (data if size < SOURCE_COMPARED else None, hashlib.sha256(data).hexdigest())


# --- modes ----------------------------------------------------------------------------------

MODES = ["0644", "644", "0o755", "0O600", "0", "777", 644, 0o644, 600, "0400", " 644 "]


@pytest.mark.parametrize("ensure", ["present", "directory"])
def test_the_mode_reason_names_the_formatted_desired_mode(tmp_path, ensure):
    path = tmp_path / "x"
    path.mkdir() if ensure == "directory" else path.write_bytes(b"")
    os.chmod(path, 0o711)   # no mode below equals it
    logic = FileLogic()
    for mode in MODES:
        props = _props(name=str(path), ensure=ensure, mode=mode, owner=ME, group=MYGROUP)
        state = logic.status(PosixFileProvider(), props, _Ctx())
        assert logic.is_desired(props, state) == (False, f"mode mismatch: state=0711 requested="
                                                         f"{format_mode(desired_mode(props))}"), mode


@pytest.mark.parametrize("mode", [True, "abc", "1000", ["644"], None])
def test_an_invalid_mode_is_rejected_as_desired_mode_rejects_it(tmp_path, mode):
    from ccm.model.resource import Properties

    path = tmp_path / "x"
    path.write_bytes(b"")
    props = Properties("file", {"name": str(path), "ensure": "present", "mode": mode, "owner": ME, "group": MYGROUP},
                       SPEC.all_fields)
    logic = FileLogic()
    with pytest.raises(ValidationError) as plain:
        desired_mode(props)
    state = logic.status(PosixFileProvider(), props, _Ctx())
    for _ in range(2):
        with pytest.raises(ValidationError) as decided:
            logic.is_desired(props, state)
        assert str(decided.value) == str(plain.value)


def test_a_stable_plan_equals_a_fresh_empty_plan(tmp_path):
    path = _file(tmp_path, "same")
    props = _props(name=path, ensure="present", content="setting = 1\n", owner=ME, group=MYGROUP, mode="0644")
    logic = FileLogic()
    plans = [logic.plan(props, logic.status(PosixFileProvider(), props, _Ctx())) for _ in range(2)]
    assert plans[0] == Plan() == plans[1]
    assert plans[0].stable and plans[0].params == {} and not plans[0].refresh


@pytest.mark.parametrize("owner,group,mode,reason", [
    (str(os.getuid()), str(os.getgid()), "0644", ""),
    (str(os.getuid() + 1), str(os.getgid()), "0644", "owner mismatch: state={me} requested={uid1}"),
    (str(os.getuid()), str(os.getgid() + 1), "0644", "group mismatch: state={mine} requested={gid1}"),
    ("no-such-user-ccm", str(os.getgid()), "0644", "owner mismatch: state={me} requested=no-such-user-ccm"),
    (str(os.getuid()), str(os.getgid()), "0600", "mode mismatch: state=0644 requested=0600"),
    (str(os.getuid()), str(os.getgid()), 420, "mode mismatch: state=0644 requested=0420"),
])
def test_is_desired_answers_the_same_when_asked_again(tmp_path, owner, group, mode, reason):
    path = _file(tmp_path, "same")
    want = (not reason, reason.format(me=ME, mine=MYGROUP, uid1=os.getuid() + 1, gid1=os.getgid() + 1))
    props = _props(name=path, ensure="present", content="setting = 1\n", owner=owner, group=group, mode=mode)
    logic = FileLogic()
    for _ in range(3):   # later rounds from remembered lookups
        state = logic.status(PosixFileProvider(), props, _Ctx())
        assert logic.is_desired(props, state) == want
