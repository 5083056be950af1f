"""The on-disk queue: where it lives, its bound, its modes, and the directories it refuses."""
from __future__ import annotations

import os
import stat

import pytest

from ccm.fleet.queue import MAGIC, QueueError, ReportQueue, queue_limit, state_dir


def test_state_dir_resolution(monkeypatch, tmp_path):
    assert state_dir({"CCM_STATE_DIR": str(tmp_path / "s")}) == str(tmp_path / "s")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert state_dir({}) == "/var/lib/ccm"
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert state_dir({"XDG_STATE_HOME": "/home/u/.st"}) == "/home/u/.st/ccm"
    assert state_dir({"HOME": "/home/u"}) == "/home/u/.local/state/ccm"
    assert queue_limit({"CCM_REPORT_QUEUE_MAX": "7"}) == 7 and queue_limit({"CCM_REPORT_QUEUE_MAX": "x"}) == 100


def test_oldest_first_bounded_with_a_counter_and_private_files(tmp_path):
    q = ReportQueue(str(tmp_path / "state"), limit=3)
    for i in range(5):
        dropped = q.add(f"choria.ccm.reports.a.b{i}", f"id{i}", b'{"n": %d}' % i)
        assert dropped == (1 if i >= 3 else 0)
    items = list(q.pending())
    assert [i.msg_id for i in items] == ["id2", "id3", "id4"]
    assert [i.body for i in items] == [b'{"n": 2}', b'{"n": 3}', b'{"n": 4}']
    assert q.dropped() == 2 and len(q) == 3
    for name in q.names():
        st = os.stat(os.path.join(q.path, name))
        assert stat.S_IMODE(st.st_mode) == 0o600
    assert stat.S_IMODE(os.stat(q.path).st_mode) == 0o700
    q.remove(items[0].name)
    assert [i.msg_id for i in q.pending()] == ["id3", "id4"]
    assert not [n for n in os.listdir(q.path) if n.endswith(".tmp")]


def test_malformed_files_are_dropped_and_counted(tmp_path):
    q = ReportQueue(str(tmp_path / "state"))
    q.add("s.a", "id", b"{}")
    with open(os.path.join(q.path, "00000000000000000001-junk.report"), "wb") as fh:
        fh.write(b"not a report")
    with open(os.path.join(q.path, "00000000000000000002-big.report"), "wb") as fh:
        fh.write(MAGIC + b"s\nid\n" + b"x" * (600 * 1024))
    os.symlink("/etc/passwd", os.path.join(q.path, "00000000000000000003-link.report"))
    assert [i.msg_id for i in q.pending()] == ["id"]
    assert q.dropped() == 3 and len(q) == 1


def test_a_directory_others_can_write_is_refused(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(state, 0o777)
    with pytest.raises(QueueError) as err:
        ReportQueue(str(state)).add("s", "i", b"x")
    assert "writable by other users" in str(err.value) and str(state) in str(err.value)
    os.chmod(state, 0o755)
    (state / "reports").mkdir(mode=0o700)
    os.chmod(state / "reports", 0o770)
    with pytest.raises(QueueError, match="reports is writable by other users"):
        ReportQueue(str(state)).add("s", "i", b"x")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand a directory to another user")
def test_root_refuses_a_state_dir_another_user_owns(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    os.chown(state, 65534, 65534)
    with pytest.raises(QueueError, match="belongs to uid 65534"):
        ReportQueue(str(state)).add("s", "i", b"x")
    assert not (state / "reports").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's symlink")
def test_another_users_symlink_on_the_way_is_not_followed(tmp_path):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "state"
    os.symlink(real, link)
    os.lchown(link, 65534, 65534)
    with pytest.raises(QueueError, match="refusing to follow symlink"):
        ReportQueue(str(link)).add("s", "i", b"x")
    assert not (real / "reports").exists()


def test_the_lock_serialises_runs(tmp_path, monkeypatch):
    from ccm.fleet import queue as qmod

    monkeypatch.setattr(qmod, "LOCK_WAIT", 0.2)
    q1, q2 = ReportQueue(str(tmp_path / "s")), ReportQueue(str(tmp_path / "s"))
    with q1.locked():
        with pytest.raises(QueueError, match="locked by another ccm run"):
            with q2.locked():
                pass
    with q2.locked():
        pass
