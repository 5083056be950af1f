"""A real systemd as PID 1, in a ``systemd-nspawn`` container, for the service tests.

What: ``Container(root)`` boots a minbase root that includes systemd, dbus and python3
(``tests/hosts/roots.py``, flavour ``systemd``, cached under ``build/hosts``) with
``--boot --register=no --keep-unit --volatile=overlay`` (every write lands in a tmpfs:
the cached root is never changed), in a cgroup of its own below the hybrid hierarchy's
roots, and enters it with ``nsenter``. ``stop()`` halts it and removes its cgroups.
Never ``unshare`` + ``chroot``: systemd would write cgroups at the roots of the host's
hierarchies. Recipe: ``../shared/recipes/systemd-nspawn.sh``.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Dict, List, Optional, Sequence

CGROUP_HIERARCHIES = ("/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified")
CHILD_ENV: Dict[str, str] = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin",
                             "LANG": "C", "LC_ALL": "C"}


def children(pid: int) -> List[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


class Container:
    def __init__(self, root: str, name: str, log_dir: str, binds: Sequence[str] = ()):
        self.root, self.name, self.binds = root, name, list(binds)
        self.console = os.path.join(log_dir, f"console-{name}.log")
        self.proc: Optional["subprocess.Popen[bytes]"] = None
        self.leader = 0

    def _cgroups(self) -> List[str]:
        hierarchies = [h for h in CGROUP_HIERARCHIES if os.path.isdir(h)]
        if not hierarchies and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            hierarchies = ["/sys/fs/cgroup"]   # a pure cgroup2 host
        return [os.path.join(h, f"ccm-{self.name}") for h in hierarchies]

    def _enter_own_cgroup(self) -> None:   # runs in the child before exec
        for cg in self._cgroups():
            with open(os.path.join(cg, "cgroup.procs"), "w") as fh:
                fh.write(str(os.getpid()))

    def boot(self, timeout: float = 60.0) -> "Container":
        for cg in self._cgroups():
            os.makedirs(cg, exist_ok=True)
        argv = ["systemd-nspawn", "--quiet", "--boot", "--register=no", "--keep-unit", "--console=pipe",
                "--private-network", "--volatile=overlay", f"--machine={self.name}", "-D", self.root]
        argv += [f"--bind-ro={b}" for b in self.binds]
        with open(self.console, "wb") as out:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         preexec_fn=self._enter_own_cgroup)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"systemd-nspawn exited {self.proc.returncode}: {self.console_text()}")
            kids = children(self.proc.pid)
            if kids and os.path.exists(f"/proc/{kids[0]}/root/run/systemd/private"):
                self.leader = kids[0]
                break
            time.sleep(0.05)
        else:
            self.stop()
            raise RuntimeError(f"container {self.name} did not come up: {self.console_text()}")
        state = self.run(["systemctl", "is-system-running", "--wait"], timeout=timeout).stdout.strip()
        if state not in ("running", "degraded"):
            self.stop()
            raise RuntimeError(f"container {self.name} state {state!r}")
        return self

    def console_text(self) -> str:
        try:
            with open(self.console, errors="replace") as fh:
                return fh.read()[-2000:]
        except OSError:
            return ""

    def prefix(self) -> List[str]:
        return ["nsenter", "--target", str(self.leader), "--mount", "--uts", "--ipc", "--net", "--pid",
                "--cgroup", "--"]

    def run(self, argv: Sequence[str], timeout: float = 120.0, env: Optional[Dict[str, str]] = None,
            input: Optional[str] = None) -> "subprocess.CompletedProcess[str]":
        """``argv`` inside the container, in the runner's environment (plus ``env``)."""
        full = dict(CHILD_ENV, **(env or {}))
        return subprocess.run(self.prefix() + ["env", "-i"] + [f"{k}={v}" for k, v in full.items()] + list(argv),
                              capture_output=True, text=True, timeout=timeout, cwd="/", input=input,
                              stdin=None if input is not None else subprocess.DEVNULL)

    def path(self, inside: str) -> str:
        """Where ``inside`` (an absolute path in the container) is reachable from the host."""
        return f"/proc/{self.leader}/root{inside}"

    def write(self, inside: str, content: str, mode: int = 0o644) -> None:
        host = self.path(inside)
        os.makedirs(os.path.dirname(host), exist_ok=True)
        with open(host, "w") as fh:
            fh.write(content)
        os.chmod(host, mode)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)   # nspawn forwards it as a halt request to PID 1
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for cg in self._cgroups():
            for dirpath, _dirs, _files in sorted(os.walk(cg), key=lambda w: -len(w[0])):
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass
        self.proc, self.leader = None, 0
