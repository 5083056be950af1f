"""Local system observations for goss rules: files, ports, processes, users, groups,
mounts and kernel parameters, read from the filesystem and /proc.

Guarantees: read-only; parsers (``parse_proc_net``, ``parse_mountinfo``) are pure and
take text; collectors take a ``proc_root`` so tests can point them at a copy.
Not: anything that needs a provider or the network (``evaluate.py``, ``network.py``).
"""
from __future__ import annotations

import grp
import hashlib
import os
import pwd
import socket
import stat

from ccm.typing_guard import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

_FILETYPES = (
    (stat.S_ISLNK, "symlink"), (stat.S_ISREG, "file"), (stat.S_ISDIR, "directory"),
    (stat.S_ISSOCK, "socket"), (stat.S_ISFIFO, "pipe"), (stat.S_ISBLK, "block-device"),
    (stat.S_ISCHR, "character-device"),
)


# --- files -------------------------------------------------------------------------

def filetype(mode: int) -> str:
    for test, name in _FILETYPES:
        if test(mode):
            return name
    return "unknown"


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def file_state(path: str) -> Optional[Dict[str, Any]]:
    """Observed goss file attributes, or None when nothing exists at ``path``.

    ``filetype`` and ``linked-to`` describe the path itself; the others follow links,
    like goss. Contents and checksums are read on demand (``file_contents``).
    """
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        return None
    try:
        st = os.stat(path)
    except OSError:  # dangling link: describe the link itself
        st = lst
    out: Dict[str, Any] = {
        "exists": True,
        "filetype": filetype(lst.st_mode),
        "mode": "%04o" % stat.S_IMODE(st.st_mode),
        "size": st.st_size,
        "owner": _user_name(st.st_uid),
        "uid": st.st_uid,
        "group": _group_name(st.st_gid),
        "gid": st.st_gid,
    }
    if stat.S_ISLNK(lst.st_mode):
        out["linked-to"] = os.readlink(path)
    return out


def file_contents(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", "replace")


def file_digest(path: str, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


# --- ports -------------------------------------------------------------------------

_TCP_LISTEN = "0A"
_UDP_UNCONNECTED = "07"


def decode_proc_address(text: str) -> Tuple[str, int]:
    """``0100007F:1F90`` -> ("127.0.0.1", 8080); IPv6 addresses are four little-endian words."""
    addr, _, port = text.partition(":")
    raw = bytes.fromhex(addr)
    if len(raw) == 4:
        ip = socket.inet_ntop(socket.AF_INET, raw[::-1])
    else:
        words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
        ip = socket.inet_ntop(socket.AF_INET6, words)
    return ip, int(port, 16)


def parse_proc_net(text: str, proto: str) -> List[Tuple[str, int]]:
    """Listening sockets in a /proc/net/{tcp,tcp6,udp,udp6} table as (ip, port)."""
    wanted = _TCP_LISTEN if proto.startswith("tcp") else _UDP_UNCONNECTED
    out = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 4 or fields[3] != wanted:
            continue
        try:
            out.append(decode_proc_address(fields[1]))
        except ValueError:
            continue
    return out


def parse_port_ident(ident: str) -> Tuple[str, int]:
    proto, _, port = str(ident).rpartition(":")
    return proto or "tcp", int(port)


def listening_ips(proto: str, port: int, proc_root: str = "/proc") -> List[str]:
    try:
        with open(os.path.join(proc_root, "net", proto)) as fh:
            table = fh.read()
    except FileNotFoundError:  # no IPv6 on this host
        return []
    return sorted({ip for ip, p in parse_proc_net(table, proto) if p == port})


# --- processes -----------------------------------------------------------------------

def process_names(proc_root: str = "/proc") -> List[str]:
    names = []
    for entry in os.listdir(proc_root):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc_root, entry, "comm")) as fh:
                names.append(fh.read().rstrip("\n"))
        except OSError:  # exited meanwhile
            continue
    return names


def process_running(comm: str, proc_root: str = "/proc") -> bool:
    # The kernel keeps at most 15 characters of the executable name in comm.
    return comm[:15] in process_names(proc_root)


# --- users and groups ------------------------------------------------------------------

def user_state(name: str) -> Optional[Dict[str, Any]]:
    try:
        pw = pwd.getpwnam(name)
    except KeyError:
        return None
    groups = sorted({_group_name(g) for g in os.getgrouplist(pw.pw_name, pw.pw_gid)})
    return {"exists": True, "uid": pw.pw_uid, "gid": pw.pw_gid, "groups": groups,
            "home": pw.pw_dir, "shell": pw.pw_shell}


def group_state(name: str) -> Optional[Dict[str, Any]]:
    try:
        gr = grp.getgrnam(name)
    except KeyError:
        return None
    return {"exists": True, "gid": gr.gr_gid}


# --- mounts ----------------------------------------------------------------------------

def _unescape(text: str) -> str:
    """Mount tables escape space, tab, newline and backslash as octal (``\\040``)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and len(text[i + 1:i + 4]) == 3 and text[i + 1:i + 4].isdigit():
            out.append(chr(int(text[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> Dict[str, Dict[str, Any]]:
    """/proc/self/mountinfo -> mount point -> attributes (the last mount on a point wins)."""
    mounts: Dict[str, Dict[str, Any]] = {}
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        lf, rf = left.split(), right.split()
        if len(lf) < 6 or len(rf) < 3:
            continue
        point = _unescape(lf[4])
        mounts[point] = {"exists": True, "opts": lf[5].split(","), "source": _unescape(rf[1]),
                         "filesystem": rf[0], "vfs-opts": rf[2].split(",")}
    return mounts


def mount_state(point: str, proc_root: str = "/proc") -> Optional[Dict[str, Any]]:
    with open(os.path.join(proc_root, "self", "mountinfo")) as fh:
        info = parse_mountinfo(fh.read()).get(point.rstrip("/") or "/")
    if info is not None:
        try:
            vfs = os.statvfs(point)
            used = vfs.f_blocks - vfs.f_bfree
            total = used + vfs.f_bavail
            info["usage"] = int(used * 100 // total) if total else 0
        except OSError:
            info["usage"] = 0
    return info


# --- kernel parameters -----------------------------------------------------------------

def kernel_param(key: str, proc_root: str = "/proc") -> str:
    path = os.path.join(proc_root, "sys", *key.split("."))
    with open(path) as fh:
        return fh.read().strip()
