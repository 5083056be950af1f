"""The posix provider keeps its raw facts and makes the metadata on first read; the file
logic decides a file in its desired state from those facts (issue 16). Each shortcut
must give what the eager metadata and the decision from metadata give."""
from __future__ import annotations

import copy
import grp
import hashlib
import os
import pickle
import pwd
import threading

import pytest

from ccm.model.errors import ResourceError
from ccm.model.events import ResourceState
from ccm.registry import default_registry
from ccm.resources import properties as P
from ccm.resources.file import SAME
from ccm.resources.file.logic import FileLogic
from ccm.resources.file.posix import PosixFileProvider
from ccm.resources.ownership import clear_id_cache
from tests.resources.file.test_status_shortcuts import _plain_metadata

ME = pwd.getpwuid(os.getuid()).pw_name
MYGROUP = grp.getgrgid(os.getgid()).gr_name
SPEC = default_registry().spec("file")
DESIRED = b"setting = 1\n"


class _Ctx:
    noop = False
    working_dir = None


def _props(**values):
    p = P.build(SPEC, values)
    P.validate(SPEC, p)
    return p


def _eager(state: ResourceState) -> ResourceState:
    """The same state as a plain one: its metadata given, no raw facts (the decision then
    reads the metadata and the desired checksum, as every other state)."""
    plain = ResourceState(state.type, state.name, state.ensure, state.changed, state.refreshed, state.stable,
                          state.noop, state.noop_message, state.timestamp_ns, copy.deepcopy(state.extra))
    assert plain.raw is None
    return plain


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


@pytest.mark.parametrize("kind", ["same", "other", "longer", "empty", "directory", "fifo"])
@pytest.mark.parametrize("args", [(), (DESIRED,), (DESIRED, hashlib.sha256(DESIRED).hexdigest()),
                                  (None, hashlib.sha256(DESIRED).hexdigest())], ids=["plain", "bytes", "both", "sum"])
def test_metadata_made_on_first_read_is_the_plain_one(tmp_path, kind, args):
    path = _file(tmp_path, kind)
    state = PosixFileProvider().status(path, *args)
    assert state.raw is not None and "extra" not in vars(state), "nothing made before it is read"
    want = _plain_metadata(path)
    assert list(state.metadata.items()) == list(want.items())
    assert state.extra is state.extra, "made once, then an ordinary attribute"
    assert state.raw[1] is (SAME if kind == "same" and args[:2] == (DESIRED,) else state.raw[1])


def test_an_observed_state_equals_shows_and_serialises_as_the_eager_one(tmp_path):
    path = _file(tmp_path, "same")
    for read_first in (False, True):
        state = PosixFileProvider().status(path, DESIRED)
        plain = ResourceState("file", path, "present", timestamp_ns=state.timestamp_ns,
                              extra={"metadata": _plain_metadata(path)})
        if read_first:
            assert state.metadata
        assert repr(state) == repr(plain)
        assert state == plain and plain == state
        assert state.to_dict() == plain.to_dict() and list(state.to_dict()) == list(plain.to_dict())
        assert type(state) is ResourceState


def test_the_common_fields_of_an_observed_state_are_the_defaults_and_can_be_set(tmp_path):
    path = _file(tmp_path, "same")
    state = PosixFileProvider().status(path, DESIRED)
    plain = ResourceState("file", path, "present")
    assert [getattr(state, f) for f in ("changed", "refreshed", "stable", "noop", "noop_message")] == \
        [getattr(plain, f) for f in ("changed", "refreshed", "stable", "noop", "noop_message")]
    assert state.internal == {} and state.internal is state.internal
    state.stable = state.changed = True
    state.extra = {"metadata": {"replaced": 1}}
    assert state.metadata == {"replaced": 1} and state.stable and state.changed
    assert not ResourceState("file", path).stable, "class defaults are not shared state"


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


def test_copies_and_pickles_keep_the_facts(tmp_path):
    path = _file(tmp_path, "same")
    state = PosixFileProvider().status(path, DESIRED)
    for other in (copy.copy(state), copy.deepcopy(state), pickle.loads(pickle.dumps(state))):
        assert other.raw[1] is SAME
        assert other == state and other.metadata["checksum"] == hashlib.sha256(DESIRED).hexdigest()


OWNERS = [ME, str(os.getuid()), "ccm-no-such-user", str(os.getuid() + 1)]
GROUPS = [MYGROUP, str(os.getgid()), str(os.getgid() + 1)]


KINDS = ["same", "other", "longer", "empty", "directory", "fifo"]


@pytest.mark.parametrize("ensure,content", [("present", "setting = 1\n"), ("present", None), ("directory", None),
                                            ("present", "")])
def test_is_desired_from_raw_facts_is_the_answer_from_metadata(tmp_path, ensure, content):
    """Every kind of file in one run: an answer remembered for one file must not carry
    over to another whose content or attributes differ."""
    paths = {}
    for kind in KINDS:
        (tmp_path / kind).mkdir()
        paths[kind] = _file(tmp_path / kind, kind)
    os.chmod(paths["other"], 0o600)
    logic = FileLogic()
    for mode in ("0644", "644", "0600", "0755", 420, "0o644"):
        for owner in OWNERS:
            for group in GROUPS:
                for _ in range(2):   # the second time from remembered answers
                    for kind in KINDS:
                        values = {"name": paths[kind], "ensure": ensure, "owner": owner, "group": group, "mode": mode}
                        if content is not None:
                            values["content"] = content
                        props = _props(**values)
                        state = logic.status(PosixFileProvider(), props, _Ctx())
                        plain = _eager(state)
                        if content is not None:
                            plain.internal["desired_checksum"] = hashlib.sha256(content.encode()).hexdigest()
                        assert logic.is_desired(props, state) == logic.is_desired(props, plain), values
                        if kind == "fifo" and ensure == "present" and content is not None:
                            for observed in (state, plain):   # never replaced by a regular file
                                with pytest.raises(ResourceError, match="is not a regular file"):
                                    logic.plan(props, observed)
                        elif kind != "directory" or ensure == "directory":
                            assert logic.plan(props, state) == logic.plan(props, plain), values
    clear_id_cache()


@pytest.mark.parametrize("wanted", [DESIRED, b"", b"y" * 70000], ids=["small", "empty", "large"])
def test_a_source_file_is_decided_from_its_checksum(tmp_path, wanted):
    """A small source is also handed to status as bytes (the file compared, not hashed),
    a large one as its digest only: the decision is the one from metadata either way."""
    src = tmp_path / "src"
    src.write_bytes(wanted)
    logic = FileLogic()
    for have in (wanted, b"other\n", wanted + b"!"):
        path = tmp_path / "f"
        path.write_bytes(have)
        os.chmod(path, 0o644)
        props = _props(name=str(path), ensure="present", source=str(src), owner=ME, group=MYGROUP, mode="0644")
        for _ in range(2):
            state = logic.status(PosixFileProvider(), props, _Ctx())
            plain = _eager(state)
            plain.internal["desired_checksum"] = hashlib.sha256(wanted).hexdigest()
            assert logic.is_desired(props, state) == logic.is_desired(props, plain)
            assert logic.is_desired(props, state)[0] == (have == wanted)


def test_a_forgotten_lookup_is_asked_again(tmp_path):
    """Remembered answers go with the lookups they came from (a new run may see other
    users): after ``clear_id_cache`` the decision is made from the metadata again."""
    path = _file(tmp_path, "same")
    props = _props(name=path, ensure="present", content="setting = 1\n", owner=str(os.getuid()),
                   group=str(os.getgid()), mode="0644")
    logic = FileLogic()
    state = logic.status(PosixFileProvider(), props, _Ctx())
    assert logic.is_desired(props, state) == (True, "")
    clear_id_cache()
    from ccm.resources import ownership

    assert ownership._ids.answers == {}
    state = logic.status(PosixFileProvider(), props, _Ctx())
    assert logic.is_desired(props, state) == (True, "")
    assert ownership._ids.answers


def test_a_steady_plan_reads_the_remembered_answer_itself(tmp_path, monkeypatch):
    """``plan`` reads ``is_desired``'s remembered answer with the same key (else a steady
    run would pay for ``is_desired`` on every file)."""
    path = _file(tmp_path, "same")
    props = _props(name=path, ensure="present", content="setting = 1\n", owner=ME, group=MYGROUP, mode="0644")
    logic = FileLogic()
    assert logic.plan(props, logic.status(PosixFileProvider(), props, _Ctx())).stable

    def no_call(*args, **kwargs):
        raise AssertionError("is_desired called")

    monkeypatch.setattr(logic, "is_desired", no_call)
    assert logic.plan(props, logic.status(PosixFileProvider(), props, _Ctx())).stable
    clear_id_cache()
    with pytest.raises(AssertionError, match="is_desired called"):
        logic.plan(props, logic.status(PosixFileProvider(), props, _Ctx()))


def test_a_staged_file_is_decided_as_from_its_metadata(tmp_path):
    """During a write batch ``status`` reports the staged file with its checksum: the
    decision from the raw facts compares it with the desired bytes' digest."""
    from tests.engine.test_write_batch import _staged_batch

    provider, batch = _staged_batch(tmp_path, 3)
    logic = FileLogic()
    for i in range(3):
        path = str(tmp_path / f"f{i}")
        for content, mode in ((f"new {i}", "0640"), (f"old {i}", "0640"), (f"new {i}", "0644")):
            props = _props(name=path, ensure="present", content=content, owner=ME, group=MYGROUP, mode=mode)
            for _ in range(2):
                state = logic.status(provider, props, _Ctx())
                assert isinstance(state.raw[1], str)
                plain = _eager(state)
                plain.internal["desired_checksum"] = hashlib.sha256(content.encode()).hexdigest()
                assert logic.is_desired(props, state) == logic.is_desired(props, plain)
                assert logic.is_desired(props, state)[0] == (content == f"new {i}" and mode == "0640")
    batch.commit(False)
    clear_id_cache()


def test_an_answer_found_before_a_clear_is_not_stored_after_it(tmp_path, monkeypatch):
    """A run starting in another thread (``clear_id_cache``) while a lookup or a decision
    is under way: what was found from the old lookups is not remembered into the new run."""
    from ccm.resources import ownership

    path = _file(tmp_path, "same")   # owner and group by the names found: a match by no lookup
    props = _props(name=path, ensure="present", content="setting = 1\n", owner=ME, group=MYGROUP, mode="0644")
    logic = FileLogic()
    clear_id_cache()
    decide = FileLogic._decide

    def decide_then_clear(self, props, state):
        answer = decide(self, props, state)
        clear_id_cache()
        return answer

    monkeypatch.setattr(FileLogic, "_decide", decide_then_clear)
    assert logic.is_desired(props, logic.status(PosixFileProvider(), props, _Ctx())) == (True, "")
    assert ownership._ids.answers == {}
    monkeypatch.setattr(FileLogic, "_decide", decide)
    assert logic.is_desired(props, logic.status(PosixFileProvider(), props, _Ctx())) == (True, "")
    assert ownership._ids.answers, "remembered when nothing cleared the lookups meanwhile"

    def user_of_then_clear(uid):
        name = pwd.getpwuid(uid).pw_name
        clear_id_cache()
        return name

    clear_id_cache()
    monkeypatch.setattr(ownership, "_user_of", user_of_then_clear)
    assert ownership.user_name(os.getuid()) == ME
    assert ownership._ids.user == {}
    clear_id_cache()


@pytest.mark.parametrize("size", [0, 1, 4096, (1 << 16) - 1, 1 << 16, (1 << 20) - 1, 1 << 20, (1 << 20) + 7, 3 << 20])
def test_the_source_checksum_is_the_digest_of_its_bytes(tmp_path, size):
    from ccm.resources.file.logic import source_checksum

    from ccm.resources.file.logic import SOURCE_COMPARED, source_bytes_and_checksum

    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    (tmp_path / "src").write_bytes(data)
    props = _props(name=str(tmp_path / "f"), ensure="present", source="src", owner=ME, group=MYGROUP, mode="0644")
    assert source_checksum(props, str(tmp_path)) == hashlib.sha256(data).hexdigest()
    assert source_bytes_and_checksum(props, str(tmp_path)) == \
        (data if size < SOURCE_COMPARED else None, hashlib.sha256(data).hexdigest())
