"""Minimal Debian roots for the host proofs, built with debootstrap and cached.

What: ``ensure_root(suite)`` returns ``build/hosts/<suite>``, a ``--variant=minbase
--include=python3`` root with one extra unprivileged user (``ccmuser``, uid 4242) whose
home directory does not exist. Built once, reused while its ``.ccm-root-ok`` marker is
there. A file lock keeps debootstrap runs one at a time (the machine is shared).
Not: a container runtime; the tests enter a root with ``unshare ... chroot``.

Run ``python tests/hosts/roots.py [suite ...]`` to build the roots ahead of the tests.
"""
from __future__ import annotations

import fcntl
import glob
import os
import re
import shutil
import subprocess
import sys
from typing import Dict, List

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOSTS_DIR = os.path.join(REPO, "build", "hosts")
# suite -> the CPython it ships. sid is opt-in (CCM_HOSTS_SUITES=...,sid): it proves the
# 3.14 wheels today, and will move on to 3.15 (then the guard refuses it, by design).
SUITES: Dict[str, str] = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13", "sid": "3.14"}
DEFAULT_SUITES = ("bullseye", "bookworm", "trixie")


def selected_suites() -> List[str]:
    wanted = os.environ.get("CCM_HOSTS_SUITES")
    return [s.strip() for s in wanted.split(",") if s.strip()] if wanted else list(DEFAULT_SUITES)
MARKER = ".ccm-root-ok"
USER, UID = "ccmuser", 4242
DEFAULT_MIRROR = "http://deb.debian.org/debian"


def apt_mirror() -> str:
    """The Debian mirror this machine's apt uses (CCM_DEBIAN_MIRROR overrides)."""
    env = os.environ.get("CCM_DEBIAN_MIRROR")
    if env:
        return env
    texts: List[str] = []
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*")):
        if path.endswith((".list", ".sources")) and os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as fh:
                texts.append(fh.read())
    for text in texts:
        for m in re.finditer(r"^(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(\S+)", text, re.M):
            uri = m.group(1).rstrip("/")
            if uri.endswith("/debian"):
                return uri
    return DEFAULT_MIRROR


# Extra flavours of a suite's root: name -> debootstrap --include additions.
# "systemd": a root that boots with systemd as PID 1 under systemd-nspawn (service tests).
FLAVOURS: Dict[str, str] = {"": "", "systemd": "systemd,dbus,"}


def root_path(suite: str, flavour: str = "") -> str:
    return os.path.join(HOSTS_DIR, f"{suite}-{flavour}" if flavour else suite)


def is_ready(suite: str, flavour: str = "") -> bool:
    return os.path.exists(os.path.join(root_path(suite, flavour), MARKER))


def _add_user(root: str) -> None:
    """An unprivileged user whose home directory does not exist (like many service users)."""
    entries = {
        "etc/passwd": f"{USER}:x:{UID}:{UID}::/home/{USER}:/bin/sh\n",
        "etc/group": f"{USER}:x:{UID}:\n",
        "etc/shadow": f"{USER}:!:19000::::::\n",
    }
    for rel, line in entries.items():
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8") as fh:
            if any(ln.startswith(USER + ":") for ln in fh):
                continue
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line)


def ensure_root(suite: str, log=sys.stderr, flavour: str = "") -> str:
    """Build (once) and return the root for ``suite``; raises CalledProcessError on failure."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}")
    if flavour not in FLAVOURS:
        raise ValueError(f"unknown root flavour {flavour!r}")
    dest = root_path(suite, flavour)
    if is_ready(suite, flavour):
        return dest
    os.makedirs(HOSTS_DIR, exist_ok=True)
    with open(os.path.join(HOSTS_DIR, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one debootstrap at a time, also across processes
        if is_ready(suite, flavour):
            return dest
        tmp = dest + ".partial"
        for stale in (tmp, dest):
            if os.path.exists(stale):
                subprocess.run(["umount", "-R", os.path.join(stale, "proc")],
                               stderr=subprocess.DEVNULL, check=False)
                shutil.rmtree(stale)
        cmd = ["debootstrap", "--variant=minbase", f"--include={FLAVOURS[flavour]}python3", suite, tmp,
               apt_mirror()]
        print("+ " + " ".join(cmd), file=log, flush=True)
        subprocess.run(cmd, check=True, stdout=log, stderr=log)
        subprocess.run(["chroot", tmp, "apt-get", "clean"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _add_user(tmp)
        os.rename(tmp, dest)
        with open(os.path.join(dest, MARKER), "w") as fh:
            fh.write(f"{suite}{'-' + flavour if flavour else ''} python{SUITES[suite]} mirror={apt_mirror()}\n")
    return dest


def ensure_foreign_root(suite: str, arch: str, log=sys.stderr) -> str:
    """A root for another architecture, run with qemu-user (``qemu-<arch>-static -L ROOT``).

    Only debootstrap's first stage (``--foreign``) runs, which needs no emulation; the
    python3 packages it downloaded are then unpacked with ``dpkg-deb -x`` (no maintainer
    scripts: enough for an interpreter and its standard library).
    """
    dest = os.path.join(HOSTS_DIR, f"{suite}-{arch}")
    if os.path.exists(os.path.join(dest, MARKER)):
        return dest
    os.makedirs(HOSTS_DIR, exist_ok=True)
    with open(os.path.join(HOSTS_DIR, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(dest, MARKER)):
            return dest
        tmp = dest + ".partial"
        for stale in (tmp, dest):
            shutil.rmtree(stale, ignore_errors=True)
        cmd = ["debootstrap", f"--arch={arch}", "--foreign", "--variant=minbase",
               "--include=python3", suite, tmp, apt_mirror()]
        print("+ " + " ".join(cmd), file=log, flush=True)
        subprocess.run(cmd, check=True, stdout=log, stderr=log)
        for deb in sorted(glob.glob(os.path.join(tmp, "var/cache/apt/archives/*.deb"))):
            subprocess.run(["dpkg-deb", "-x", deb, tmp], check=True)
        os.rename(tmp, dest)
        with open(os.path.join(dest, MARKER), "w") as fh:
            fh.write(f"{suite} {arch} (foreign, unpacked) mirror={apt_mirror()}\n")
    return dest


if __name__ == "__main__":
    for s in sys.argv[1:] or selected_suites():
        print(ensure_root(s))
