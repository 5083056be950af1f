"""Observations behind goss rules: /proc parsers on captured text, collectors on the
real host (files, a listening socket, this process, root, mounts, sysctl)."""
from __future__ import annotations

import os
import socket

import pytest

from ccm.healthcheck.goss import system

# Captured from a Linux 6.x host (`cat /proc/net/tcp`, `/proc/net/tcp6`), trimmed to 4 rows.
PROC_NET_TCP = """\
  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0 20 4 30 10 -1
   3: 0F02000A:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4 1 0 100 0 0 10 0
"""
PROC_NET_TCP6 = """\
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5 1 0 100 0 0 10 0
   1: 00000000000000000000000001000000:0277 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6 1 0 100 0 0 10 0
"""
PROC_NET_UDP = """\
   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  100: 3500007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000   101        0 7 2 0 0
"""


def test_parse_proc_net_tcp_keeps_only_listeners():
    assert system.parse_proc_net(PROC_NET_TCP, "tcp") == [("127.0.0.1", 8080), ("0.0.0.0", 22), ("10.0.2.15", 80)]


def test_parse_proc_net_tcp6_decodes_word_order():
    assert system.parse_proc_net(PROC_NET_TCP6, "tcp6") == [("::", 22), ("::1", 631)]


def test_parse_proc_net_udp_uses_unconnected_state():
    assert system.parse_proc_net(PROC_NET_UDP, "udp") == [("127.0.0.53", 53)]


def test_parse_port_ident():
    assert system.parse_port_ident("tcp6:443") == ("tcp6", 443)
    assert system.parse_port_ident("22") == ("tcp", 22)


MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
40 27 0:40 / /mnt/my\\040disk ro,nosuid - tmpfs tmp\\040fs rw,size=1024k
41 27 0:41 / /mnt/my\\040disk rw - xfs /dev/sdb1 rw
"""


def test_parse_mountinfo_unescapes_and_later_mounts_win():
    m = system.parse_mountinfo(MOUNTINFO)
    assert m["/"] == {"exists": True, "opts": ["rw", "relatime"], "source": "/dev/sda1", "filesystem": "ext4",
                      "vfs-opts": ["rw", "errors=remount-ro"]}
    assert m["/mnt/my disk"]["filesystem"] == "xfs"   # the over-mount
    assert m["/proc"]["source"] == "proc"


def test_file_state_real_files(tmp_path):
    f = tmp_path / "motd"
    f.write_text("hello\n")
    os.chmod(f, 0o640)
    link = tmp_path / "link"
    link.symlink_to(f)
    st = system.file_state(str(f))
    assert st["mode"] == "0640" and st["filetype"] == "file" and st["size"] == 6
    assert st["owner"] == "root" and st["uid"] == os.getuid()
    assert system.file_state(str(tmp_path))["filetype"] == "directory"
    lst = system.file_state(str(link))
    assert lst["filetype"] == "symlink" and lst["linked-to"] == str(f) and lst["mode"] == "0640"
    assert system.file_state(str(tmp_path / "missing")) is None
    assert system.file_digest(str(f), "sha256") == \
        "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"


def test_listening_ips_sees_a_real_socket():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    try:
        assert system.listening_ips("tcp", port) == []   # bound, not listening yet
        srv.listen(1)
        assert system.listening_ips("tcp", port) == ["127.0.0.1"]
    finally:
        srv.close()
    assert system.listening_ips("tcp", port) == []


def test_process_running_sees_this_process():
    with open("/proc/self/comm") as fh:
        comm = fh.read().strip()
    assert system.process_running(comm)
    assert not system.process_running("no-such-proc-x")


def test_users_groups_mounts_sysctl():
    root = system.user_state("root")
    assert root["uid"] == 0 and "root" in root["groups"] and root["home"]
    assert system.user_state("no-such-user-x") is None
    assert system.group_state("root") == {"exists": True, "gid": 0}
    assert system.group_state("no-such-group-x") is None
    m = system.mount_state("/")
    assert m["exists"] and 0 <= m["usage"] <= 100 and m["filesystem"]
    assert system.mount_state("/no/such/mount") is None
    assert system.kernel_param("kernel.ostype") == "Linux"
    with pytest.raises(FileNotFoundError):
        system.kernel_param("kernel.no_such_param")
